package session

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
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

// TestBlockConflict: blocks writing different rows of a table go on side
// by side; a block that changes a row another open block changed fails
// with 40001 instead of waiting (no two blocks wait for each other); a
// closed connection releases its block's rows and discards its writes.
func TestBlockConflict(t *testing.T) {
	p := startPlayground(t)
	a, b := connect(t, p), connect(t, p)
	exec(t, a, "CREATE TABLE x (id int PRIMARY KEY, v int)")
	exec(t, a, "CREATE TABLE y (id int PRIMARY KEY, v int)")
	exec(t, a, "INSERT INTO y VALUES (9, 0)")
	exec(t, a, "BEGIN")
	exec(t, a, "INSERT INTO x VALUES (1, 1)")
	exec(t, b, "BEGIN")
	exec(t, b, "INSERT INTO y VALUES (1, 1)")
	exec(t, b, "UPDATE y SET v = 5 WHERE id = 9")
	wantTag(t, a, "INSERT INTO y VALUES (2, 2)", "INSERT 0 1") // another row
	wantCode(t, a, "INSERT INTO y VALUES (1, 2)", "40001")     // b's new row
	exec(t, a, "ROLLBACK")
	exec(t, a, "BEGIN")
	wantCode(t, a, "UPDATE y SET v = 6 WHERE id = 9", "40001") // b's changed row
	exec(t, a, "ROLLBACK")
	_ = b.Close(context.Background()) // drops b's block
	deadline := time.Now().Add(10 * time.Second)
	for {
		c := connect(t, p)
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		_, err := c.Exec(ctx, "INSERT INTO y VALUES (1, 3)")
		cancel()
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("y's row still locked after its block's connection closed: %v", err)
		}
	}
	wantRows(t, a, "SELECT id, v FROM y ORDER BY id", "1 3", "9 0")
}

// TestStatementWaitsForRowLock: a single statement that changes a row an
// open block changed waits for the block to end and then applies to what
// the block left (no lost update), while the block's other rows, and
// other tables, stay writable; statement_timeout ends the wait.
func TestStatementWaitsForRowLock(t *testing.T) {
	p := startPlayground(t)
	a, b := connect(t, p), connect(t, p)
	exec(t, a, "CREATE TABLE acct (id int PRIMARY KEY, bal int)")
	exec(t, a, "INSERT INTO acct VALUES (1, 100), (2, 100)")
	for _, end := range []string{"COMMIT", "ROLLBACK"} {
		exec(t, a, "UPDATE acct SET bal = 100")
		exec(t, a, "BEGIN")
		exec(t, a, "UPDATE acct SET bal = bal + 10 WHERE id = 1")
		wantTag(t, b, "UPDATE acct SET bal = bal + 1 WHERE id = 2", "UPDATE 1") // not held
		exec(t, b, "SET statement_timeout = 100")
		wantCode(t, b, "UPDATE acct SET bal = bal + 1 WHERE id = 1", "57014")
		exec(t, b, "SET statement_timeout = 0")
		waited := make(chan error, 1)
		go func() {
			_, err := b.Exec(context.Background(), "UPDATE acct SET bal = bal + 1 WHERE id = 1")
			waited <- err
		}()
		select {
		case err := <-waited:
			t.Fatalf("the update did not wait for the block: %v", err)
		case <-time.After(100 * time.Millisecond):
		}
		exec(t, a, end)
		if err := <-waited; err != nil {
			t.Fatal(err)
		}
		want := "1 111"
		if end == "ROLLBACK" {
			want = "1 101"
		}
		wantRows(t, a, "SELECT id, bal FROM acct WHERE id = 1", want)
	}
}

// TestConcurrentBlockIncrements: blocks incrementing one row from many
// sessions, each retried on 40001 as a client would, and single
// statements doing the same lose no increment.
func TestConcurrentBlockIncrements(t *testing.T) {
	p := startPlayground(t)
	setup := connect(t, p)
	exec(t, setup, "CREATE TABLE c (id int PRIMARY KEY, v int)")
	exec(t, setup, "INSERT INTO c VALUES (1, 0)")
	const clients, each = 6, 15
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	errs := make(chan error, clients)
	for i := range clients {
		c := connect(t, p)
		go func() {
			for range each {
				if i%2 == 0 {
					_, err := c.Exec(ctx, "UPDATE c SET v = v + 1 WHERE id = 1")
					if err != nil {
						errs <- err
						return
					}
					continue
				}
				for {
					err := pgx.BeginFunc(ctx, c, func(tx pgx.Tx) error {
						_, err := tx.Exec(ctx, "UPDATE c SET v = v + 1 WHERE id = 1")
						return err
					})
					var pe *pgconn.PgError
					if errors.As(err, &pe) && pe.Code == "40001" {
						continue
					}
					if err != nil {
						errs <- err
						return
					}
					break
				}
			}
			errs <- nil
		}()
	}
	for range clients {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	wantRows(t, setup, "SELECT v FROM c", fmt.Sprint(clients*each))
}
