package session

import "testing"

// TestUpdateMovesKeysOntoVacatedKeys: UPDATE t SET id = id + 1 moves rows
// onto keys other rows of the same statement leave. Every row must survive,
// in the table and in the views on it.
func TestUpdateMovesKeysOntoVacatedKeys(t *testing.T) {
	p := startPlayground(t)
	c := connect(t, p)
	exec(t, c, "CREATE TABLE t (id int PRIMARY KEY, v int)")
	exec(t, c, "CREATE MATERIALIZED VIEW m AS SELECT * FROM t")
	exec(t, c, "CREATE MATERIALIZED VIEW n AS SELECT count(*) AS c, sum(v) AS s FROM t")
	exec(t, c, "INSERT INTO t VALUES (1, 10), (2, 20), (3, 30)")
	exec(t, c, "UPDATE t SET id = id + 1")
	exec(t, c, "UPDATE t SET id = 7 - id WHERE id >= 3") // 3 <-> 4 swap
	exec(t, c, "UPDATE t SET v = v + 1")                 // keys stay: update pairs
	want := []string{"2 11", "3 31", "4 21"}
	wantRows(t, c, "SELECT * FROM t ORDER BY id", want...)
	wantRows(t, c, "SELECT * FROM m ORDER BY id", want...)
	wantRows(t, c, "SELECT c, s FROM n", "3 63")
	if n := p.Engine.InconsistentOps(); n != 0 {
		t.Fatalf("%d inconsistent changes", n)
	}
}

// A key-moving UPDATE larger than one write batch is still one write (a
// crash between its deletes and its inserts would lose the rows).
func TestUpdateMovesManyKeys(t *testing.T) {
	p := startPlayground(t)
	c := connect(t, p)
	exec(t, c, "CREATE TABLE t (id int PRIMARY KEY, v int)")
	exec(t, c, "CREATE MATERIALIZED VIEW n AS SELECT count(*) AS c, sum(v) AS s, min(id) AS lo FROM t")
	exec(t, c, "INSERT INTO t SELECT g, g FROM generate_series(1, 5000) g")
	exec(t, c, "UPDATE t SET id = id + 1")
	wantRows(t, c, "SELECT count(*), sum(v), min(id), max(id) FROM t", "5000 12502500 2 5001")
	wantRows(t, c, "SELECT c, s, lo FROM n", "5000 12502500 2")
}

// TestUpdateOntoTakenKey: an UPDATE that moves a key onto a row it does
// not vacate, or two rows onto one key, is 23505 and changes nothing.
func TestUpdateOntoTakenKey(t *testing.T) {
	p := startPlayground(t)
	c := connect(t, p)
	exec(t, c, "CREATE TABLE t (id int PRIMARY KEY, v int)")
	exec(t, c, "INSERT INTO t VALUES (1, 10), (2, 20), (3, 30)")
	if pe := wantCode(t, c, "UPDATE t SET id = 2 WHERE id = 1", "23505"); pe.Detail != "Key (id)=(2) already exists." {
		t.Fatalf("detail %q", pe.Detail)
	}
	wantCode(t, c, "UPDATE t SET id = 9 WHERE id < 3", "23505")
	wantTag(t, c, "UPDATE t SET id = id + 1 WHERE id >= 2", "UPDATE 2") // 3 vacates for 2
	wantRows(t, c, "SELECT id, v FROM t ORDER BY id", "1 10", "3 20", "4 30")
}
