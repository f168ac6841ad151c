// Package catalog is the durable record of what exists: tables,
// materialized views and the streaming jobs that maintain them. Every
// change is written (synced) to the store's meta space before it is
// acknowledged, so after a crash recovery rebuilds exactly what the catalog
// says — including finishing a drop that was in progress.
package catalog

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/sluice-db/sluice/internal/connector"
	"github.com/sluice-db/sluice/internal/expr"
	"github.com/sluice-db/sluice/internal/plan"
	"github.com/sluice-db/sluice/internal/sqlerr"
	"github.com/sluice-db/sluice/internal/storage"
	"github.com/sluice-db/sluice/internal/types"
)

// Kind is what a relation is.
type Kind string

// Relation kinds.
const (
	KindTable            Kind = "table"
	KindMaterializedView Kind = "materialized view"
	// KindSource is a source: columns and a connector, no job and no
	// stored rows; each job reading it runs its own connector source.
	KindSource Kind = "source"
	// KindSink is a sink: a job writing a query's changes to a sink
	// connector. It has columns and a job but no stored rows, and no
	// query can read it.
	KindSink Kind = "sink"
)

// State is where a relation is in its life.
type State string

// Relation states. A relation is Creating until its job has caught up
// (backfill done), Created afterwards, and Dropping from the moment a drop
// is decided until its state is deleted.
const (
	StateCreating State = "creating"
	StateCreated  State = "created"
	StateDropping State = "dropping"
)

// Column is a named, typed column.
type Column struct {
	Name   string
	Type   types.Type
	Hidden bool `json:",omitempty"` // e.g. _row_id
	// Default is the SQL text of the column's DEFAULT expression (empty:
	// NULL), bound anew by every INSERT that needs it.
	Default string `json:",omitempty"`
	// NotNull refuses NULL writes (NOT NULL, and primary key columns).
	NotNull bool `json:",omitempty"`
	// Mod is the type modifier (numeric(p, s), varchar(n)), enforced on
	// every write; nil for none.
	Mod *types.Modifier `json:",omitempty"`
}

// Relation is a table or materialized view.
type Relation struct {
	ID         uint32
	Name       string
	Kind       Kind
	State      State
	Columns    []Column
	PK         []int
	AppendOnly bool `json:",omitempty"`
	Definition string
	// Table is the state table holding the relation's rows.
	Table plan.Table
	// Connector is the connector of a source, or of a table that takes
	// rows from one (nil: none).
	Connector *connector.Spec `json:",omitempty"`
	// Sink is a sink's connector (nil for every other kind).
	Sink *connector.SinkSpec `json:",omitempty"`
	// Watermark is the WATERMARK FOR of a source or append-only table.
	Watermark *Watermark `json:",omitempty"`
	// DependsOn lists relations this one reads.
	DependsOn []uint32 `json:",omitempty"`
	Job       JobRecord
	// Owner created the relation ("" before owners existed: root). The
	// owner and superusers may do anything with it; others what Grants
	// gives them (privileges.go).
	Owner  string              `json:",omitempty"`
	Grants map[string][]string `json:",omitempty"`
}

// Watermark is `WATERMARK FOR column AS expression`: the relation's rows
// arrive with event time in column Col, and no row below the largest
// Expr seen so far is let through (plan.WatermarkFilter).
type Watermark struct {
	Col  int
	Expr expr.Desc
	// Text is the expression as written.
	Text string
}

// ConnectorOnlyError is the error for DML into a table whose rows come
// only from its connector (ConnectorOnly), nil for any other relation.
func (r *Relation) ConnectorOnlyError() error {
	if r.Connector == nil || r.Kind != KindTable || len(r.PK) != 1 || !r.Columns[r.PK[0]].Hidden {
		return nil
	}
	return sqlerr.Errorf(sqlerr.FeatureNotSupported, "table %q takes its rows from connector %s and has no primary key: "+
		"INSERT, UPDATE, DELETE and COPY need a primary key to share its rows with the connector", r.Name, r.Connector.Connector)
}

