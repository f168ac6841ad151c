package storage

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"testing"

	"pgregory.net/rapid"

	"github.com/sluice-db/sluice/internal/types"
	"github.com/sluice-db/sluice/internal/types/codec"
)

// TestLatestSnapshotMatchesModel drives a table the way the engine does:
// DML records enter the log and the tail; now and then a "table job"
// applies a prefix of the log to the table's state, commits it and prunes
// the tail through that prefix, all of it or (as between two of
// PruneTail's holds of its lock) part of it, or not yet. After every step, a latest snapshot (scan
// and point reads) must equal the model of every record applied so far,
// and a committed-only snapshot must equal the committed prefix. A
// transaction's own writes (OwnWrites) come and go in between, and a
// latest snapshot with them overlaid must equal them over the latest
// model, however the tail under them changed since the last overlay. The
// tail writes its tree to runs never, now and then, or after every record,
// and records (of changes too) straight to runs never or from one or two
// rows.
func TestLatestSnapshotMatchesModel(t *testing.T) {
	defer func(n, m int) { tailSpillBytes, tailRunFrom = n, m }(tailSpillBytes, tailRunFrom)
	rapid.Check(t, func(rt *rapid.T) {
		tailSpillBytes = rapid.SampledFrom([]int{64 << 20, 400, 1}).Draw(rt, "spill at")
		tailRunFrom = rapid.SampledFrom([]int{4096, 2, 1}).Draw(rt, "records to runs from")
		ctx := context.Background()
		s := openMem(t, nil)
		desc := kvDesc(7)
		tbl := mustOpenTable(t, s, desc, ActorID(1), allVNodeBits())
		type rec struct {
			seq uint64
			c   *types.Chunk
		}
		var log []rec
		latest := map[string]types.Row{}    // model after every record
		committed := map[string]types.Row{} // model after the committed prefix
		applied, epoch := 0, uint64(0)
		own, err := NewOwnWrites(desc)
		if err != nil {
			rt.Fatal(err)
		}
		ownRows := map[string]types.Row{} // nil: the block deleted the key
		key := func(r types.Row) string { return fmt.Sprint(r[0], "/", r[1]) }
		apply := func(m map[string]types.Row, c *types.Chunk) {
			for i := range c.Capacity() {
				r := c.Row(i)
				if c.Op(i).IsInsert() {
					m[key(r)] = r
				} else {
					delete(m, key(r))
				}
			}
		}
		for step := range rapid.IntRange(1, 40).Draw(rt, "steps") {
			switch rapid.IntRange(0, 6).Draw(rt, fmt.Sprint("op", step)) {
			case 6: // the block stages a bulk piece: a run, of changes too
				ks := rapid.SliceOfN(rapid.Int64Range(0, 6), 1, 4).Draw(rt, fmt.Sprint("rk", step))
				b := types.NewBuilder(desc.Types, 16)
				for j, k := range ks {
					row := types.Row{k, "x", int64(-1000 - step)}
					if rapid.Bool().Draw(rt, fmt.Sprint("rdel", step, j)) {
						b.Append(types.Delete, row)
						ownRows[key(row)] = nil
					} else {
						b.Append(types.Insert, row)
						ownRows[key(row)] = row
					}
				}
				if _, err := own.AddRun(s, b.Take()); err != nil {
					rt.Fatal(err)
				}
			case 5: // a prune stops after one write (PruneTail lets its lock go)
				if applied > 0 {
					s.pruneTailSome(desc.ID, log[applied-1].seq, 1)
				}
			case 4: // the transaction block stages a chunk
				b := types.NewBuilder(desc.Types, 16)
				for j := range rapid.IntRange(1, 3).Draw(rt, fmt.Sprint("on", step)) {
					k := int64(rapid.IntRange(0, 6).Draw(rt, fmt.Sprint("ok", step, j)))
					row := types.Row{k, "x", int64(-step)}
					if rapid.Bool().Draw(rt, fmt.Sprint("odel", step, j)) {
						b.Append(types.Delete, row)
						ownRows[key(row)] = nil
					} else {
						b.Append(types.Insert, row)
						ownRows[key(row)] = row
					}
				}
				if err := own.Add(b.Take()); err != nil {
					rt.Fatal(err)
				}
			case 0, 1, 2: // one DML record of a few rows
				b := types.NewBuilder(desc.Types, 16)
				for j := range rapid.IntRange(1, 5).Draw(rt, fmt.Sprint("n", step)) {
					k := int64(rapid.IntRange(0, 6).Draw(rt, fmt.Sprint("k", step, j)))
					row := types.Row{k, "x", int64(step)}
					if rapid.Bool().Draw(rt, fmt.Sprint("del", step, j)) {
						b.Append(types.Delete, row)
					} else {
						b.Append(types.Insert, row)
					}
				}
				c := b.Take()
				seq, err := s.WriteDML(ctx, desc.ID, DMLWrite{Payload: []byte{1}, Tail: &desc, Rows: c})
				if err != nil {
					rt.Fatal(err)
				}
				log = append(log, rec{seq, c})
				apply(latest, c)
			case 3: // the table job commits a prefix and the tail is pruned
				to := rapid.IntRange(applied, len(log)).Draw(rt, fmt.Sprint("to", step))
				for _, r := range log[applied:to] {
					for i := range r.c.Capacity() {
						var err error
						if r.c.Op(i).IsInsert() {
							err = tbl.Insert(r.c.Row(i))
						} else {
							err = tbl.Delete(r.c.Row(i))
						}
						if err != nil {
							rt.Fatal(err)
						}
					}
					apply(committed, r.c)
				}
				epoch++
				if err := tbl.Seal(epoch); err != nil {
					rt.Fatal(err)
				}
				if err := s.Commit(ctx, epoch, nil); err != nil {
					rt.Fatal(err)
				}
				if to > 0 && rapid.Bool().Draw(rt, fmt.Sprint("prune", step)) {
					s.PruneTail(desc.ID, log[to-1].seq)
				}
				applied = to
			}
			checkSnapshot(rt, s, desc, true, latest, nil)
			checkSnapshot(rt, s, desc, false, committed, nil)
			checkLatestGet(rt, s, desc, latest)
			withOwn := maps.Clone(latest)
			for k, r := range ownRows {
				if r == nil {
					delete(withOwn, k)
				} else {
					withOwn[k] = r
				}
			}
			checkSnapshot(rt, s, desc, true, withOwn, own)
		}
	})
}

