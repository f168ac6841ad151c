package storage

import (
	"context"
	"testing"

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
		return nil
	}
	whileCommitting(t, 300, step, func(reads int) {
		if _, ok, err := s.LatestGet(ctx, desc, types.Row{int64(1), "x"}); err != nil || !ok {
			t.Fatalf("LatestGet after %d reads: found %v, err %v", reads, ok, err)
		}
	})
}
