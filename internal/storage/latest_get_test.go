package storage

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
	"github.com/sluice-db/sluice/internal/types"
)

// TestLatestGetDuringCommits reads a key that always exists while its
// writes go through the log, into the table's state, are committed and
// pruned from the tail, over and over: LatestGet must find it every time,
// whichever of the tail or Pebble holds it at that moment.
func TestLatestGetDuringCommits(t *testing.T) {
	ctx := context.Background()
	s := openMem(t, nil)
	desc := kvDesc(7)
	tbl := mustOpenTable(t, s, desc, ActorID(1), allVNodeBits())
	row := func(v int64) types.Row { return types.Row{int64(1), "x", v} }
	write := func(v int64) uint64 {
		b := types.NewBuilder(desc.Types, 4)
		b.Append(types.Insert, row(v))
		seq, err := s.WriteDML(ctx, desc.ID, DMLWrite{Payload: []byte{1}, Tail: &desc, Rows: b.Take()})
		if err != nil {
			t.Fatal(err)
		}
		return seq
	}
	write(0)
	var pruned atomic.Int64 // the newest value pruned from the tail
	step := func(e uint64) error {
		seq := write(int64(e))
		if err := tbl.Insert(row(int64(e))); err != nil {
			return err
		}
		if err := tbl.Seal(e); err != nil {
			return err
		}
		if err := s.Commit(ctx, e, nil); err != nil {
			return err
		}
		s.PruneTail(desc.ID, seq)
		pruned.Store(int64(e))
		return nil
	}
	whileCommitting(t, 300, step, func(reads int) {
		least := pruned.Load()
		got, ok, err := s.LatestGet(ctx, desc, types.Row{int64(1), "x"})
		if err != nil || !ok {
			t.Fatalf("LatestGet after %d reads: found %v, err %v", reads, ok, err)
		}
		if v := got[2].(int64); v < least {
			t.Fatalf("LatestGet after %d reads: v = %d, older than %d, which left the tail before the read", reads, v, least)
		}
	})
}

// TestLatestGetSeesEachCommit reads a key before and after the commit that
// writes it left the tail: the read before leaves a pooled iterator made
// when the key was absent, which must not answer the read after. A drop
// must hide the rows from the next read the same way, and closing the
// store must find no iterator left open.
func TestLatestGetSeesEachCommit(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, Options{FS: vfs.NewMem(), Dir: "db"})
	if err != nil {
		t.Fatal(err)
	}
	desc := kvDesc(7)
	tbl := mustOpenTable(t, s, desc, ActorID(1), allVNodeBits())
	get := func(k int64) (types.Row, bool) {
		t.Helper()
		row, ok, err := s.LatestGet(ctx, desc, types.Row{k, "x"})
		if err != nil {
			t.Fatal(err)
		}
		return row, ok
	}
	for e := uint64(1); e <= 20; e++ {
		k := int64(e)
		if _, ok := get(k); ok {
			t.Fatalf("epoch %d: key %d found before its write", e, k)
		}
		b := types.NewBuilder(desc.Types, 4) // more than it holds: Append would cut the chunk
		b.Append(types.Insert, types.Row{k, "x", k})
		b.Append(types.Insert, types.Row{int64(0), "x", k})
		seq, err := s.WriteDML(ctx, desc.ID, DMLWrite{Payload: []byte{1}, Tail: &desc, Rows: b.Take()})
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := get(k); !ok {
			t.Fatalf("epoch %d: key %d missing from the tail after its write", e, k)
		}
		for _, r := range []types.Row{{k, "x", k}, {int64(0), "x", k}} {
			if err := tbl.Insert(r); err != nil {
				t.Fatal(err)
			}
		}
		if err := tbl.Seal(e); err != nil {
			t.Fatal(err)
		}
		if err := s.Commit(ctx, e, nil); err != nil {
			t.Fatal(err)
		}
		s.PruneTail(desc.ID, seq)
		if _, ok := get(k); !ok {
			t.Fatalf("epoch %d: key %d missing after its commit left the tail", e, k)
		}
		if row, _ := get(0); row[2].(int64) != k {
			t.Fatalf("epoch %d: key 0 reads %v, want v = %d", e, row, k)
		}
	}
	if err := s.DropTableState(ctx, desc.ID); err != nil {
		t.Fatal(err)
	}
	if row, ok := get(3); ok {
		t.Fatalf("after the drop: key 3 reads %v", row)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("close after point reads: %v", err)
	}
}

// TestLatestGetAfterABackgroundPrune: the engine prunes tails in the
// background, from a view of Pebble that can hold a commit before
// Commit has counted it for the pooled iterators. A key check after such
// a prune must still find the write it removed, however old the pooled
// iterators are.
func TestLatestGetAfterABackgroundPrune(t *testing.T) {
	ctx := context.Background()
	s := openMem(t, nil)
	desc := kvDesc(7)
	row := types.Row{int64(5), "x", int64(50)}
	b := types.NewBuilder(desc.Types, 4)
	b.Append(types.Insert, row)
	seq, err := s.WriteDML(ctx, desc.ID, DMLWrite{Payload: []byte{1}, Tail: &desc, Rows: b.Take()})
	if err != nil {
		t.Fatal(err)
	}
	// Pool an iterator made before the row reaches Pebble.
	if _, ok, err := s.LatestGet(ctx, desc, types.Row{int64(6), "x"}); err != nil || ok {
		t.Fatalf("key 6: found %v, err %v", ok, err)
	}
	// The commit's batch is visible; its count has not run yet.
	lay, err := newLayout(desc)
	if err != nil {
		t.Fatal(err)
	}
	key, err := lay.pkKey(row[:2])
	if err != nil {
		t.Fatal(err)
	}
	val, err := lay.encodeValue(nil, row)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.db.Set(key, val, pebble.Sync); err != nil {
		t.Fatal(err)
	}
	s.PruneTail(desc.ID, seq)
	if got, ok, err := s.LatestGet(ctx, desc, row[:2]); err != nil || !ok || got[2].(int64) != 50 {
		t.Fatalf("key 5 after the prune: %v, found %v, err %v", got, ok, err)
	}
}

// TestPointLayoutFollowsTheDescriptor: point reads reuse a table's layout
// only while its descriptor is unchanged, and never share the caller's
// slices.
func TestPointLayoutFollowsTheDescriptor(t *testing.T) {
	desc := kvDesc(9001)
	a, err := cachedLayout(desc)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := cachedLayout(kvDesc(9001)); b != a {
		t.Fatal("an equal descriptor built a new layout")
	}
	desc.Types[2] = types.TVarchar // the caller's slice changes in place
	c, err := cachedLayout(desc)
	if err != nil {
		t.Fatal(err)
	}
	if c == a || a.desc.Types[2] != types.TInt64 || c.desc.Types[2] != types.TVarchar {
		t.Fatalf("after a change: reused %v, old layout's type %v, new %v", c == a, a.desc.Types[2], c.desc.Types[2])
	}
	other := kvDesc(9001)
	other.PK = []int{0}
	other.Orders, other.DistKey = nil, []int{0}
	if d, _ := cachedLayout(other); d == c || len(d.pkTypes) != 1 {
		t.Fatal("a descriptor with another key reused the layout")
	}
}