func checkSnapshot(rt *rapid.T, s *Store, desc TableDesc, latest bool, want map[string]types.Row, own *OwnWrites) {
	ctx := context.Background()
	var sn *Snapshot
	var err error
	if latest {
		sn, err = s.LatestSnapshot(ctx, true)
	} else {
		sn, err = s.Snapshot()
	}
	if err != nil {
		rt.Fatal(err)
	}
	defer sn.Close()
	if own != nil {
		if err := sn.Overlay(own); err != nil {
			rt.Fatal(err)
		}
	}
	var exp, expRange []string
	for _, r := range want {
		exp = append(exp, fmt.Sprint(r))
		if k := r[0].(int64); k >= 2 && k < 5 {
			expRange = append(expRange, fmt.Sprint(r))
		}
	}
	slices.Sort(exp)
	slices.Sort(expRange)
	if got := rowsOf(rt)(sn.ScanTable(ctx, desc)); !slices.Equal(got, exp) {
		rt.Fatalf("latest=%v scan %v, want %v", latest, got, exp)
	}
	// A range of the first key column: 2 <= k < 5.
	got := rowsOf(rt)(sn.ScanRange(ctx, desc, nil, &Bound{Value: int64(2), Inclusive: true}, &Bound{Value: int64(5)}))
	if !slices.Equal(got, expRange) {
		rt.Fatalf("latest=%v range [2, 5) %v, want %v", latest, got, expRange)
	}
	for k := range int64(7) {
		r, ok, err := sn.Get(ctx, desc, types.Row{k, "x"})
		if err != nil {
			rt.Fatal(err)
		}
		w, wok := want[fmt.Sprint(k, "/x")]
		if ok != wok || (ok && fmt.Sprint(r) != fmt.Sprint(w)) {
			rt.Fatalf("latest=%v get %d = %v %v, want %v %v", latest, k, r, ok, w, wok)
		}
	}
}

// checkLatestGet reads every key through LatestGet and checks it against
// the latest model: a row in the tail, a tombstone in the tail over a
// committed row, a row the tail was pruned of, and no row at all.
func checkLatestGet(rt *rapid.T, s *Store, desc TableDesc, want map[string]types.Row) {
	for k := range int64(7) {
		r, ok, err := s.LatestGet(context.Background(), desc, types.Row{k, "x"})
		if err != nil {
			rt.Fatal(err)
		}
		w, wok := want[fmt.Sprint(k, "/x")]
		if ok != wok || (ok && fmt.Sprint(r) != fmt.Sprint(w)) {
			rt.Fatalf("LatestGet %d = %v %v, want %v %v", k, r, ok, w, wok)
		}
	}
}

