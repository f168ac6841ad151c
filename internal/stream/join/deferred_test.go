package join

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/sluice-db/sluice/internal/stream"
	"github.com/sluice-db/sluice/internal/stream/streamtest"
	"github.com/sluice-db/sluice/internal/types"
)

// recordingTable is a stateTable that records the writes and reads it is
// given.
type recordingTable struct {
	stateTable // nil: any other method panics
	log        []string
}

func (r *recordingTable) InsertAbsent(row types.Row) error {
	r.log = append(r.log, fmt.Sprint("insert ", row[0]))
	return nil
}

func (r *recordingTable) Delete(row types.Row) error {
	r.log = append(r.log, fmt.Sprint("delete ", row[0]))
	return nil
}

func (r *recordingTable) Scan(context.Context, types.Row) (rowIterator, error) {
	r.log = append(r.log, "scan")
	return nil, nil
}

func (r *recordingTable) DeleteBetween(context.Context, types.Datum, types.Datum, func(types.Row) error) error {
	r.log = append(r.log, "delete between")
	return nil
}

func (r *recordingTable) Seal(epoch uint64) error {
	r.log = append(r.log, fmt.Sprint("seal ", epoch))
	return nil
}

// TestDeferredTable: inserts wait for the seal or a read; a dropped row is
// never written; a tag from before a write-out drops nothing (its row is
// in the table, and its position now holds another row), and the delete
// of such a row goes to the table; a tag drops only the row noted with
// it; the generation wraps around without a negative tag.
func TestDeferredTable(t *testing.T) {
	rec := &recordingTable{}
	d := newDeferredTable(rec)
	rows := map[int64]types.Row{}
	insert := func(id int64) int64 {
		t.Helper()
		rows[id] = types.Row{id}
		if err := d.InsertAbsent(rows[id]); err != nil {
			t.Fatal(err)
		}
		return d.lastTag()
	}
	a, b := insert(1), insert(2)
	if d.drop(b, types.Row{int64(2)}) {
		t.Fatal("drop of another row object with the tag: true")
	}
	if !d.drop(b, rows[2]) {
		t.Fatal("drop of a listed row: false")
	}
	if _, err := d.Scan(context.Background(), nil); err != nil { // writes 1 out
		t.Fatal(err)
	}
	c := insert(3) // the position a had
	if d.drop(a, rows[1]) || d.drop(a, rows[3]) {
		t.Fatal("a tag from before the write-out dropped a row")
	}
	if err := d.Delete(rows[1]); err != nil { // what expiry does next
		t.Fatal(err)
	}
	insert(4)
	if !d.drop(c, rows[3]) {
		t.Fatal("drop of a listed row: false")
	}
	if err := d.DeleteBetween(context.Background(), nil, nil, nil); err != nil { // writes 4 out
		t.Fatal(err)
	}
	insert(5)
	if err := d.Seal(7); err != nil {
		t.Fatal(err)
	}
	if d.drop(c, rows[3]) {
		t.Fatal("a tag from before the seal dropped a row")
	}
	d.gen = 1<<31 - 1 // the generation wraps around to 0, and tags stay whole
	insert(6)
	if tag := d.lastTag(); tag < 0 || !d.drop(tag, rows[6]) {
		t.Fatalf("tag %d at the last generation: not dropped", tag)
	}
	insert(7)
	if _, err := d.Scan(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	if d.gen != 0 {
		t.Errorf("generation %d after 2^31-1, want 0", d.gen)
	}
	want := "[insert 1 scan delete 1 insert 4 delete between insert 5 seal 7 insert 7 scan]"
	if got := fmt.Sprint(rec.log); got != want {
		t.Errorf("table saw %s, want %s", got, want)
	}
}

// TestDeferredMatchesDirect: an append-only join with expiries gives the
// same output and keeps the same state with its inserts deferred as with
// them written at once, epoch by epoch, over random rows (out of order,
// some late, some with a NULL time) and watermarks (on the time, and on
// the key, which cleans state by scanning it), with caches that miss
// and keys that are large, whose probes write the list out mid-epoch.
func TestDeferredMatchesDirect(t *testing.T) {
	rapid.Check(t, checkDeferredMatchesDirect)
}

func checkDeferredMatchesDirect(rt *rapid.T) {
	defer func(n int) { listBlock = n }(listBlock)
	listBlock = rapid.SampledFrom([]int{2, 1024}).Draw(rt, "list block")
	cfg := config{chunkSize: rapid.SampledFrom([]int{1, 3, 1024}).Draw(rt, "chunk"),
		cacheEntries:   rapid.SampledFrom([]int{1, 1000}).Draw(rt, "cache"),
		largeKeyRows:   rapid.SampledFrom([]int{1, 4096}).Draw(rt, "large"),
		adaptMinStores: rapid.SampledFrom([]int{1, 1 << 30}).Draw(rt, "adaptMinStores")}
	epochs := rapid.IntRange(1, 6).Draw(rt, "epochs")
	var scripts [2]string
	id := 0
	for s := range scripts {
		var sb strings.Builder
		sb.WriteString("barrier\n")
		wm, kwm := 0, 0
		for range epochs {
			for range rapid.IntRange(0, 12).Draw(rt, "rows") {
				id++
				tm := "NULL"
				if rapid.IntRange(0, 9).Draw(rt, "null time") > 0 {
					tm = fmt.Sprint(wm + rapid.IntRange(-3, 12).Draw(rt, "t")) // some late
				}
				fmt.Fprintf(&sb, "+ %d %s %d\n", rapid.IntRange(0, 2).Draw(rt, "k"), tm, id)
			}
			if rapid.Bool().Draw(rt, "watermark") {
				wm += rapid.IntRange(0, 8).Draw(rt, "advance")
				fmt.Fprintf(&sb, "watermark 1 %d\n", wm)
			}
			if rapid.IntRange(0, 3).Draw(rt, "key watermark") == 0 { // cleans state by key
				kwm += rapid.IntRange(0, 1).Draw(rt, "key advance")
				fmt.Fprintf(&sb, "watermark 0 %d\n", kwm)
			}
			sb.WriteString("barrier\n")
		}
		scripts[s] = sb.String()
	}
	run := func(deferred bool) []string {
		deferAppendOnly = deferred
		defer func() { deferAppendOnly = true }()
		c := expiryCase(true)
		in := c.lt
		st := streamtest.OpenStore(rt)
		left := stream.NewMockSource(in, streamtest.Script(in, strings.TrimSpace(scripts[0]), 1, testActor)...)
		right := stream.NewMockSource(in, streamtest.Script(in, strings.TrimSpace(scripts[1]), 1, testActor)...)
		h := newHarness(rt, st, c, cfg, left, right)
		defer h.stop()
		var out []string
		for range epochs + 1 {
			rows, b := h.untilBarrier()
			lines := strings.Split(strings.TrimSpace(rows), "\n")
			slices.Sort(lines)
			if err := st.Commit(context.Background(), b.Epoch, nil); err != nil {
				rt.Fatal(err)
			}
			state := ""
			for _, tbl := range []uint32{1, 2} {
				n, err := st.TableKeyCount(tbl)
				if err != nil {
					rt.Fatal(err)
				}
				state += fmt.Sprint(" ", n)
			}
			out = append(out, fmt.Sprintf("epoch %d: %s | state%s", b.Epoch, strings.Join(lines, "|"), state))
		}
		return out
	}
	direct, deferred := run(false), run(true)
	for i := range direct {
		if direct[i] != deferred[i] {
			rt.Fatalf("written at once:\n%s\ndeferred:\n%s", strings.Join(direct, "\n"), strings.Join(deferred, "\n"))
		}
	}
}
