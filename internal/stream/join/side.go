package join

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/sluice-db/sluice/internal/storage"
	"github.com/sluice-db/sluice/internal/types"
	"github.com/sluice-db/sluice/internal/types/codec"
)

// side is one input's state: its rows (and, on an outer side, their match
// degrees) in state tables, fronted by an LRU of join key → rows.
type side struct {
	sideSpec
	rows    stateTable
	degrees stateTable // nil unless outer
	cache   *storage.LRU[string, *keyEntry]
	// keyBuf and pkBuf are scratch space for encoded join keys and primary
	// keys, so a probe or a write through to a cached key does not allocate.
	keyBuf, pkBuf []byte
	pkRow         types.Row
	// streamed is the candidates of a probe streaming this side's rows,
	// its batch buffers kept from probe to probe (one probe runs at a
	// time).
	streamed storeCandidates
	// largeKeyRows is the most rows a cache entry holds; a key with more is
	// marked large and probed straight from the state table.
	largeKeyRows int
	// complete: every key with stored rows has a cache entry (complete.go),
	// so a key missing from the cache has no rows.
	complete bool
	exp      expiryState // with sideSpec.expiry (expiry.go)
	// uncached: the side keeps no cache and is probed from the state table
	// (adapt.go), judged from the rows stored in it (stores) and the probes
	// of it (probes) this epoch; adaptMinStores is the fewest stores that
	// can drop the cache.
	uncached       bool
	stores, probes int
	adaptMinStores int
	// deferred is rows, when rows is a deferredTable (deferred.go).
	deferred *deferredTable
}

// keyEntry caches every row stored under one join key, in primary-key
// order (the order a state-table scan returns them, so output order does
// not depend on the cache). A large entry holds no rows: the key has more
// than largeKeyRows rows, and they stay in the store.
type keyEntry struct {
	large bool
	rows  []*storedRow
	// A row is appended even when its key sorts before the last one's,
	// and rows[sorted:] are put in place before the entry is next read
	// (inOrder): two sources' interleaved row ids made most inserts into
	// a hot key's entry move the rows after them (5 % of Nexmark q4), and
	// an aggregation's flush order did the same to q5's windows (4 %).
	// mixed says rows[sorted:] is out of order. mayDup says they may
	// repeat a key (a retractable side's store of a key it holds, which
	// replaces the row): inOrder then keeps the last row of each key.
	mixed  bool
	mayDup bool
	sorted int
	// eager: a retractable side stores rows in place (see remove).
	eager bool
}

// inOrder puts rows appended out of order into primary-key order: it
// sorts them and merges them with the rows before them.
func (e *keyEntry) inOrder() {
	if !e.mixed {
		return
	}
	head, tail := e.rows[:e.sorted], e.rows[e.sorted:]
	byPK := func(a, b *storedRow) int { return strings.Compare(a.pk, b.pk) }
	if e.mayDup {
		slices.SortStableFunc(tail, byPK)
		tail = lastOfEach(tail)
	} else {
		slices.SortFunc(tail, byPK)
	}
	e.mixed, e.mayDup = false, false
	merged := make([]*storedRow, 0, cap(e.rows))
	for len(head) > 0 && len(tail) > 0 {
		switch {
		case head[0].pk < tail[0].pk:
			merged, head = append(merged, head[0]), head[1:]
		case head[0].pk == tail[0].pk: // stored again: the later row
			head = head[1:]
		default:
			merged, tail = append(merged, tail[0]), tail[1:]
		}
	}
	e.rows = append(append(merged, head...), tail...)
}

// lastOfEach keeps, of each run of rows with equal keys in sorted rows,
// the last one, in place.
func lastOfEach(rows []*storedRow) []*storedRow {
	out := rows[:0]
	for i, r := range rows {
		if i+1 < len(rows) && rows[i+1].pk == r.pk {
			continue
		}
		out = append(out, r)
	}
	clear(rows[len(out):])
	return out
}

// find returns the position of the row whose primary key is pk. The
// first row is looked at before the entry is ordered and searched: expiry
// removes the oldest rows, which are mostly first, and in Nexmark q7 the
// binary searches of hot prices' entries for them were 6 % of the CPU.
func (e *keyEntry) find(pk []byte) (int, bool) {
	if e.mayDup {
		e.inOrder() // the first row may have a later one
	}
	if len(e.rows) > 0 && e.rows[0].pk == string(pk) {
		return 0, true
	}
	e.inOrder()
	return slices.BinarySearchFunc(e.rows, pk, cmpPK)
}

