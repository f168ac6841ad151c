package storage

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"pgregory.net/rapid"

	"github.com/sluice-db/sluice/internal/types"
	"github.com/sluice-db/sluice/internal/types/codec"
)

// TestFreshRunsMatchModel drives a table keyed by a hidden row id as the
// engine does: records of fresh inserts (runs), records updating or
// deleting rows, and commits of a prefix of the log that may cut a record
// (the table source's partial rows), each followed by a prune. A latest
// snapshot, trimmed by the committed position as the engine trims it, must
// equal the model of every record, by scan, by range and by point read.
func TestFreshRunsMatchModel(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		ctx := context.Background()
		s := openMem(t, nil)
		desc := TableDesc{ID: 5, Types: []types.Type{types.TInt64, types.TInt64}, PK: []int{1}, DistKey: []int{1}}
		tbl := mustOpenTable(t, s, desc, ActorID(1), allVNodeBits())
		type rec struct {
			seq   uint64
			c     *types.Chunk
			fresh bool
		}
		var log []rec
		latest := map[int64]types.Row{}
		next := int64(1)
		// Committed position: whole records before doneRec, plus doneRows
		// rows of log[doneRec].
		doneRec, doneRows, epoch := 0, 0, uint64(0)
		applyRow := func(m map[int64]types.Row, c *types.Chunk, i int) {
			r := c.Row(i)
			if c.Op(i).IsInsert() {
				m[r[1].(int64)] = r
			} else {
				delete(m, r[1].(int64))
			}
		}
		for step := range rapid.IntRange(1, 30).Draw(rt, "steps") {
			b := types.NewBuilder(desc.Types, 64)
			fresh := false
			switch op := rapid.IntRange(0, 4).Draw(rt, fmt.Sprint("op", step)); {
			case op <= 1 || len(latest) == 0:
				fresh = true
				for range rapid.IntRange(1, 6).Draw(rt, fmt.Sprint("n", step)) {
					b.Append(types.Insert, types.Row{int64(step), next})
					next++
				}
			case op == 2:
				keys := slices.Sorted(func(yield func(int64) bool) {
					for k := range latest {
						if !yield(k) {
							return
						}
					}
				})
				k := keys[rapid.IntRange(0, len(keys)-1).Draw(rt, fmt.Sprint("k", step))]
				if rapid.Bool().Draw(rt, fmt.Sprint("del", step)) {
					b.Append(types.Delete, latest[k])
				} else {
					b.Append(types.UpdateDelete, latest[k])
					b.Append(types.UpdateInsert, types.Row{int64(-step), k})
				}
			default: // commit a prefix, maybe cutting a record
				to := rapid.IntRange(doneRec, len(log)).Draw(rt, fmt.Sprint("to", step))
				cut := 0
				if to < len(log) {
					cut = rapid.IntRange(0, log[to].c.Capacity()-1).Draw(rt, fmt.Sprint("cut", step))
				}
				for j := doneRec; j <= to && j < len(log); j++ {
					from, end := 0, log[j].c.Capacity()
					if j == doneRec {
						from = doneRows
					}
					if j == to {
						end = cut
					}
					for i := from; i < end; i++ {
						r := log[j].c.Row(i)
						var err error
						if log[j].c.Op(i).IsInsert() {
							err = tbl.Insert(r)
						} else {
							err = tbl.Delete(r)
						}
						if err != nil {
							rt.Fatal(err)
						}
					}
				}
				if to > doneRec || cut > doneRows {
					doneRec, doneRows = to, cut
				}
				epoch++
				if err := tbl.Seal(epoch); err != nil {
					rt.Fatal(err)
				}
				if err := s.Commit(ctx, epoch, nil); err != nil {
					rt.Fatal(err)
				}
				if rapid.Bool().Draw(rt, fmt.Sprint("prune", step)) && doneRec > 0 {
					s.PruneTail(desc.ID, log[doneRec-1].seq)
				}
			}
			if c := b.Take(); c != nil {
				w := DMLWrite{Payload: []byte{1}, Tail: &desc, Rows: c, Fresh: fresh}
				if fresh && rapid.Bool().Draw(rt, fmt.Sprint("encoded", step)) {
					w.Encoded = encodeWithGaps(rt, c, desc.Types)
				}
				seq, err := s.WriteDML(ctx, desc.ID, w)
				if err != nil {
					rt.Fatal(err)
				}
				log = append(log, rec{seq, c, fresh})
				for i := range c.Capacity() {
					applyRow(latest, c, i)
				}
			}
			checkFresh(rt, s, desc, latest, log, doneRec, doneRows, func(l []rec, j int) uint64 { return l[j].seq })
		}
	})
}

// encodeWithGaps encodes c's rows as EncodedRows, with a byte between
// rows as a payload has (its op and length).
func encodeWithGaps(rt *rapid.T, c *types.Chunk, ts []types.Type) *EncodedRows {
	e := &EncodedRows{}
	for i := range c.Capacity() {
		e.Buf = append(e.Buf, 0xee)
		start := len(e.Buf)
		var err error
		if e.Buf, err = codec.EncodeValue(e.Buf, c.Row(i), ts); err != nil {
			rt.Fatal(err)
		}
		e.Spans = append(e.Spans, uint32(start), uint32(len(e.Buf)))
	}
	return e
}

func checkFresh[R any](rt *rapid.T, s *Store, desc TableDesc, want map[int64]types.Row, log []R, doneRec, doneRows int, seqOf func([]R, int) uint64) {
	ctx := context.Background()
	sn, err := s.LatestSnapshot(ctx, true)
	if err != nil {
		rt.Fatal(err)
	}
	defer sn.Close()
	var through uint64
	if doneRec > 0 {
		through = seqOf(log, doneRec-1)
	}
	sn.TrimFresh(desc.ID, through, doneRows)
	var exp, expRange []string
	for k, r := range want {
		exp = append(exp, fmt.Sprint(r))
		if k >= 3 && k <= 8 {
			expRange = append(expRange, fmt.Sprint(r))
		}
	}
	slices.Sort(exp)
	slices.Sort(expRange)
	if got := rowsOf(rt)(sn.ScanTable(ctx, desc)); !slices.Equal(got, exp) {
		rt.Fatalf("scan %v, want %v", got, exp)
	}
	if got := rowsOf(rt)(sn.ScanRange(ctx, desc, nil, &Bound{Value: int64(3), Inclusive: true}, &Bound{Value: int64(8), Inclusive: true})); !slices.Equal(got, expRange) {
		rt.Fatalf("range [3, 8] %v, want %v", got, expRange)
	}
	for k := range int64(12) {
		r, ok, err := sn.Get(ctx, desc, types.Row{k})
		if err != nil {
			rt.Fatal(err)
		}
		w, wok := want[k]
		if ok != wok || ok && fmt.Sprint(r) != fmt.Sprint(w) {
			rt.Fatalf("get %d = %v %v, want %v %v", k, r, ok, w, wok)
		}
		if got := rowsOf(rt)(sn.Scan(ctx, desc, types.Row{k})); wok != (len(got) == 1) {
			rt.Fatalf("prefix scan %d = %v, want %v", k, got, w)
		}
	}
}