// JobRecord is the streaming job maintaining a relation.
type JobRecord struct {
	ID   uint32
	Plan *plan.Job
	// Actors maps fragment id to actor ids.
	Actors map[uint32][]uint32
	// MaterializeFragment is the fragment whose output later jobs backfill
	// from (the table's or view's materialize fragment).
	MaterializeFragment uint32
	// StateTables lists every state table id of the job, for deletion.
	StateTables []uint32
	// Control is what ALTER … SET RATE_LIMIT / PAUSE asked of the job (or
	// backfill_rate_limit at its CREATE). It is recorded here, durably,
	// before the actors are told, and applied to every rebuild of the job
	// (recovery, restart) before a barrier reaches it. A record written
	// before this field existed decodes as no limit, not paused, which is
	// what that build did after a restart, so the catalog's format did not
	// change.
	Control JobControl `json:",omitzero"`
}

// JobControl is a job's pace: how fast it runs, never what it computes.
type JobControl struct {
	// RateLimit is rows per second into the job; nil: no limit, 0: no
	// rows (paused by the limit).
	RateLimit *int64 `json:",omitempty"`
	Paused    bool   `json:",omitempty"`
	// AmpLimit is the most rows a join of the job may emit for one input
	// row before the amplification guard acts (0: no guard), and
	// AmpAction what it does then: notice, throttle or pause.
	AmpLimit  int64  `json:",omitempty"`
	AmpAction string `json:",omitempty"`
}

// Catalog holds the relations in memory, backed by the store.
type Catalog struct {
	store *storage.Store
	// writeMu serializes writers, so that Update's read-modify-write of a
	// relation loses no concurrent change.
	writeMu sync.Mutex
	mu      struct {
		sync.Mutex
		byID   map[uint32]*Relation
		nextID uint32
		// version counts the changes to relations since Open.
		version uint64
	}
	users     users     // users.go
	functions functions // functions.go
}

// Version changes whenever a relation is created, changed or deleted: a
// plan made at one version is stale at another (prepared statements
// re-plan then).
func (c *Catalog) Version() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.mu.version
}

const (
	relPrefix = "catalog/rel/"
	nextIDKey = "catalog/next_id"
)

// Open loads the catalog from the store.
func Open(ctx context.Context, store *storage.Store) (*Catalog, error) {
	c := &Catalog{store: store}
	c.mu.byID = map[uint32]*Relation{}
	c.mu.nextID = 1
	if v, ok, err := store.Meta(nextIDKey); err != nil {
		return nil, err
	} else if ok && len(v) == 4 {
		c.mu.nextID = binary.BigEndian.Uint32(v)
	}
	entries, err := store.ScanMeta(ctx, relPrefix)
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		var r Relation
		if err := json.Unmarshal(e.Value, &r); err != nil {
			return nil, fmt.Errorf("catalog: corrupt entry %s: %w", e.Name, err)
		}
		c.mu.byID[r.ID] = &r
	}
	if err := c.loadUsers(ctx); err != nil {
		return nil, err
	}
	if err := c.loadFunctions(ctx); err != nil {
		return nil, err
	}
	return c, nil
}

// bumpVersion marks a catalog change (prepared plans re-plan).
func (c *Catalog) bumpVersion() {
	c.mu.Lock()
	c.mu.version++
	c.mu.Unlock()
}

// AllocIDs reserves n fresh ids (for relations, jobs, fragments, actors and
// state tables alike), durably, so an id is never reused after a crash.
func (c *Catalog) AllocIDs(ctx context.Context, n int) (uint32, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	first := c.mu.nextID
	next := first + uint32(n)
	var buf [4]byte
	binary.BigEndian.PutUint32(buf[:], next)
	if err := c.store.PutMeta(ctx, nextIDKey, buf[:]); err != nil {
		return 0, err
	}
	c.mu.nextID = next
	return first, nil
}

func relKey(id uint32) string { return fmt.Sprintf("%s%010d", relPrefix, id) }

// Put writes a relation durably (create or update).
func (c *Catalog) Put(ctx context.Context, r *Relation) error {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	return c.put(ctx, r)
}

