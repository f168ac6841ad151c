package session

import (
	"bytes"
	"cmp"
	"context"
	"hash/maphash"
	"slices"

	"github.com/sluice-db/sluice/internal/catalog"
	"github.com/sluice-db/sluice/internal/engine"
	"github.com/sluice-db/sluice/internal/sql/planner"
	"github.com/sluice-db/sluice/internal/sqlerr"
	"github.com/sluice-db/sluice/internal/storage"
	"github.com/sluice-db/sluice/internal/types"
	"github.com/sluice-db/sluice/internal/types/codec"
)

// `INSERT INTO t SELECT … ON CONFLICT DO NOTHING`, the idempotent bulk
// load, collected every proposed row (conflict.go) before writing any:
// ten million rows were held boxed. It now writes pieces, as a plain
// INSERT … SELECT does (insertQueryPieces): before a piece is prepared,
// its rows whose key the table holds (in the statement's snapshot) or an
// earlier row of the statement proposed are dropped, as Postgres's DO
// NOTHING drops them (the first proposal wins). The statement's keys are
// kept as sorted runs (keyRuns): of int64s for a key of one bigint (8
// bytes a key), else of the keys' encodings (codec.EncodeKey: the
// identity the table's rows have).

// skipsInPieces reports whether ins is an INSERT … SELECT … ON CONFLICT DO
// NOTHING that insertQueryPieces writes in pieces (skipTaken).
func skipsInPieces(ins *planner.Insert) bool {
	return ins.OnConflict != nil && ins.OnConflict.DoNothing
}

// skipFilter returns the filter that drops the rows of each piece whose
// key is taken, or nil when rel has no declared key (no row conflicts).
func skipFilter(ctx context.Context, sn *storage.Snapshot, rel *catalog.Relation) func(*types.Chunk) (*types.Chunk, error) {
	switch {
	case !hasDeclaredPK(rel):
		return nil
	case oneBigintKey(rel):
		return newSkipTaken(ctx, sn, rel, int64Keys(rel.PK[0])).filter
	default:
		return newSkipTaken(ctx, sn, rel, encodedKeys(newPKReader(rel))).filter
	}
}

// oneBigintKey reports whether rel's primary key is one bigint column.
func oneBigintKey(rel *catalog.Relation) bool {
	return len(rel.PK) == 1 && rel.Columns[rel.PK[0]].Type == types.TInt64
}

// pieceKeys reads the keys of a piece's rows: each row's key as K, which
// orders and compares keys as the table does, and as the datums that
// Snapshot.Get takes (valid until the next call).
type pieceKeys[K cmp.Ordered] struct {
	all func(c *types.Chunk, dst []K) ([]K, error)
	pk  func(c *types.Chunk, i int) (types.Row, error)
	// hashed: the statement's keys are best found by hash first (keyRuns)
	hashed bool
	// vnodes, when set, returns the vnodes of keys: a key of one bigint
	// is stored in the order of (vnode, key), which spares encoding it.
	vnodes func(keys []K) []uint16
}

// int64Keys reads a key of one bigint, column col.
func int64Keys(col int) pieceKeys[int64] {
	pk := make(types.Row, 1)
	return pieceKeys[int64]{
		vnodes: func(keys []int64) []uint16 {
			vn := make([]uint16, len(keys))
			for i, h := range codec.HashInt64s(keys, nil) {
				vn[i] = codec.VNodeOf(h)
			}
			return vn
		},
		all: func(c *types.Chunk, dst []int64) ([]int64, error) {
			vec, ok := c.Cols[col].(*types.Vec[int64])
			if !ok {
				return nil, errNotInt64Key
			}
			return append(dst, vec.Vals...), nil
		},
		pk: func(c *types.Chunk, i int) (types.Row, error) {
			pk[0] = c.Cols[col].(*types.Vec[int64]).Vals[i]
			return pk, nil
		},
	}
}

// encodedKeys reads any key, as its encoding.
func encodedKeys(r *pkReader) pieceKeys[string] {
	return pieceKeys[string]{
		hashed: true,
		all: func(c *types.Chunk, dst []string) ([]string, error) {
			for i := range c.Capacity() {
				_, key, err := r.read(c, i)
				if err != nil {
					return nil, err
				}
				dst = append(dst, string(key))
			}
			return dst, nil
		},
		pk: func(c *types.Chunk, i int) (types.Row, error) {
			pk, _, err := r.read(c, i)
			return pk, err
		},
	}
}

// keyedPieces reads the keys of a statement's pieces, in key order, and
// remembers the keys of earlier pieces.
type keyedPieces[K cmp.Ordered] struct {
	ctx  context.Context
	sn   *storage.Snapshot
	rel  *catalog.Relation
	desc storage.TableDesc
	keys pieceKeys[K]
	seen keyRuns[K] // the keys of earlier pieces' rows
	// A piece's keys, where its rows are stored (storage.AppendPointKey),
	// and its rows' indexes in that order (a key's proposals in their
	// order), reused piece after piece.
	piece  []K
	stored []byte
	ends   []int
	order  []int
}

func newKeyedPieces[K cmp.Ordered](ctx context.Context, sn *storage.Snapshot, rel *catalog.Relation, keys pieceKeys[K]) keyedPieces[K] {
	return keyedPieces[K]{ctx: ctx, sn: sn, rel: rel, desc: storage.TableDesc(rel.Table), keys: keys, seen: keyRuns[K]{hashed: keys.hashed}}
}

