package session

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sluice-db/sluice/internal/connector"
	"github.com/sluice-db/sluice/internal/engine"
	"github.com/sluice-db/sluice/internal/types"
)

// collected is what the test_collect sink connector's writers took, by
// sink (its option sink.name): every row with its op, the epochs that
// ended, and how many writers are open.
type collected struct {
	mu      sync.Mutex
	rows    map[string][]string // "+ 1 2", "- 1 2"
	barrier map[string]int
	open    map[string]int
	// unended counts rows written in epochs whose barrier the writer has
	// not seen yet.
	unended map[string]int
}

var collect = &collected{rows: map[string][]string{}, barrier: map[string]int{}, open: map[string]int{}, unended: map[string]int{}}

func init() {
	connector.RegisterSink("test_collect", []string{"sink.name"}, func(spec connector.SinkSpec, _, _ int) (connector.SinkWriter, error) {
		name := spec.Options["sink.name"]
		collect.mu.Lock()
		defer collect.mu.Unlock()
		collect.open[name]++
		return &collectWriter{name: name, cols: len(spec.Columns)}, nil
	})
}

type collectWriter struct {
	name    string
	cols    int
	unended int
}

func (w *collectWriter) Write(_ context.Context, c *types.Chunk) error {
	collect.mu.Lock()
	defer collect.mu.Unlock()
	for _, i := range c.VisibleIndices() {
		op := "+"
		if !c.Op(i).IsInsert() {
			op = "-"
		}
		row := c.Row(i)[:w.cols] // hidden key columns follow the sink's
		collect.rows[w.name] = append(collect.rows[w.name], op+" "+strings.Trim(fmt.Sprint(row), "[]"))
		w.unended++
		collect.unended[w.name]++
	}
	return nil
}

func (w *collectWriter) Barrier(context.Context, uint64, bool) error {
	collect.mu.Lock()
	defer collect.mu.Unlock()
	collect.barrier[w.name]++
	collect.unended[w.name] -= w.unended
	w.unended = 0
	return nil
}

func (w *collectWriter) Close() error {
	collect.mu.Lock()
	defer collect.mu.Unlock()
	collect.open[w.name]--
	return nil
}

// net returns the rows sink name holds when its deletes cancel its
// inserts (sorted), and whether every op was an insert.
func (c *collected) net(name string) (rows []string, insertsOnly bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	count := map[string]int{}
	insertsOnly = true
	for _, r := range c.rows[name] {
		if r[0] == '+' {
			count[r[2:]]++
		} else {
			count[r[2:]]--
			insertsOnly = false
		}
	}
	for r, n := range count {
		for range n {
			rows = append(rows, r)
		}
		if n < 0 {
			rows = append(rows, fmt.Sprintf("(%d of %s)", n, r))
		}
	}
	slices.Sort(rows)
	return rows, insertsOnly
}

// reset forgets what sink name wrote (a test's -count=N reruns reuse
// its names).
func (c *collected) reset(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.rows, name)
	delete(c.barrier, name)
	delete(c.unended, name)
}

// latest returns, for each value of the first column, the last row sink
// name was given for it (sorted): what an append-only consumer that
// keeps the newest row per key holds.
func (c *collected) latest(name string) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	last := map[string]string{}
	for _, r := range c.rows[name] {
		if r[0] == '+' {
			last[strings.Fields(r[2:])[0]] = r[2:]
		}
	}
	rows := slices.Collect(maps.Values(last))
	slices.Sort(rows)
	return rows
}

func (c *collected) openWriters(name string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.open[name]
}

// rowsOf returns what sink name was given, in order.
func (c *collected) rowsOf(name string) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.rows[name])
}

