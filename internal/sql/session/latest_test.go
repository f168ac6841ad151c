package session

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/sluice-db/sluice/internal/engine"
)

// TestReadYourWrites: without implicit_flush, every statement on a table
// sees the writes acknowledged before it, at once.
func TestReadYourWrites(t *testing.T) {
	p := startPlayground(t)
	c := connect(t, p)
	exec(t, c, "CREATE TABLE t (id int PRIMARY KEY, v int)")
	exec(t, c, "CREATE TABLE n (v int)") // hidden row id
	exec(t, c, "INSERT INTO t VALUES (1, 1)")
	wantTag(t, c, "UPDATE t SET v = 2 WHERE id = 1", "UPDATE 1")
	for range 3 {
		wantTag(t, c, "UPDATE t SET v = v + 1 WHERE id = 1", "UPDATE 1")
	}
	wantRows(t, c, "SELECT v FROM t", "5")
	exec(t, c, "INSERT INTO n VALUES (1), (2), (3)")
	wantTag(t, c, "DELETE FROM n WHERE v = 2", "DELETE 1")
	wantTag(t, c, "UPDATE n SET v = v * 10", "UPDATE 2")
	wantRows(t, c, "SELECT v FROM n ORDER BY v", "10", "30")
	wantTag(t, c, "INSERT INTO n SELECT v + 1 FROM n", "INSERT 0 2")
	wantRows(t, c, "SELECT count(*), sum(v) FROM n", "4 82")
	// A second session sees the first one's writes too.
	c2 := connect(t, p)
	wantRows(t, c2, "SELECT v FROM t", "5")
}

// TestConcurrentIncrementsLoseNothing: many sessions incrementing the same
// row never lose an increment.
func TestConcurrentIncrementsLoseNothing(t *testing.T) {
	clients, each := 20, 25
	if testing.Short() {
		clients, each = 8, 10
	}
	p := startPlayground(t)
	c := connect(t, p)
	exec(t, c, "CREATE TABLE c (id int PRIMARY KEY, v int)")
	exec(t, c, "CREATE MATERIALIZED VIEW s AS SELECT sum(v) AS total FROM c")
	exec(t, c, "INSERT INTO c VALUES (1, 0)")
	var wg sync.WaitGroup
	errs := make(chan error, clients)
	for range clients {
		cc := connect(t, p)
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			for range each {
				tag, err := cc.Exec(ctx, "UPDATE c SET v = v + 1 WHERE id = 1")
				if err == nil && tag.String() != "UPDATE 1" {
					err = fmt.Errorf("tag %q", tag)
				}
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	want := fmt.Sprint(clients * each)
	wantRows(t, c, "SELECT v FROM c", want)
	exec(t, c, "FLUSH")
	wantRows(t, c, "SELECT total FROM s", want)
}

// TestViewReadsOwnWrites: with barriers far apart, a SELECT of a view right
// after a write asks for the barrier that covers it, includes the write,
// and says in a NOTICE what it waited for; a second SELECT does not wait.
func TestViewReadsOwnWrites(t *testing.T) {
	p := startPlaygroundWith(t, engine.Options{BarrierInterval: time.Hour, Parallelism: 2, ChunkSize: 64})
	var notices []string
	c := connectWith(t, p, func(n *pgconn.Notice) { notices = append(notices, n.Message) })
	exec(t, c, "CREATE TABLE t (id int PRIMARY KEY, v int)")
	exec(t, c, "CREATE MATERIALIZED VIEW s AS SELECT count(*) AS n, sum(v) AS total FROM t")
	exec(t, c, "INSERT INTO t VALUES (1, 10), (2, 20)")
	wantRows(t, c, "SELECT n, total FROM s", "2 30")
	if len(notices) != 1 || !strings.Contains(notices[0], "this session's writes") {
		t.Fatalf("notices %q, want one about the wait", notices)
	}
	wantRows(t, c, "SELECT n, total FROM s", "2 30")
	if len(notices) != 1 {
		t.Fatalf("second SELECT waited again: %q", notices)
	}
	exec(t, c, "UPDATE t SET v = v + 1")
	wantRows(t, c, "SELECT * FROM t ORDER BY id", "1 11", "2 21") // no wait for a table
	if len(notices) != 1 {
		t.Fatalf("a table read waited: %q", notices)
	}
	wantRows(t, c, "SELECT n, total FROM s", "2 32")
}

// TestWritesDuringStall: while a join with huge amplification holds every
// barrier, statements on another table still read its latest state at
// once, and an implicit_flush write that times out waiting for the views is
// reported as done (it is durable), with a WARNING, never as 57014.
func TestWritesDuringStall(t *testing.T) {
	p := startPlayground(t)
	var notices []string
	c := connectWith(t, p, func(n *pgconn.Notice) { notices = append(notices, n.Severity+": "+n.Message) })
	exec(t, c, "CREATE TABLE t (k int, v int)")
	exec(t, c, "CREATE TABLE u (id int PRIMARY KEY, v int)")
	exec(t, c, "CREATE MATERIALIZED VIEW amp AS SELECT a.v AS av, b.v AS bv FROM t a JOIN t b ON a.k = b.k")
	exec(t, c, "INSERT INTO t SELECT 1, g FROM generate_series(1, 20000) AS g") // 4e8 join rows
	t.Cleanup(func() { exec(t, c, "DROP MATERIALIZED VIEW amp") })
	start := time.Now()
	exec(t, c, "INSERT INTO u VALUES (1, 0)")
	for range 3 {
		wantTag(t, c, "UPDATE u SET v = v + 1 WHERE id = 1", "UPDATE 1")
	}
	wantRows(t, c, "SELECT v FROM u", "3")
	if took := time.Since(start); took > 5*time.Second {
		t.Fatalf("five statements took %v during the stall", took)
	}
	exec(t, c, "SET implicit_flush = true")
	exec(t, c, "SET statement_timeout = 200")
	wantTag(t, c, "INSERT INTO u VALUES (2, 20)", "INSERT 0 1")
	if len(notices) == 0 || !strings.Contains(notices[len(notices)-1], "WARNING: the write is durable") {
		t.Fatalf("notices %q, want a WARNING that the write is durable", notices)
	}
	exec(t, c, "SET implicit_flush = false")
	wantRows(t, c, "SELECT id, v FROM u ORDER BY id", "1 3", "2 20")
}

// TestRestartKeepsLatestState: writes the committed epoch does not cover
// yet are read back after a restart (the log beyond the committed position
// is replayed into the tables' latest state), with barriers far apart.
func TestRestartKeepsLatestState(t *testing.T) {
	dir := t.TempDir()
	opts := engine.Options{Dir: dir, BarrierInterval: time.Hour, Parallelism: 2, ChunkSize: 64}
	p := startPlaygroundWith(t, opts)
	c := connect(t, p)
	exec(t, c, "CREATE TABLE t (id int PRIMARY KEY, v int)")
	exec(t, c, "INSERT INTO t VALUES (1, 1), (2, 2), (3, 3)")
	exec(t, c, "UPDATE t SET v = v * 10 WHERE id >= 2")
	exec(t, c, "DELETE FROM t WHERE id = 1")
	_ = c.Close(context.Background())
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	p = startPlaygroundWith(t, opts)
	c = connect(t, p)
	wantRows(t, c, "SELECT id, v FROM t ORDER BY id", "2 20", "3 30")
	wantTag(t, c, "UPDATE t SET v = v + 1", "UPDATE 2")
	wantRows(t, c, "SELECT sum(v) FROM t", "52")
}