// allVNodeBits is a bitmap of every vnode.
func allVNodeBits() types.Bitmap {
	var all types.Bitmap
	for v := 0; v < codec.VNodeCount; v++ {
		all.Set(v)
	}
	return all
}

// rowsOf returns a function that drains a scan (as it returned, with its
// error) into sorted rows printed as text.
func rowsOf(rt *rapid.T) func(Iterator, error) []string {
	return func(it Iterator, err error) []string { return rowStrings(rt, it, err) }
}

func rowStrings(rt *rapid.T, it Iterator, err error) []string {
	if err != nil {
		rt.Fatal(err)
	}
	var out []string
	for {
		r, ok, err := it.Next()
		if err != nil {
			rt.Fatal(err)
		}
		if !ok {
			break
		}
		out = append(out, fmt.Sprint(r))
	}
	_ = it.Close()
	slices.Sort(out)
	return out
}

// TestPruneTailInBatches prunes more writes than fit in one hold of the
// tails' lock: all of them must go, and the writes after through stay.
func TestPruneTailInBatches(t *testing.T) {
	defer func(n int) { pruneBatch = n }(pruneBatch)
	pruneBatch = 3
	ctx := context.Background()
	s := openMem(t, nil)
	desc := kvDesc(7)
	var seqs []uint64
	for k := range int64(11) {
		b := types.NewBuilder(desc.Types, 4)
		b.Append(types.Insert, types.Row{k, "x", k})
		seq, err := s.WriteDML(ctx, desc.ID, DMLWrite{Payload: []byte{1}, Tail: &desc, Rows: b.Take()})
		if err != nil {
			t.Fatal(err)
		}
		seqs = append(seqs, seq)
	}
	s.PruneTail(desc.ID, seqs[9])
	if n := s.TailLen(desc.ID); n != 1 {
		t.Fatalf("after pruning 10 of 11 writes in batches of 3: the tail holds %d, want 1", n)
	}
	s.PruneTail(desc.ID, seqs[10])
	if n := s.TailLen(desc.ID); n != 0 {
		t.Fatalf("after pruning every write: the tail holds %d", n)
	}
}

// TestTailKeepsTheNewerWriteOnReplay: recovery replays log records into
// a tail that may already hold a newer record's write of the same key;
// the older record must not replace it, nor be pruned as its write.
func TestTailKeepsTheNewerWriteOnReplay(t *testing.T) {
	ctx := context.Background()
	s := openMem(t, nil)
	desc := kvDesc(7)
	applyTailRow(t, s, desc, 5, types.Row{int64(1), "x", int64(50)})
	applyTailRow(t, s, desc, 3, types.Row{int64(1), "x", int64(30)}) // replayed after the newer one
	got, ok, err := s.LatestGet(ctx, desc, types.Row{int64(1), "x"})
	if err != nil || !ok || got[2].(int64) != 50 {
		t.Fatalf("after replaying seq 3 over seq 5: %v, found %v, err %v; want v = 50", got, ok, err)
	}
	s.PruneTail(desc.ID, 4)
	if got, ok, _ := s.LatestGet(ctx, desc, types.Row{int64(1), "x"}); !ok || got[2].(int64) != 50 {
		t.Fatalf("after pruning through 4: %v, found %v; want seq 5's v = 50 still in the tail", got, ok)
	}
}

// TestPruneKeepsANewerWriteAppliedFirst: a replayed record applied after
// a newer one (of another key) puts a lower seq last in the tail's order;
// a prune through the older one must still keep the newer write.
func TestPruneKeepsANewerWriteAppliedFirst(t *testing.T) {
	ctx := context.Background()
	s := openMem(t, nil)
	desc := kvDesc(7)
	applyTailRow(t, s, desc, 5, types.Row{int64(1), "x", int64(1)})
	applyTailRow(t, s, desc, 3, types.Row{int64(2), "x", int64(2)})
	s.PruneTail(desc.ID, 4)
	if _, ok, err := s.LatestGet(ctx, desc, types.Row{int64(1), "x"}); err != nil || !ok {
		t.Fatalf("key 1, written by seq 5, after a prune through 4: found %v, err %v", ok, err)
	}
}

// applyTailRow applies a one-row insert record of seq to desc's tail, as
// recovery's replay does.
func applyTailRow(t *testing.T, s *Store, desc TableDesc, seq uint64, row types.Row) {
	t.Helper()
	b := types.NewBuilder(desc.Types, 4) // more than it holds: Append would cut the chunk
	b.Append(types.Insert, row)
	if err := s.ApplyTail(desc, seq, b.Take(), false); err != nil {
		t.Fatal(err)
	}
}