// remove drops the row of pk. A removal from an entry that a
// retractable side stored out of order orders it, and makes the side
// store in place until the entry is next probed (eager): an update
// removes and stores a row in turn, and ordering the entry for each
// removal cost a merge and an allocation of the whole entry.
func (e *keyEntry) remove(pk []byte) {
	if e.mayDup {
		e.inOrder()
		e.eager = true
	}
	if i, found := e.find(pk); found {
		e.removeAt(i)
	}
}

// forProbe puts the entry in order for a probe to read, and lets a
// retractable side append to it again.
func (e *keyEntry) forProbe() {
	e.inOrder()
	if e.eager { // noRows, shared by every join, is never written
		e.eager = false
	}
}

// removeAt drops row i, as find returned it: the entry is in order
// unless i is 0.
func (e *keyEntry) removeAt(i int) {
	if i > 0 {
		e.rows = slices.Delete(e.rows, i, i+1)
		return
	}
	// Expiry removes rows oldest first, which is mostly pk order: the
	// first row goes without moving the rest (and without the write
	// barriers a move of pointers pays while the GC runs).
	e.rows[0] = nil
	e.rows = e.rows[1:]
	e.sorted = max(e.sorted-1, 0)
}

// appendRow adds a row whose key the entry does not hold (an append-only
// side's), leaving it out of order when it sorts before the last row.
func (e *keyEntry) appendRow(r *storedRow) {
	if n := len(e.rows); !e.mixed && n > 0 && r.pk < e.rows[n-1].pk {
		e.mixed, e.sorted = true, n
	}
	e.rows = append(e.rows, r)
}

// putRow adds a row, replacing any row of its key: appendRow for a side
// that may store a key it holds.
func (e *keyEntry) putRow(r *storedRow) {
	if e.eager {
		i, found := slices.BinarySearchFunc(e.rows, r.pk, cmpPKString)
		if found {
			e.rows[i] = r
		} else {
			e.rows = slices.Insert(e.rows, i, r)
		}
		return
	}
	n := len(e.rows)
	switch {
	case n == 0 || (!e.mixed && r.pk > e.rows[n-1].pk):
		e.rows = append(e.rows, r)
	case !e.mixed && r.pk == e.rows[n-1].pk:
		e.rows[n-1] = r
	default:
		if !e.mixed {
			e.mixed, e.sorted = true, n
		}
		e.mayDup = true
		e.rows = append(e.rows, r)
	}
}

// storedRow is one row of a side's state. degree is its number of matches
// (outer sides only); -1 means not read yet (rows streamed from the store).
type storedRow struct {
	pk     string
	row    types.Row
	degree int64
}

// keyOf appends the row's join key values to dst[:0] and reports whether
// they can match anything: a NULL in a key that is not NULL-safe never
// equals anything.
func (s *side) keyOf(dst, row types.Row, nullSafe []bool) (types.Row, bool) {
	key := dst[:0]
	ok := true
	for i, c := range s.keys {
		key = append(key, row[c])
		if row[c] == nil && !nullSafe[i] {
			ok = false
		}
	}
	return key, ok
}

// encodeKey encodes a join key into the side's scratch buffer; the result
// is valid until the next call.
func (s *side) encodeKey(key types.Row) ([]byte, error) {
	b, err := codec.EncodeKey(s.keyBuf[:0], key, s.keyTypes, s.keyOrd)
	if err != nil {
		return nil, fmt.Errorf("join: encode join key: %w", err)
	}
	s.keyBuf = b
	return b, nil
}

func (s *side) pkOf(row types.Row) types.Row {
	pk := make(types.Row, len(s.table.PK))
	for i, c := range s.table.PK {
		pk[i] = row[c]
	}
	return pk
}

// encodePK encodes a row's primary key into the side's scratch buffer; the
// result is valid until the next call.
func (s *side) encodePK(row types.Row) ([]byte, error) {
	s.pkRow = s.pkRow[:0]
	for _, c := range s.table.PK {
		s.pkRow = append(s.pkRow, row[c])
	}
	b, err := codec.EncodeKey(s.pkBuf[:0], s.pkRow, s.pkTypes, s.pkOrd)
	clear(s.pkRow) // hold no datums past the call
	if err != nil {
		return nil, fmt.Errorf("join: encode state key: %w", err)
	}
	s.pkBuf = b
	return b, nil
}