// Update changes relation id durably: f gets a copy of the current record
// and may change it, or fail, which leaves the record as it was. It
// returns the record as written.
func (c *Catalog) Update(ctx context.Context, id uint32, f func(*Relation) error) (*Relation, error) {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	r, ok := c.ByID(id)
	if !ok {
		return nil, fmt.Errorf("catalog: relation %d: %w", id, ErrNotFound)
	}
	if err := f(r); err != nil {
		return nil, err
	}
	if err := c.put(ctx, r); err != nil {
		return nil, err
	}
	return r, nil
}

// ErrNotFound says a relation does not exist.
var ErrNotFound = errors.New("no such relation")

func (c *Catalog) put(ctx context.Context, r *Relation) error {
	b, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("catalog: encode %s: %w", r.Name, err)
	}
	if err := c.store.PutMeta(ctx, relKey(r.ID), b); err != nil {
		return err
	}
	// Keep in memory exactly what is on disk, sharing nothing with r.
	var cp Relation
	if err := json.Unmarshal(b, &cp); err != nil {
		return fmt.Errorf("catalog: decode %s: %w", r.Name, err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.mu.byID[r.ID] = &cp
	c.mu.version++
	return nil
}

// clone returns a deep copy, so callers may change what they get back.
func clone(r *Relation) *Relation {
	b, err := json.Marshal(r)
	if err != nil {
		panic(fmt.Sprintf("catalog: relation %d no longer encodes: %v", r.ID, err))
	}
	var cp Relation
	if err := json.Unmarshal(b, &cp); err != nil {
		panic(fmt.Sprintf("catalog: relation %d no longer decodes: %v", r.ID, err))
	}
	return &cp
}

// Delete removes a relation durably.
func (c *Catalog) Delete(ctx context.Context, id uint32) error {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	if err := c.store.DeleteMeta(ctx, relKey(id)); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.mu.byID, id)
	c.mu.version++
	return nil
}

// ByName returns a relation that is not being dropped.
func (c *Catalog) ByName(name string) (*Relation, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, r := range c.mu.byID {
		if strings.EqualFold(r.Name, name) && r.State != StateDropping {
			return clone(r), true
		}
	}
	return nil, false
}

// ByID returns a relation by id.
func (c *Catalog) ByID(id uint32) (*Relation, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	r, ok := c.mu.byID[id]
	if !ok {
		return nil, false
	}
	return clone(r), true
}

// StateTableOf returns the id of the state table of relation id, if the
// relation exists: the cheap check (no copy) that a relation a statement
// planned against is still the one the catalog has.
func (c *Catalog) StateTableOf(id uint32) (uint32, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	r, ok := c.mu.byID[id]
	if !ok {
		return 0, false
	}
	return r.Table.ID, true
}

// All returns every relation in id order (dependencies before dependents,
// since a relation's id is allocated after those it reads).
func (c *Catalog) All() []*Relation {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]*Relation, 0, len(c.mu.byID))
	for _, r := range c.mu.byID {
		out = append(out, clone(r))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// Dependents returns the relations that read id directly, not counting
// those being dropped.
func (c *Catalog) Dependents(id uint32) []*Relation {
	var out []*Relation
	for _, r := range c.All() {
		if r.State == StateDropping {
			continue
		}
		for _, d := range r.DependsOn {
			if d == id {
				out = append(out, r)
				break
			}
		}
	}
	return out
}

// Closure returns id and, transitively, everything that depends on it
// (except relations already being dropped), in id order — which puts every
// relation after those it reads, since a relation's id is allocated after
// theirs.
func (c *Catalog) Closure(id uint32) []*Relation {
	in := map[uint32]bool{}
	var out []*Relation
	for _, r := range c.All() {
		if r.ID != id && (r.State == StateDropping || r.ID < id) {
			continue
		}
		reads := r.ID == id
		for _, d := range r.DependsOn {
			reads = reads || in[d]
		}
		if reads {
			in[r.ID] = true
			out = append(out, r)
		}
	}
	return out
}