// waitLatest waits until sink name's newest row per key is want.
func waitLatest(t *testing.T, name string, want ...string) {
	t.Helper()
	slices.Sort(want)
	deadline := time.Now().Add(20 * time.Second)
	var got []string
	for time.Now().Before(deadline) {
		if got = collect.latest(name); slices.Equal(got, want) {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("sink %s's newest rows are %q, want %q", name, got, want)
}

// waitNet waits until sink name's net rows are want.
func waitNet(t *testing.T, name string, want ...string) {
	t.Helper()
	slices.Sort(want)
	deadline := time.Now().Add(20 * time.Second)
	var got []string
	for time.Now().Before(deadline) {
		if got, _ = collect.net(name); slices.Equal(got, want) {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("sink %s holds %q, want %q", name, got, want)
}

// TestSinkWritesChanges: a sink FROM a table writes the table's rows
// at creation (its backfill), then every change; its deletes cancel its
// inserts exactly, so what it wrote nets to the table.
func TestSinkWritesChanges(t *testing.T) {
	collect.reset("changes")
	p := startPlayground(t)
	c := connect(t, p)
	exec(t, c, "CREATE TABLE t (a int PRIMARY KEY, b int)")
	exec(t, c, "INSERT INTO t VALUES (1, 10), (2, 20)")
	exec(t, c, "CREATE SINK changes FROM t WITH (connector = 'test_collect', sink.name = 'changes')")
	waitNet(t, "changes", "1 10", "2 20")
	exec(t, c, "INSERT INTO t VALUES (3, 30)")
	exec(t, c, "UPDATE t SET b = b + 1 WHERE a = 1")
	exec(t, c, "DELETE FROM t WHERE a = 2")
	waitNet(t, "changes", "1 11", "3 30")
	// Every epoch's rows were followed by its barrier before it
	// committed.
	exec(t, c, "FLUSH")
	collect.mu.Lock()
	barriers, unended := collect.barrier["changes"], collect.unended["changes"]
	collect.mu.Unlock()
	if barriers == 0 || unended != 0 {
		t.Errorf("after FLUSH the writers saw %d barriers, with %d rows written after the last", barriers, unended)
	}
	if _, insertsOnly := collect.net("changes"); insertsOnly {
		t.Error("an update and a delete reached the sink as inserts")
	}
	if got := queryStrings(t, c, "SHOW SINKS"); !slices.Equal(got, []string{"changes"}) {
		t.Errorf("SHOW SINKS: %v", got)
	}
	// The extended protocol describes these statements by running them,
	// as a driver's prepared query needs.
	for _, sql := range []string{"SHOW SINKS", "SHOW CREATE SINK changes", "SHOW SOURCES",
		"EXPLAIN CREATE SINK x FROM t WITH (connector = 'blackhole')"} {
		rows, err := c.Query(context.Background(), sql)
		if err == nil {
			for rows.Next() {
			}
			err = rows.Err()
		}
		if err != nil {
			t.Errorf("%s over the extended protocol: %v", sql, err)
		}
	}
	// Rebuilt from its input, a sink would write every row again.
	exec(t, c, "CREATE MATERIALIZED VIEW mv AS SELECT a FROM t")
	exec(t, c, "CREATE SINK from_mv FROM mv WITH (connector = 'blackhole')")
	wantCode(t, c, "RECOVER MATERIALIZED VIEW mv", "0A000")
	exec(t, c, "DROP MATERIALIZED VIEW mv CASCADE")
	wantCode(t, c, "SELECT * FROM changes", "42809")
	wantCode(t, c, "DROP TABLE t", "2BP01")
	exec(t, c, "DROP SINK changes")
	waitFor(t, func() bool { return collect.openWriters("changes") == 0 })
	exec(t, c, "DROP TABLE t")
}

// TestSinkForceAppendOnly: an append-only sink over an aggregation is
// refused without force_append_only, and with it writes the inserts
// only (an update's new row among them). The backfill may reach the
// aggregation over more than one epoch (each actor backfills its own
// part), so a key's count may pass through smaller values on its way;
// the newest row per key is what is certain, and the counts a key was
// given must rise.
func TestSinkForceAppendOnly(t *testing.T) {
	collect.reset("counts")
	p := startPlayground(t)
	c := connect(t, p)
	exec(t, c, "CREATE TABLE t (k int, v int)")
	exec(t, c, "INSERT INTO t VALUES (1, 1), (1, 2)")
	const as = "AS SELECT k, count(*) AS n FROM t GROUP BY k WITH (connector = 'test_collect', sink.name = 'counts', type = 'append-only'"
	wantCode(t, c, "CREATE SINK counts "+as+")", "22023")
	exec(t, c, "CREATE SINK counts "+as+", force_append_only = 'true')")
	waitLatest(t, "counts", "1 2")
	exec(t, c, "INSERT INTO t VALUES (1, 3), (2, 1)")
	waitLatest(t, "counts", "1 3", "2 1")
	rows, insertsOnly := collect.net("counts")
	if !insertsOnly {
		t.Error("a forced append-only sink wrote a delete")
	}
	prev := map[string]int{}
	for _, r := range collect.rowsOf("counts") {
		var k, n int
		if _, err := fmt.Sscanf(r, "+ %d %d", &k, &n); err != nil || n <= prev[fmt.Sprint(k)] {
			t.Errorf("sink counts was given %q after count %d (all: %q)", r, prev[fmt.Sprint(k)], rows)
		}
		prev[fmt.Sprint(k)] = n
	}
	// A sink depends on what it reads: CASCADE drops it with the table.
	exec(t, c, "DROP TABLE t CASCADE")
	if got := queryStrings(t, c, "SHOW SINKS"); len(got) != 0 {
		t.Errorf("SHOW SINKS after DROP TABLE … CASCADE: %v", got)
	}
	waitFor(t, func() bool { return collect.openWriters("counts") == 0 })
}

// TestSinkOverSourceAndRestart: a sink over a Nexmark source writes every
// bid once, and its job comes back after a restart like a view's.
func TestSinkOverSourceAndRestart(t *testing.T) {
	dir := t.TempDir()
	opts := engine.Options{Dir: dir, BarrierInterval: 5 * time.Millisecond, Parallelism: 2, ChunkSize: 64, CheckInserts: true}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	collect.reset("bids")
	first, err := StartPlayground(ctx, opts, Config{})
	if err != nil {
		t.Fatal(err)
	}
	closed := false
	t.Cleanup(func() {
		if !closed {
			_ = first.Close()
		}
	})
	c := connect(t, first)
	exec(t, c, `CREATE SOURCE bid (auction BIGINT, bidder BIGINT, price BIGINT, channel VARCHAR, url VARCHAR,
		date_time TIMESTAMP, extra VARCHAR) WITH (connector = 'nexmark', nexmark.table.type = 'Bid',
		nexmark.split.num = '2', nexmark.event.num = '5000')`)
	exec(t, c, `CREATE SINK bids AS SELECT auction, price FROM bid WHERE price > 0 WITH (connector = 'test_collect', sink.name = 'bids')`)
	n, _ := bidTotals(t, 5000)
	waitFor(t, func() bool { rows, _ := collect.net("bids"); return int64(len(rows)) == n })
	// FLUSH commits the epoch that wrote the last bids: rows written in
	// an epoch that never committed are written again after a restart
	// (at least once; a transactional writer will commit with the epoch).
	exec(t, c, "FLUSH")
	collect.mu.Lock()
	before := len(collect.rows["bids"])
	collect.mu.Unlock()
	closed = true
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { return collect.openWriters("bids") == 0 })
	c = connect(t, startPlaygroundAs(t, opts))
	if got := queryStrings(t, c, "SHOW SINKS"); !slices.Equal(got, []string{"bids"}) {
		t.Fatalf("SHOW SINKS after a restart: %v", got)
	}
	waitFor(t, func() bool { return collect.openWriters("bids") == 2 })
	exec(t, c, "FLUSH")
	// The source had committed its last offsets: nothing is read again.
	collect.mu.Lock()
	after := len(collect.rows["bids"])
	collect.mu.Unlock()
	if after != before {
		t.Errorf("the sink wrote %d rows after the restart, want none (the source was read to its end)", after-before)
	}
	exec(t, c, "DROP SOURCE bid CASCADE")
}
