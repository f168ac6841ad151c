package session

import (
	"context"
	"testing"
	"time"
)

// TestTransactionBlocks: a block's writes are seen by its own statements,
// by no other session before COMMIT, by every session and view after it,
// and by nobody after ROLLBACK.
func TestTransactionBlocks(t *testing.T) {
	p := startPlayground(t)
	a, b := connect(t, p), connect(t, p)
	exec(t, a, "CREATE TABLE acct (id int PRIMARY KEY, bal int)")
	exec(t, a, "CREATE TABLE audit (note varchar)")
	exec(t, a, "CREATE MATERIALIZED VIEW total AS SELECT sum(bal) AS s, count(*) AS n FROM acct")
	exec(t, a, "INSERT INTO acct VALUES (1, 100), (2, 100)")

	exec(t, a, "BEGIN")
	wantTag(t, a, "UPDATE acct SET bal = bal - 30 WHERE id = 1", "UPDATE 1")
	wantTag(t, a, "UPDATE acct SET bal = bal + 30 WHERE id = 2", "UPDATE 1")
	wantTag(t, a, "INSERT INTO acct VALUES (3, 5)", "INSERT 0 1")
	wantTag(t, a, "UPDATE acct SET bal = bal + 1 WHERE id = 3", "UPDATE 1") // reads its own insert
	exec(t, a, "INSERT INTO audit VALUES ('moved 30')")
	wantRows(t, a, "SELECT id, bal FROM acct ORDER BY id", "1 70", "2 130", "3 6")
	wantRows(t, b, "SELECT id, bal FROM acct ORDER BY id", "1 100", "2 100")
	wantRows(t, b, "SELECT count(*) FROM audit", "0")
	wantTag(t, a, "COMMIT", "COMMIT")
	wantRows(t, b, "SELECT id, bal FROM acct ORDER BY id", "1 70", "2 130", "3 6")
	wantRows(t, b, "SELECT note FROM audit", "moved 30")
	wantRows(t, a, "SELECT s, n FROM total", "206 3")

	exec(t, a, "BEGIN")
	exec(t, a, "DELETE FROM acct")
	exec(t, a, "INSERT INTO audit VALUES ('gone')")
	wantRows(t, a, "SELECT count(*) FROM acct", "0")
	wantTag(t, a, "ROLLBACK", "ROLLBACK")
	wantRows(t, a, "SELECT count(*) FROM acct", "3")
	wantRows(t, b, "SELECT count(*) FROM audit", "1")
	wantRows(t, a, "SELECT s, n FROM total", "206 3")
}

// TestFailedBlock: after an error a block refuses statements with 25P02
// until it ends, and its COMMIT rolls back.
func TestFailedBlock(t *testing.T) {
	p := startPlayground(t)
	c := connect(t, p)
	exec(t, c, "CREATE TABLE t (id int PRIMARY KEY, v int NOT NULL)")
	exec(t, c, "BEGIN")
	exec(t, c, "INSERT INTO t VALUES (1, 1)")
	wantCode(t, c, "INSERT INTO t VALUES (2, NULL)", "23502")
	wantCode(t, c, "SELECT 1", "25P02")
	wantTag(t, c, "COMMIT", "ROLLBACK")
	wantRows(t, c, "SELECT count(*) FROM t", "0")
}

// TestBlockConflict: a block that needs a table another block is writing
// fails with 40001 instead of waiting (no two blocks wait for each other);
// a closed connection releases its block's tables and discards its writes.
func TestBlockConflict(t *testing.T) {
	p := startPlayground(t)
	a, b := connect(t, p), connect(t, p)
	exec(t, a, "CREATE TABLE x (id int PRIMARY KEY, v int)")
	exec(t, a, "CREATE TABLE y (id int PRIMARY KEY, v int)")
	exec(t, a, "BEGIN")
	exec(t, a, "INSERT INTO x VALUES (1, 1)")
	exec(t, b, "BEGIN")
	exec(t, b, "INSERT INTO y VALUES (1, 1)")
	wantCode(t, a, "INSERT INTO y VALUES (2, 2)", "40001")
	exec(t, a, "ROLLBACK")
	_ = b.Close(context.Background()) // drops b's block
	deadline := time.Now().Add(10 * time.Second)
	for {
		c := connect(t, p)
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		_, err := c.Exec(ctx, "INSERT INTO y VALUES (3, 3)")
		cancel()
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("y still locked after its block's connection closed: %v", err)
		}
	}
	wantRows(t, a, "SELECT id FROM y", "3")
}
