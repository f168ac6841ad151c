package session

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/sluice-db/sluice/internal/engine"
)

// TestKeyedBulkLoadAndChangesInOneEpoch runs with the playground's own
// settings (CheckInserts off: a table keyed by its primary key trusts its
// writers' checked changes), so a bulk insert of rising keys is kept by
// the table's materialize as fresh chunks, and one of falling keys row by
// row. Updates, deletes and a re-insert of some of those keys follow in
// the same epoch (no barrier until FLUSH), and again in the next one; the
// table and its views must equal the rows the statements wrote.
func TestKeyedBulkLoadAndChangesInOneEpoch(t *testing.T) {
	p := startTrustedPlayground(t, engine.Options{BarrierInterval: time.Hour, Parallelism: 2, ChunkSize: 256})
	c := connect(t, p)
	exec(t, c, "CREATE TABLE t (id bigint PRIMARY KEY, v bigint)")
	exec(t, c, "CREATE MATERIALIZED VIEW s AS SELECT count(*) AS n, sum(v) AS total FROM t")
	exec(t, c, "CREATE MATERIALIZED VIEW m AS SELECT id, v FROM t WHERE v % 3 = 0")
	model := map[int64]int64{}
	exec(t, c, "INSERT INTO t SELECT g, g FROM generate_series(1, 5000) g") // rising keys
	for g := int64(1); g <= 5000; g++ {
		model[g] = g
	}
	exec(t, c, "INSERT INTO t SELECT 30001 - g, g FROM generate_series(1, 5000) g") // falling keys
	for g := int64(1); g <= 5000; g++ {
		model[30001-g] = g
	}
	round := func(k int64) {
		exec(t, c, fmt.Sprintf("UPDATE t SET v = v + %d WHERE id <= 100 OR id > 29950", k))
		exec(t, c, fmt.Sprintf("DELETE FROM t WHERE id > %d AND id <= %d", 4900-k, 5000-k))
		exec(t, c, fmt.Sprintf("INSERT INTO t VALUES (%d, 7)", 4950-k))
		for id := range model {
			if id <= 100 || id > 29950 {
				model[id] += k
			}
			if id > 4900-k && id <= 5000-k {
				delete(model, id)
			}
		}
		model[4950-k] = 7
		exec(t, c, "FLUSH")
	}
	check := func(when string) {
		n, total := int64(len(model)), int64(0)
		var div3 []string
		for id, v := range model {
			total += v
			if v%3 == 0 {
				div3 = append(div3, fmt.Sprintf("%d %d", id, v))
			}
		}
		slices.Sort(div3)
		if got, want := queryStrings(t, c, "SELECT n, total FROM s"), []string{fmt.Sprintf("%d %d", n, total)}; !slices.Equal(got, want) {
			t.Fatalf("%s: view s = %v, want %v", when, got, want)
		}
		if got, want := queryStrings(t, c, "SELECT count(*), sum(v) FROM t"), []string{fmt.Sprintf("%d %d", n, total)}; !slices.Equal(got, want) {
			t.Fatalf("%s: table t has %v, want %v", when, got, want)
		}
		got := queryStrings(t, c, "SELECT id, v FROM m")
		slices.Sort(got)
		if !slices.Equal(got, div3) {
			t.Fatalf("%s: view m has %d rows, want %d", when, len(got), len(div3))
		}
	}
	round(0)
	check("after the bulk loads and changes in one epoch")
	round(10)
	check("after changes in the next epoch")
}
