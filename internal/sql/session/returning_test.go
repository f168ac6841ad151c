package session

import (
	"context"
	"testing"
)

// TestReturning: INSERT (with ON CONFLICT), UPDATE and DELETE … RETURNING
// send the rows they wrote; an error in the list leaves the statement
// without effect.
func TestReturning(t *testing.T) {
	p := startPlayground(t)
	c := connect(t, p)
	exec(t, c, "CREATE TABLE t (id int PRIMARY KEY, name varchar)")
	wantRows(t, c, "INSERT INTO t VALUES (1, 'a'), (2, 'b') RETURNING id, upper(name) AS u", "1 A", "2 B")
	wantRows(t, c, "INSERT INTO t VALUES (2, 'x'), (3, 'c') ON CONFLICT (id) DO NOTHING RETURNING *", "3 c")
	wantRows(t, c, "INSERT INTO t AS o VALUES (3, 'y') ON CONFLICT (id) DO UPDATE SET name = o.name || excluded.name RETURNING o.id, name", "3 cy")
	wantRows(t, c, "UPDATE t SET name = 'z' WHERE id = 1 RETURNING id, name, id * 10", "1 z 10")
	wantRows(t, c, "DELETE FROM t WHERE id = 2 RETURNING *", "2 b")
	wantRows(t, c, "DELETE FROM t WHERE id = 99 RETURNING id")
	wantCode(t, c, "INSERT INTO t VALUES (4, 'd') RETURNING 1 / (id - 4)", "22012")
	wantCode(t, c, "UPDATE t SET name = 'w' RETURNING 1 / (id - 3)", "22012")
	wantCode(t, c, "INSERT INTO t VALUES (5, 'e') RETURNING nope", "42703")
	wantRows(t, c, "SELECT id, name FROM t ORDER BY id", "1 z", "3 cy")

	exec(t, c, "CREATE TABLE h (v int)")
	wantRows(t, c, "INSERT INTO h VALUES (5) RETURNING *, v * 2 AS twice", "5 10")

	var id int32
	if err := c.QueryRow(context.Background(), "INSERT INTO t VALUES ($1, $2) RETURNING id", 7, "g").Scan(&id); err != nil || id != 7 {
		t.Fatalf("prepared RETURNING: %d %v", id, err)
	}
	exec(t, c, "BEGIN")
	wantRows(t, c, "UPDATE t SET name = name || '!' WHERE id = 7 RETURNING name", "g!")
	exec(t, c, "ROLLBACK")
	wantRows(t, c, "SELECT name FROM t WHERE id = 7", "g")
}