func degreeRow(pk types.Row, d int64) types.Row {
	return append(pk, d)
}

// entry returns the cache entry for key, loading it from the store on a
// miss.
func (s *side) entry(ctx context.Context, key types.Row) (*keyEntry, error) {
	k, err := s.encodeKey(key)
	if err != nil {
		return nil, err
	}
	if e, ok := storage.GetBytes(s.cache, k); ok {
		return e, nil
	}
	if s.complete {
		return noRows, nil
	}
	// load uses pkBuf, never keyBuf, so k is still the key after it.
	e, err := s.load(ctx, key)
	if err != nil {
		return nil, err
	}
	s.cache.Put(string(k), e)
	return e, nil
}

// load reads a key's rows. It stops reading as soon as the key proves
// large, so a hot key with millions of rows is never pulled into memory.
func (s *side) load(ctx context.Context, key types.Row) (*keyEntry, error) {
	it, err := s.rows.Scan(ctx, key)
	if err != nil {
		return nil, fmt.Errorf("join: load key: %w", err)
	}
	defer it.Close()
	e := &keyEntry{}
	for {
		row, ok, err := it.Next()
		if err != nil {
			return nil, fmt.Errorf("join: load key: %w", err)
		}
		if !ok {
			break
		}
		if len(e.rows) == s.largeKeyRows {
			return &keyEntry{large: true}, nil
		}
		pk, err := s.encodePK(row)
		if err != nil {
			return nil, err
		}
		e.rows = append(e.rows, &storedRow{pk: string(pk), row: row})
	}
	if s.degrees != nil {
		if err := s.loadDegrees(ctx, key, e.rows); err != nil {
			return nil, err
		}
	}
	return e, nil
}

// loadDegrees fills the degrees of rows (sorted by pk) from the degree
// table, which is keyed by the same primary key and so scans in the same
// order.
func (s *side) loadDegrees(ctx context.Context, key types.Row, rows []*storedRow) error {
	it, err := s.degrees.Scan(ctx, key)
	if err != nil {
		return fmt.Errorf("join: load degrees: %w", err)
	}
	defer it.Close()
	i := 0
	for {
		drow, ok, err := it.Next()
		if err != nil {
			return fmt.Errorf("join: load degrees: %w", err)
		}
		if !ok {
			return nil
		}
		pk, err := codec.EncodeKey(s.pkBuf[:0], drow[:len(drow)-1], s.pkTypes, s.pkOrd)
		if err != nil {
			return fmt.Errorf("join: load degrees: %w", err)
		}
		s.pkBuf = pk
		for i < len(rows) && rows[i].pk < string(pk) {
			i++
		}
		if i < len(rows) && rows[i].pk == string(pk) {
			rows[i].degree = drow[len(drow)-1].(int64)
		}
	}
}

// degreeOf returns r's degree, reading it from the store for a row that
// was streamed rather than cached.
func (s *side) degreeOf(ctx context.Context, r *storedRow) (int64, error) {
	if r.degree >= 0 {
		return r.degree, nil
	}
	drow, ok, err := s.degrees.Get(ctx, s.pkOf(r.row))
	if err != nil {
		return 0, fmt.Errorf("join: read degree: %w", err)
	}
	if !ok {
		return 0, fmt.Errorf("join: stored row %v has no degree", r.row)
	}
	return drow[len(drow)-1].(int64), nil
}

// setDegree writes r's new degree through to the degree table; r may be a
// cached row, whose copy is updated in place.
func (s *side) setDegree(r *storedRow, d int64) error {
	// An upsert: the degree row's PK does not change, so this is the
	// update without its old row's PK to extract and compare.
	if err := s.degrees.InsertOwned(degreeRow(s.pkOf(r.row), d)); err != nil {
		return fmt.Errorf("join: write degree: %w", err)
	}
	r.degree = d
	return nil
}