// sort conforms c (a piece) to the table's columns, reads its keys into
// d.piece and orders its rows by where they are stored into d.order: the
// table is read in the order of its files (a key the log's tail holds in
// a run, the common case just after a load, was a block read each), and
// a key's rows stand together, in their order.
func (d *keyedPieces[K]) sort(c *types.Chunk) error {
	if err := engine.Conform(d.rel, c); err != nil {
		return err // a NULL key: 23502, as Postgres
	}
	if c.HasVisibility() {
		return errPieceVisibility
	}
	var err error
	if d.piece, err = d.keys.all(c, d.piece[:0]); err != nil {
		return err
	}
	d.stored, d.ends, d.order = d.stored[:0], d.ends[:0], d.order[:0]
	if d.keys.vnodes != nil {
		keys, vn := d.piece, d.keys.vnodes(d.piece)
		for i := range keys {
			d.order = append(d.order, i)
		}
		slices.SortFunc(d.order, func(a, b int) int {
			return cmp.Or(cmp.Compare(vn[a], vn[b]), cmp.Compare(keys[a], keys[b]), a-b)
		})
		return nil
	}
	for i := range d.piece {
		pk, err := d.keys.pk(c, i)
		if err != nil {
			return err
		}
		if d.stored, err = storage.AppendPointKey(d.stored, d.desc, pk); err != nil {
			return err
		}
		d.ends, d.order = append(d.ends, len(d.stored)), append(d.order, i)
	}
	slices.SortFunc(d.order, func(a, b int) int { return cmp.Or(bytes.Compare(d.storedKey(a), d.storedKey(b)), a-b) })
	return nil
}

// storedKey returns where row i of the piece is stored.
func (d *keyedPieces[K]) storedKey(i int) []byte {
	start := 0
	if i > 0 {
		start = d.ends[i-1]
	}
	return d.stored[start:d.ends[i]]
}

// get reads the table's row with row i's key.
func (d *keyedPieces[K]) get(c *types.Chunk, i int) (types.Row, bool, error) {
	pk, err := d.keys.pk(c, i)
	if err != nil {
		return nil, false, err
	}
	return d.sn.Get(d.ctx, d.desc, pk)
}

// skipTaken drops the rows of each piece whose key is taken.
type skipTaken[K cmp.Ordered] struct{ keyedPieces[K] }

func newSkipTaken[K cmp.Ordered](ctx context.Context, sn *storage.Snapshot, rel *catalog.Relation, keys pieceKeys[K]) *skipTaken[K] {
	return &skipTaken[K]{newKeyedPieces(ctx, sn, rel, keys)}
}

// filter returns the rows of c (a piece, checked and conformed to the
// table's columns first) whose keys are free, in their order. It visits
// the piece's keys in their order, each once: the first of a key's rows
// is kept when neither an earlier piece nor the table has the key.
func (d *skipTaken[K]) filter(c *types.Chunk) (*types.Chunk, error) {
	if err := d.sort(c); err != nil {
		return nil, err
	}
	keys := d.piece
	var keep []int
	var kept []K
	for j, i := range d.order {
		if j%256 == 255 && d.ctx.Err() != nil {
			return nil, d.ctx.Err()
		}
		if j > 0 && keys[i] == keys[d.order[j-1]] {
			continue // proposed before in this piece
		}
		if d.seen.has(keys[i]) {
			continue
		}
		if _, found, err := d.get(c, i); err != nil {
			return nil, err
		} else if !found {
			// Only the kept keys are remembered: a later proposal of a
			// key the table holds finds it there again (a reload of rows
			// the table has keeps no key).
			keep, kept = append(keep, i), append(kept, keys[i])
		}
	}
	slices.Sort(kept)
	d.seen.add(kept)
	if len(keep) == c.Capacity() {
		return c, nil
	}
	slices.Sort(keep)
	return gatherRows(c, keep), nil
}

// errPieceVisibility is a bug: a piece with hidden rows (a Builder's
// chunks have none).
var errPieceVisibility = sqlerr.New(sqlerr.Internal, "bulk statement: a piece has hidden rows")

// keyRuns is a set of keys kept as sorted runs, merged as a binary
// counter is carried: a set of n keys added in pieces has about log n
// runs, and a key is looked up in each. A set of the keys' 64-bit hashes
// answers most lookups of a key it does not hold first: the binary
// searches over text keys were 1.6 of 8.4 CPU s of a million-key DO
// NOTHING.
type keyRuns[K cmp.Ordered] struct {
	runs   [][]K
	hashed bool // keep the hashes (not for int64s: their searches are cheap)
	seed   maphash.Seed
	hashes map[uint64]struct{}
}

func (r *keyRuns[K]) has(k K) bool {
	if r.hashed {
		if _, ok := r.hashes[maphash.Comparable(r.seed, k)]; !ok {
			return false
		}
	}
	for _, run := range r.runs {
		if _, ok := slices.BinarySearch(run, k); ok {
			return true
		}
	}
	return false
}

// add adds sorted keys none of which the set holds.
func (r *keyRuns[K]) add(sorted []K) {
	if len(sorted) == 0 {
		return
	}
	if r.hashed && r.hashes == nil {
		r.seed, r.hashes = maphash.MakeSeed(), make(map[uint64]struct{}, len(sorted))
	}
	for _, k := range sorted {
		if r.hashed {
			r.hashes[maphash.Comparable(r.seed, k)] = struct{}{}
		}
	}
	r.runs = append(r.runs, sorted)
	for n := len(r.runs); n >= 2 && len(r.runs[n-2]) <= len(r.runs[n-1]); n = len(r.runs) {
		a, b := r.runs[n-2], r.runs[n-1]
		merged := make([]K, 0, len(a)+len(b))
		for len(a) > 0 && len(b) > 0 {
			if a[0] < b[0] {
				merged, a = append(merged, a[0]), a[1:]
			} else {
				merged, b = append(merged, b[0]), b[1:]
			}
		}
		merged = append(append(merged, a...), b...)
		r.runs = append(r.runs[:n-2], merged)
	}
}
