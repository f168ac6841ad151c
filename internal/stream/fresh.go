package stream

import (
	"fmt"
	"sync/atomic"

	"github.com/sluice-db/sluice/internal/storage"
	"github.com/sluice-db/sluice/internal/types"
	"github.com/sluice-db/sluice/internal/types/codec"
)

// A bulk load into a table keyed by a hidden row id reaches the table's
// source as DML records of plain inserts with new, consecutive ids,
// already in the value encoding the table stores. The source passes such
// rows on still encoded (FreshRows, when its plan says so); the hash
// dispatcher routes them by id; the table's materialize stores them as
// they are. With no view on the table (the usual bulk load) that is all;
// with views (no-shuffle dispatchers, Downstream.CarriesFresh) it passes
// them on unchanged, and each view's Merge decodes them unless the chain
// above it takes them (FreshPassing: a SELECT * view stores them as they
// are too). No row is decoded into columns only to be encoded again, and
// every Merge hands other executors chunks only.

// FreshRows is plain inserts still in value encoding: row k is
// Rows.Buf[Rows.Spans[2k]:Rows.Spans[2k+1]], a row of the source's
// schema whose row id (column IDCol) is IDs[k]; the ids rise and no row
// ever had them.
//
// Loaded, when set, stands for a bulk load's rows instead (IDs and Rows
// are empty): its file (storage.BulkLoad), which the table source stages
// for the epoch and every actor of the table's materialize adds
// (StateTable.AddLoaded), each for its own vnodes. Dispatchers send it to
// every output; it never reaches another executor.
type FreshRows struct {
	IDCol  int
	IDs    []int64
	Rows   storage.EncodedRows
	Loaded *storage.LoadedFile
}

// Len returns the number of rows.
func (f *FreshRows) Len() int {
	if f.Loaded != nil {
		return int(f.Loaded.Rows)
	}
	return len(f.IDs)
}

// Decode returns the rows (of column types ts) as a chunk of plain
// inserts.
func (f *FreshRows) Decode(ts []types.Type) (*types.Chunk, error) {
	return f.DecodeRange(ts, 0, f.Len())
}

// DecodeRange returns rows [lo, hi) as a chunk of plain inserts.
func (f *FreshRows) DecodeRange(ts []types.Type, lo, hi int) (*types.Chunk, error) {
	return f.decode(ts, lo, hi, nil)
}

// DecodeOnly is Decode for a reader of some columns: only[i] false leaves
// column i NULL (see codec.ColumnDecoder.DecodeOnly); nil decodes all.
func (f *FreshRows) DecodeOnly(ts []types.Type, only []bool) (*types.Chunk, error) {
	return f.decode(ts, 0, f.Len(), only)
}

func (f *FreshRows) decode(ts []types.Type, lo, hi int, only []bool) (*types.Chunk, error) {
	if f.Loaded != nil {
		return nil, fmt.Errorf("stream: bulk load file %s reached an executor other than its table's", f.Loaded.Path)
	}
	n := hi - lo
	cols := make([]types.Column, len(ts))
	for j, t := range ts {
		cols[j] = types.MustColumn(t, n)
	}
	dec := codec.NewColumnDecoder(min(n, types.DefaultChunkSize))
	for k := lo; k < hi; k++ {
		v := f.Rows.Buf[f.Rows.Spans[2*k]:f.Rows.Spans[2*k+1]]
		if err := dec.DecodeOnly(v, ts, cols, only); err != nil {
			return nil, fmt.Errorf("stream: fresh row %d (id %d): %w", k, f.IDs[k], err)
		}
	}
	return types.NewChunk(cols, make([]types.Op, n)), nil
}

// split returns the rows each of n outputs gets, by dest[k] (the output
// of row k); nil for an output that gets none.
func (f *FreshRows) split(dest []int, n int) []*FreshRows {
	rows := make([]int, n)
	for _, o := range dest {
		rows[o]++
	}
	parts := make([]*FreshRows, n)
	for k, o := range dest {
		p := parts[o]
		if p == nil {
			p = &FreshRows{IDCol: f.IDCol, IDs: make([]int64, 0, rows[o]),
				Rows: storage.EncodedRows{Buf: f.Rows.Buf, Spans: make([]uint32, 0, 2*rows[o])}}
			parts[o] = p
		}
		p.IDs = append(p.IDs, f.IDs[k])
		p.Rows.Spans = append(p.Rows.Spans, f.Rows.Spans[2*k], f.Rows.Spans[2*k+1])
	}
	return parts
}

// Downstream records whether an actor's output reaches anyone, and how,
// as the actor adds and detaches dispatchers. A nil Downstream reports
// that it does, by dispatchers that cannot carry fresh rows (the safe
// answer).
type Downstream struct{ none, simple atomic.Bool }

// None reports whether the actor has no dispatcher at all.
func (d *Downstream) None() bool { return d != nil && d.none.Load() }

// CarriesFresh reports whether the actor has dispatchers and every one
// of them passes messages on unchanged to one actor (no-shuffle), so fresh
// rows reach the downstream actors that own them; their Merge decodes
// them unless the chain above it takes them (FreshPassing).
func (d *Downstream) CarriesFresh() bool { return d != nil && d.simple.Load() }

func (d *Downstream) note(ds []Dispatcher) {
	if d == nil {
		return
	}
	simple := len(ds) > 0
	for _, x := range ds {
		if _, ok := x.(*SimpleDispatcher); !ok {
			simple = false
		}
	}
	d.none.Store(len(ds) == 0)
	d.simple.Store(simple)
}

// FreshPassing is an executor that can hand its consumer FreshRows from
// its input unchanged. PassFresh is called once, when the chain is built;
// take is asked before each message and may answer differently as the
// consumer's state changes (a backfill that finishes). Whatever is not
// taken is decoded into a chunk at the Merge that received it.
type FreshPassing interface {
	PassFresh(take func() bool)
}
