package source

import (
	"context"
	"fmt"
	"slices"

	"github.com/sluice-db/sluice/internal/plan"
	"github.com/sluice-db/sluice/internal/storage"
	"github.com/sluice-db/sluice/internal/types"
)

// OffsetTable returns the shape a table source's OffsetTable must have: one
// row per log split, (split int, last_seq bigint, partial_rows bigint),
// keyed by split. A row (s, q, r) means every record of the log with seq ≤
// q is applied, plus the first r rows of the first record after q (a record
// larger than a chunk may be cut by a barrier). The playground reads the
// whole log as split 0. The planner builds it with this function so both
// sides agree.
func OffsetTable(id uint32) plan.Table {
	return plan.Table{
		ID:    id,
		Types: []types.Type{types.TInt32, types.TInt64, types.TInt64},
		PK:    []int{0},
	}
}

func checkOffsetTable(t plan.Table) error {
	return checkShape(t, OffsetTable(t.ID), "offset", "OffsetTable")
}

// checkShape checks a system table the planner built against want, the
// shape the function maker returns; what names the table in errors.
func checkShape(t, want plan.Table, what, maker string) error {
	if !slices.Equal(t.Types, want.Types) || !slices.Equal(t.PK, want.PK) || len(t.DistKey) != 0 {
		return fmt.Errorf("source: %s table %d has types %v pk %v dist %v; want source.%s's shape %v pk %v",
			what, t.ID, t.Types, t.PK, t.DistKey, maker, want.Types, want.PK)
	}
	return nil
}

// logPos is a position in a DML log: records with seq ≤ seq are consumed,
// and so are the first rows rows of the first record after seq.
type logPos struct {
	seq  uint64
	rows int
}

// readLogPos reads split's committed position (zero if none).
func readLogPos(ctx context.Context, t *storage.StateTable, split int64) (logPos, error) {
	row, ok, err := t.Get(ctx, types.Row{split})
	if err != nil || !ok {
		return logPos{}, err
	}
	return posOfRow(row)
}

func posOfRow(row types.Row) (logPos, error) {
	seq, ok1 := row[1].(int64)
	rows, ok2 := row[2].(int64)
	if !ok1 || !ok2 || seq < 0 || rows < 0 {
		return logPos{}, fmt.Errorf("source: malformed offset row %v", row)
	}
	return logPos{seq: uint64(seq), rows: int(rows)}, nil
}

func writeLogPos(t *storage.StateTable, split int64, p logPos) error {
	return t.Insert(types.Row{split, int64(p.seq), int64(p.rows)})
}

// TruncateCommitted deletes the records of table tableID's DML log that
// every split of the table's source has consumed as of the latest committed
// epoch, and returns the seq it truncated through (0 = nothing). The engine
// calls it after a commit (any time is safe: it reads the offsets from a
// committed snapshot, so a record is deleted only once an epoch that has
// applied it is durable; recovery replays from that epoch's offsets, which
// are past the deleted records). A record the source has cut with a barrier
// (partial_rows > 0) is kept.
func TruncateCommitted(ctx context.Context, store *storage.Store, tableID uint32, offsets plan.Table) (uint64, error) {
	if err := checkOffsetTable(offsets); err != nil {
		return 0, err
	}
	through, ok, err := committedMinSeq(ctx, store, offsets)
	if err != nil || !ok || through == 0 {
		return 0, err
	}
	if err := store.TruncateDML(ctx, tableID, through); err != nil {
		return 0, fmt.Errorf("source: truncate dml log of table %d: %w", tableID, err)
	}
	return through, nil
}

// PositionIn returns the table source's position as of snapshot sn (its
// committed position): every record with seq ≤ seq is applied, and the
// first rows rows of the next one.
func PositionIn(ctx context.Context, sn *storage.Snapshot, offsets plan.Table) (seq uint64, rows int, err error) {
	if err := checkOffsetTable(offsets); err != nil {
		return 0, 0, err
	}
	row, ok, err := sn.Get(ctx, storage.TableDesc(offsets), types.Row{split})
	if err != nil || !ok {
		return 0, 0, err
	}
	p, err := posOfRow(row)
	return p.seq, p.rows, err
}

// CommittedThrough returns the seq through which the latest committed epoch
// has applied every record of the table's log (0 = none): the tail of the
// table (storage.PruneTail) may forget those records' writes.
func CommittedThrough(ctx context.Context, store *storage.Store, offsets plan.Table) (uint64, error) {
	if err := checkOffsetTable(offsets); err != nil {
		return 0, err
	}
	through, _, err := committedMinSeq(ctx, store, offsets)
	return through, err
}

// committedMinSeq returns the smallest last_seq over the committed offset
// rows; ok is false when no split has committed a position yet.
func committedMinSeq(ctx context.Context, store *storage.Store, offsets plan.Table) (uint64, bool, error) {
	sn, err := store.Snapshot()
	if err != nil {
		return 0, false, err
	}
	defer sn.Close()
	it, err := sn.ScanTable(ctx, storage.TableDesc(offsets))
	if err != nil {
		return 0, false, err
	}
	defer it.Close()
	var minSeq uint64
	found := false
	for {
		row, ok, err := it.Next()
		if err != nil {
			return 0, false, err
		}
		if !ok {
			return minSeq, found, nil
		}
		p, err := posOfRow(row)
		if err != nil {
			return 0, false, err
		}
		if !found || p.seq < minSeq {
			minSeq, found = p.seq, true
		}
	}
}
