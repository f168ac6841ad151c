package session

import (
	"slices"
	"testing"
)

// TestDropGracefulTimeout: the graceful drop of the stalled join waits
// behind its barrier; statement_timeout ends the wait with 57014, and the
// view is gone anyway while the sibling stays exact.
func TestDropGracefulTimeout(t *testing.T) {
	p := startPlayground(t)
	c := connect(t, p)
	exec(t, c, "CREATE TABLE t (k int, v int)")
	exec(t, c, "CREATE MATERIALIZED VIEW sibling AS SELECT count(*) AS n, sum(v) AS s FROM t")
	exec(t, c, "CREATE MATERIALIZED VIEW amp AS SELECT a.v AS x, b.v AS y FROM t a JOIN t b ON a.k = b.k")
	// 9e6 join rows: the barrier after this write holds for a long time.
	exec(t, c, "INSERT INTO t SELECT 1, g FROM generate_series(1, 3000) AS g")
	exec(t, c, "SET statement_timeout = 300")
	wantCode(t, c, "DROP MATERIALIZED VIEW amp GRACEFUL", "57014")
	exec(t, c, "SET statement_timeout = 0")
	if got := queryStrings(t, c, "SELECT count(*) FROM pg_class WHERE relname = 'amp'"); !slices.Equal(got, []string{"0"}) {
		t.Fatalf("amp still listed after the cancelled graceful drop: %q", got)
	}
	exec(t, c, "FLUSH")
	if got := queryStrings(t, c, "SELECT n::text || ' ' || s::text FROM sibling"); !slices.Equal(got, []string{"3000 4501500"}) {
		t.Fatalf("sibling = %q", got)
	}
}
