package session

import (
	"context"
	"fmt"
	"strings"

	"github.com/sluice-db/sluice/internal/catalog"
	"github.com/sluice-db/sluice/internal/engine"
	"github.com/sluice-db/sluice/internal/expr"
	"github.com/sluice-db/sluice/internal/sql/planner"
	"github.com/sluice-db/sluice/internal/sqlerr"
	"github.com/sluice-db/sluice/internal/storage"
	"github.com/sluice-db/sluice/internal/types"
	"github.com/sluice-db/sluice/internal/types/codec"
)

// insertChanges turns an INSERT's proposed rows into the changes to write,
// against the table's latest state sn (read under the table's lock), as
// Postgres does for a primary key: a proposed row whose key is taken —
// stored, or proposed earlier in the statement — fails the statement with
// 23505, is skipped (ON CONFLICT DO NOTHING), or updates the stored row
// (DO UPDATE, an update pair). n counts the rows inserted or updated. A
// table without a declared primary key (hidden row ids) takes every row.
func (s *Session) insertChanges(ctx context.Context, sn keyReader, ins *planner.Insert, rows []types.Row) (*types.Chunk, int, error) {
	b := types.NewUnboundedBuilder(visibleTypes(ins.Table))
	for _, r := range rows {
		b.Append(types.Insert, r)
	}
	return s.insertChunk(ctx, sn, ins, b.Take())
}

// keyReader reads a table's rows by primary key: a snapshot of the latest
// state, or that state read directly (engine.LatestRows) by a statement
// that holds the table's write lock and reads nothing else.
type keyReader interface {
	Get(ctx context.Context, desc storage.TableDesc, pk types.Row) (types.Row, bool, error)
}

// hasDeclaredPK reports whether rel's primary key is its own columns (not
// a hidden row id).
func hasDeclaredPK(rel *catalog.Relation) bool {
	return len(rel.PK) > 0 && len(visibleTypes(rel)) == len(rel.Columns)
}

// insertChunk is insertChanges over proposed rows held as a chunk of
// inserts (COPY's).
func (s *Session) insertChunk(ctx context.Context, sn keyReader, ins *planner.Insert, in *types.Chunk) (*types.Chunk, int, error) {
	if in == nil {
		return nil, 0, nil
	}
	rel := ins.Table
	// Type modifiers first: RETURNING sees the rows as stored.
	if err := engine.Conform(rel, in); err != nil {
		return nil, 0, err
	}
	if !hasDeclaredPK(rel) {
		return in, in.Cardinality(), nil
	}
	b := types.NewUnboundedBuilder(visibleTypes(rel))
	up, err := newConflictUpdate(ins.OnConflict, s.now())
	if err != nil {
		return nil, 0, err
	}
	desc := storage.TableDesc(rel.Table)
	keys := newPKReader(rel)
	proposed := newProposedKeys(in.Capacity())
	// Without ON CONFLICT every proposed row is inserted or the statement
	// fails: the changes are in itself, and no row is copied (a bulk COPY's
	// rows were boxed and built into a second chunk).
	plain := ins.OnConflict == nil
	// DO UPDATE fails a key's second proposal only when the first inserted
	// or updated a row (one turned away by WHERE changed nothing), as
	// Postgres does; its keys so touched.
	var touched map[string]struct{}
	if !plain && !ins.OnConflict.DoNothing {
		touched = map[string]struct{}{}
	}
	n := 0
	for i := range in.Capacity() {
		if i%256 == 255 && ctx.Err() != nil {
			return nil, 0, ctx.Err()
		}
		pk, key, err := keys.read(in, i)
		if err != nil {
			return nil, 0, err
		}
		if touched != nil {
			if _, ok := touched[string(key)]; ok {
				return nil, 0, errAffectTwice()
			}
		} else if proposed.add(key) {
			if !plain {
				continue // DO NOTHING: the first proposal is taken
			}
			return nil, 0, keys.duplicate(pk)
		}
		old, found, err := sn.Get(ctx, desc, pk)
		if err != nil {
			return nil, 0, err
		}
		switch {
		case !found:
			if !plain {
				b.Append(types.Insert, in.Row(i))
			}
			if touched != nil {
				touched[string(key)] = struct{}{}
			}
			n++
		case plain:
			return nil, 0, keys.duplicate(pk)
		case ins.OnConflict.DoNothing:
		default:
			nu, ok, err := up.apply(old, in.Row(i))
			if err != nil {
				return nil, 0, err
			}
			if ok {
				b.Append(types.UpdateDelete, old)
				b.Append(types.UpdateInsert, nu)
				touched[string(key)] = struct{}{}
				n++
			}
		}
	}
	if plain {
		return in, n, nil
	}
	return b.Take(), n, nil
}

