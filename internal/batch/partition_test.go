package batch

import (
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/sluice-db/sluice/internal/sqlerr"
	"github.com/sluice-db/sluice/internal/storage"
)

// partitionFixture is two tables whose joins, DISTINCTs and groups are
// bigger than the small memory limits the tests run under: a holds 3000
// rows, b 2500, their keys overlap in part, repeat, and are sometimes
// NULL.
func partitionFixture(t *testing.T) (*fixture, *storage.Snapshot) {
	f := newFixture(t)
	f.exec("CREATE TABLE a (id int PRIMARY KEY, k int, v int, s varchar)")
	f.exec("CREATE TABLE b (id int PRIMARY KEY, k int, w int)")
	var av, bv []string
	for i := range 3000 {
		k := fmt.Sprint(i % 1500)
		if i%97 == 0 {
			k = "NULL"
		}
		av = append(av, fmt.Sprintf("(%d, %s, %d, 's%d')", i, k, i%17, i%1300))
	}
	for i := range 2500 {
		k := fmt.Sprint(700 + i%1600)
		if i%89 == 0 {
			k = "NULL"
		}
		bv = append(bv, fmt.Sprintf("(%d, %s, %d)", i, k, i%13))
	}
	f.exec("INSERT INTO a VALUES " + strings.Join(av, ", "))
	f.exec("INSERT INTO b VALUES " + strings.Join(bv, ", "))
	return f, f.snapshot()
}

// samePartitioned runs each query in memory and under each memory limit
// with a spill directory, and checks the same rows (as a multiset) come
// back and no file is left behind.
func samePartitioned(t *testing.T, f *fixture, sn *storage.Snapshot, limits []int64, pool func() *MemoryPool, sqls ...string) {
	t.Helper()
	dir := t.TempDir()
	run := func(sql string, opts Options) ([]string, error) {
		opts.ChunkSize = 64
		got, err := f.query(sn, sql, opts)
		sort.Strings(got)
		return got, err
	}
	for _, sql := range sqls {
		want, err := run(sql, Options{})
		if err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
		for _, limit := range limits {
			opts := Options{MemoryLimit: limit, SpillDir: dir}
			if pool != nil {
				opts.Pool = pool()
			}
			got, err := run(sql, opts)
			if err != nil {
				t.Fatalf("%s under %d bytes: %v", sql, limit, err)
			}
			if !slices.Equal(got, want) {
				t.Errorf("%s under %d bytes: %d rows, in memory %d; first difference at %d",
					sql, limit, len(got), len(want), firstDiffText(got, want))
			}
		}
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("%d spill files left behind", len(left))
	}
}

func firstDiffText(a, b []string) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

var joinQueries = []string{
	"SELECT a.id, b.id, a.v + b.w FROM a JOIN b ON a.k = b.k",
	"SELECT a.id, b.id FROM a LEFT JOIN b ON a.k = b.k",
	"SELECT a.id, b.id FROM a RIGHT JOIN b ON a.k = b.k",
	"SELECT a.id, b.id, a.s FROM a FULL JOIN b ON a.k = b.k",
	"SELECT a.id, b.id FROM a FULL JOIN b ON a.k = b.k AND a.v > b.w",
	"SELECT a.id, b.id FROM a LEFT JOIN b ON a.k = b.k AND a.v = b.w",
	"SELECT count(*) FROM a JOIN b ON a.k = b.k AND a.v = b.w",
}

// TestJoinPartitionsMatchMemory: hash joins of every kind, with and
// without a residual, give the same rows when their build side is
// partitioned once or several times as in memory; without a spill
// directory the same join fails with 53200, so partitions were used.
func TestJoinPartitionsMatchMemory(t *testing.T) {
	f, sn := partitionFixture(t)
	samePartitioned(t, f, sn, []int64{64 << 10, 8 << 10}, nil, joinQueries...)
	if _, err := f.query(sn, joinQueries[0], Options{MemoryLimit: 64 << 10}); sqlerrCode(err) != "53200" {
		t.Errorf("without a spill directory: %v, want 53200", err)
	}
}

// TestDistinctPartitionsMatchMemory: DISTINCT and UNION with more keys than
// memory emit each key once, as in memory.
func TestDistinctPartitionsMatchMemory(t *testing.T) {
	f, sn := partitionFixture(t)
	sqls := []string{
		"SELECT DISTINCT k, v FROM a",
		"SELECT DISTINCT s FROM a",
		"SELECT k FROM a UNION SELECT k FROM b",
	}
	samePartitioned(t, f, sn, []int64{48 << 10, 6 << 10}, nil, sqls...)
	if _, err := f.query(sn, sqls[0], Options{MemoryLimit: 48 << 10}); sqlerrCode(err) != "53200" {
		t.Errorf("without a spill directory: %v, want 53200", err)
	}
}

// TestOneKeyPastMemoryFails: the rows of one join key cannot be split by
// partitioning; past the limit the join fails with 53200 after its last
// partitioning level, without looping or leaving files.
func TestOneKeyPastMemoryFails(t *testing.T) {
	f := newFixture(t)
	f.exec("CREATE TABLE c (id int PRIMARY KEY, k int)")
	var vs []string
	for i := range 2000 {
		vs = append(vs, fmt.Sprintf("(%d, 1)", i))
	}
	f.exec("INSERT INTO c VALUES " + strings.Join(vs, ", "))
	sn := f.snapshot()
	dir := t.TempDir()
	_, err := f.query(sn, "SELECT count(*) FROM c x JOIN c y ON x.k = y.k", Options{MemoryLimit: 32 << 10, SpillDir: dir})
	if sqlerrCode(err) != "53200" {
		t.Errorf("one key past memory: %v, want 53200", err)
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("%d spill files left behind", len(left))
	}
}

// TestPoolSharedByQueries: queries without a limit of their own spill when
// the server's pool runs short, whether they use it alone or another
// query holds most of it, and give every grain back when they end; with
// nowhere to spill they fail with 53200 naming the server's memory.
func TestPoolSharedByQueries(t *testing.T) {
	f, sn := partitionFixture(t)
	pool := NewMemoryPool(64 << 10)
	sqls := append([]string{
		"SELECT k, count(*), max(s) FROM a GROUP BY k",
		"SELECT DISTINCT k, v FROM a",
		"SELECT id, s FROM a ORDER BY s, id",
	}, joinQueries[:4]...)
	samePartitioned(t, f, sn, []int64{0}, func() *MemoryPool { return pool }, sqls...)
	if u := pool.Used(); u != 0 {
		t.Fatalf("pool holds %d bytes after the queries ended", u)
	}
	if !pool.take(48 << 10) { // another query holds three quarters
		t.Fatal("an empty pool refused")
	}
	samePartitioned(t, f, sn, []int64{0}, func() *MemoryPool { return pool }, sqls...)
	_, err := f.query(sn, sqls[0], Options{Pool: pool})
	if e, ok := sqlerr.As(err); !ok || e.Code != "53200" || !strings.Contains(e.Message, "server's query memory") {
		t.Errorf("without a spill directory: %v, want 53200 on the server's memory", err)
	}
	if u := pool.Used(); u != 48<<10 {
		t.Errorf("pool holds %d bytes, want only the other query's %d", u, 48<<10)
	}
}