// store adds a row with its degree, writing through to a cached entry of
// its key (an uncached key is not loaded: the next probe reads the store).
func (s *side) store(key, row types.Row, degree int64) error {
	s.noteStore()
	// The row is kept once, shared by the table and the cache, which never
	// change it: a copy for the table held every stored row twice until
	// its epoch committed. Its key is one the table does not hold: the
	// key (join keys, stream key: planner.sideTable) holds the input's
	// stream key, unique among the input's rows, and a retraction deleted
	// any earlier row of it. So the table
	// need not read it, and when no uncommitted write touched it, takes it
	// as fresh: a row then deleted within its epoch (expired at the
	// barrier, as Nexmark q5's window counts are) never reaches a batch.
	if err := s.write(row, degree, stateTable.InsertAbsent, "store"); err != nil {
		return err
	}
	tag := int64(-1)
	if s.deferred != nil {
		tag = s.deferred.lastTag()
	}
	s.noteExpiring(row, tag)
	k, e, err := s.lookup(key)
	if e == nil || err != nil {
		if err == nil && k != nil && s.complete {
			return s.storeNewKey(k, row, degree)
		}
		return err
	}
	if e.large {
		return nil
	}
	pk, err := s.encodePK(row)
	if err != nil {
		return err
	}
	r := &storedRow{pk: string(pk), row: row, degree: degree}
	if s.appendOnly {
		e.appendRow(r)
	} else {
		e.putRow(r)
	}
	if len(e.rows) > s.largeKeyRows && e.mayDup {
		e.inOrder() // repeated keys count once
	}
	if len(e.rows) > s.largeKeyRows {
		e.large, e.rows, e.mixed, e.mayDup, e.eager = true, nil, false, false, false
	}
	return nil
}

// remove deletes a row (whose current degree is degree) from the store and
// from a cached entry of its key.
func (s *side) remove(key, row types.Row, degree int64) error {
	if err := s.write(row, degree, stateTable.Delete, "delete"); err != nil {
		return err
	}
	return s.uncache(key, row)
}

// uncache removes a row from a cached entry of its key.
func (s *side) uncache(key, row types.Row) error {
	k, e, err := s.lookup(key)
	if e == nil || e.large || err != nil {
		return err
	}
	pk, err := s.encodePK(row)
	if err != nil {
		return err
	}
	e.remove(pk)
	if len(e.rows) == 0 {
		// An emptied entry leaves the cache. A complete side reads a key
		// without an entry as a key without rows; any other side reads
		// the key from the table when it is next probed, which few are:
		// kept, the entries of keys whose rows expired filled q7's cache,
		// so every lookup probed a map of 65 536 keys, and the first live
		// entry evicted for room ended completeness.
		s.cache.Delete(string(k))
	}
	return nil
}

// write applies one change (insert or delete, named by verb in errors) to
// the row table and, on an outer side, to the row's degree.
func (s *side) write(row types.Row, degree int64, apply func(stateTable, types.Row) error, verb string) error {
	if err := apply(s.rows, row); err != nil {
		return fmt.Errorf("join: %s row: %w", verb, err)
	}
	if s.degrees != nil {
		if verb == "store" {
			apply = stateTable.InsertOwned // an upsert: degrees change; degreeRow is new
		}
		if err := apply(s.degrees, degreeRow(s.pkOf(row), degree)); err != nil {
			return fmt.Errorf("join: %s degree: %w", verb, err)
		}
	}
	return nil
}

// lookup returns key's encoded form (nil when the cache is empty on a
// side that is not complete: nothing to find, so it is not encoded) and
// its cached entry, large or not (nil when none).
func (s *side) lookup(key types.Row) ([]byte, *keyEntry, error) {
	if s.cache.Len() == 0 && !s.complete {
		return nil, nil, nil
	}
	k, err := s.encodeKey(key)
	if err != nil {
		return nil, nil, err
	}
	e, _ := storage.GetBytes(s.cache, k)
	return k, e, nil
}

// cmpPKString orders a row by its primary key against pk.
func cmpPKString(r *storedRow, pk string) int { return strings.Compare(r.pk, pk) }

// cmpPK compares through string(pk) conversions that the compiler makes
// without copying.
func cmpPK(r *storedRow, pk []byte) int {
	switch {
	case r.pk < string(pk):
		return -1
	case r.pk > string(pk):
		return 1
	}
	return 0
}

func (s *side) seal(epoch uint64) error {
	if err := s.rows.Seal(epoch); err != nil {
		return fmt.Errorf("join: seal %s: %w", "rows", err)
	}
	if s.degrees != nil {
		if err := s.degrees.Seal(epoch); err != nil {
			return fmt.Errorf("join: seal %s: %w", "degrees", err)
		}
	}
	return nil
}