// pkReader reads a table's primary keys out of chunks of its rows (every
// visible column: the table has a declared primary key), as datums and
// encoded, into buffers it reuses: a key read is valid until the next.
type pkReader struct {
	rel    *catalog.Relation
	types  []types.Type
	orders []codec.Order
	pk     types.Row
	key    []byte
}

func newPKReader(rel *catalog.Relation) *pkReader {
	r := &pkReader{rel: rel, types: make([]types.Type, len(rel.PK)), orders: make([]codec.Order, len(rel.PK)),
		pk: make(types.Row, len(rel.PK))}
	for i, c := range rel.PK {
		r.types[i] = rel.Columns[c].Type
	}
	return r
}

// read returns row i's key.
func (r *pkReader) read(c *types.Chunk, i int) (types.Row, []byte, error) {
	for j, col := range r.rel.PK {
		r.pk[j] = c.Cols[col].Get(i)
	}
	var err error
	r.key, err = codec.EncodeKey(r.key[:0], r.pk, r.types, r.orders)
	return r.pk, r.key, err
}

// readRow returns row's key, as read does.
func (r *pkReader) readRow(row types.Row) (types.Row, []byte, error) {
	for j, col := range r.rel.PK {
		r.pk[j] = row[col]
	}
	var err error
	r.key, err = codec.EncodeKey(r.key[:0], r.pk, r.types, r.orders)
	return r.pk, r.key, err
}

// duplicate is the 23505 error of key pk.
func (r *pkReader) duplicate(pk types.Row) error { return duplicateKey(r.rel, pk, r.types) }

// duplicateKey is Postgres's unique violation of the primary key.
func duplicateKey(rel *catalog.Relation, pk types.Row, ts []types.Type) error {
	names, vals := make([]string, len(rel.PK)), make([]string, len(rel.PK))
	for i, c := range rel.PK {
		names[i] = rel.Columns[c].Name
		vals[i] = types.FormatDatum(pk[i], ts[i])
	}
	return sqlerr.Errorf(sqlerr.Code("23505"), "duplicate key value violates unique constraint %q", rel.Name+"_pkey").
		WithDetail(fmt.Sprintf("Key (%s)=(%s) already exists.", strings.Join(names, ", "), strings.Join(vals, ", ")))
}

// conflictUpdate evaluates DO UPDATE SET … WHERE over (existing, excluded).
type conflictUpdate struct {
	oc    *planner.OnConflict
	set   []expr.Expr
	where expr.Expr
	ectx  *expr.Context
}

func newConflictUpdate(oc *planner.OnConflict, now types.DTimestamptz) (*conflictUpdate, error) {
	u := &conflictUpdate{oc: oc, ectx: &expr.Context{Strict: true, Now: now}}
	if oc == nil || oc.DoNothing {
		return u, nil
	}
	u.set = make([]expr.Expr, len(oc.Set))
	for i, d := range oc.Set {
		if d == nil {
			continue
		}
		e, err := expr.Build(*d, oc.Input)
		if err != nil {
			return nil, err
		}
		u.set[i] = e
	}
	if oc.Where != nil {
		e, err := expr.Build(*oc.Where, oc.Input)
		if err != nil {
			return nil, err
		}
		u.where = e
	}
	return u, nil
}

// apply returns the updated row, or ok=false when WHERE rejects it.
func (u *conflictUpdate) apply(old, excluded types.Row) (types.Row, bool, error) {
	in := append(append(make(types.Row, 0, len(old)+len(excluded)), old...), excluded...)
	if u.where != nil {
		v, err := expr.EvalRow(u.ectx, u.where, in, u.oc.Input)
		if err != nil {
			return nil, false, err
		}
		if b, ok := v.(bool); !ok || !b {
			return nil, false, nil
		}
	}
	nu := append(types.Row(nil), old...)
	for i, e := range u.set {
		if e == nil {
			continue
		}
		v, err := expr.EvalRow(u.ectx, e, in, u.oc.Input)
		if err != nil {
			return nil, false, err
		}
		nu[i] = v
	}
	return nu, true, nil
}
