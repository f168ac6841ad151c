package catalog

import (
	"context"
	"reflect"
	"slices"
	"testing"

	"go.uber.org/goleak"

	"github.com/sluice-db/sluice/internal/expr"
	"github.com/sluice-db/sluice/internal/plan"
	"github.com/sluice-db/sluice/internal/storage"
	"github.com/sluice-db/sluice/internal/types"
	"github.com/sluice-db/sluice/internal/types/codec"
)

// The catalog starts no goroutines, but its store (Pebble) does: goleak
// checks every test closes what it opens.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// env is a catalog over an on-disk store that can be closed and reopened,
// the way a restart (or a crash after a synced write) sees it.
type env struct {
	t     *testing.T
	dir   string
	store *storage.Store
	cat   *Catalog
}

func newEnv(t *testing.T) *env {
	e := &env{t: t, dir: t.TempDir()}
	e.open()
	t.Cleanup(func() {
		if e.store != nil {
			if err := e.store.Close(); err != nil {
				t.Error(err)
			}
		}
	})
	return e
}

func (e *env) open() {
	e.t.Helper()
	ctx := context.Background()
	st, err := storage.Open(ctx, storage.Options{Dir: e.dir})
	if err != nil {
		e.t.Fatal(err)
	}
	e.store = st
	c, err := Open(ctx, st)
	if err != nil {
		e.t.Fatal(err)
	}
	e.cat = c
}

func (e *env) reopen() {
	e.t.Helper()
	if err := e.store.Close(); err != nil {
		e.t.Fatal(err)
	}
	e.store = nil
	e.open()
}

func (e *env) put(r *Relation) {
	e.t.Helper()
	if err := e.cat.Put(context.Background(), r); err != nil {
		e.t.Fatalf("put %s: %v", r.Name, err)
	}
}

var (
	i64 = types.TInt64
	str = types.TVarchar
)

// table returns a created table relation with a job whose plan holds
// literals of several types, so persistence exercises the plan's JSON.
func table(id uint32, name string) *Relation {
	st := plan.Table{ID: id + 1000, Types: []types.Type{i64, str, types.TDecimal}, PK: []int{0},
		Orders: []codec.Order{{Desc: true}}, DistKey: []int{0}}
	dec, err := types.ParseDatum("12.50", types.TDecimal)
	if err != nil {
		panic(err)
	}
	values := &plan.Node{Kind: plan.KindValues, Schema: st.Types, StreamKey: []int{0},
		Values: &plan.Values{Rows: [][]expr.Desc{{expr.Literal(int64(7), i64), expr.Literal("it's", str), expr.Literal(dec, types.TDecimal)}}}}
	root := &plan.Node{Kind: plan.KindMaterialize, Inputs: []*plan.Node{values}, Schema: st.Types, StreamKey: []int{0},
		Materialize: &plan.Materialize{Table: st}}
	job := &plan.Job{ID: id, Fragments: []*plan.Fragment{{ID: id + 2000, Root: root, Parallelism: 1, Singleton: true}}}
	return &Relation{ID: id, Name: name, Kind: KindTable, State: StateCreated,
		Columns: []Column{{Name: "k", Type: i64}, {Name: "v", Type: str}, {Name: "d", Type: types.TDecimal},
			{Name: "_row_id", Type: i64, Hidden: true}},
		PK: []int{0}, Definition: "CREATE TABLE " + name + " (k bigint primary key, v varchar, d numeric)",
		Table: st,
		Job: JobRecord{ID: id, Plan: job, Actors: map[uint32][]uint32{id + 2000: {id + 3000}},
			MaterializeFragment: id + 2000, StateTables: []uint32{id + 1000}}}
}

// view returns a materialized view reading deps.
func view(id uint32, name string, deps ...uint32) *Relation {
	return &Relation{ID: id, Name: name, Kind: KindMaterializedView, State: StateCreated,
		Columns:    []Column{{Name: "n", Type: i64}},
		PK:         []int{0},
		Definition: "CREATE MATERIALIZED VIEW " + name,
		Table:      plan.Table{ID: id + 1000, Types: []types.Type{i64}, PK: []int{0}},
		DependsOn:  deps,
		Job:        JobRecord{ID: id, MaterializeFragment: id + 2000, StateTables: []uint32{id + 1000}}}
}

func ids(rs []*Relation) []uint32 {
	out := make([]uint32, len(rs))
	for i, r := range rs {
		out[i] = r.ID
	}
	return out
}

func TestPersistAcrossReopen(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	// Put out of id order: All must sort.
	rels := []*Relation{view(5, "V2", 3), table(1, "t"), view(3, "v1", 1), view(7, "gone", 1)}
	for _, r := range rels {
		e.put(r)
	}
	if err := e.cat.Delete(ctx, 7); err != nil {
		t.Fatal(err)
	}
	if err := e.cat.Delete(ctx, 99); err != nil {
		t.Fatalf("Delete of an unknown id: %v", err)
	}
	updated := view(3, "v1", 1)
	updated.State = StateCreating
	updated.Definition = "CREATE MATERIALIZED VIEW v1 AS SELECT count(*) FROM t"
	e.put(updated)

	want := map[uint32]*Relation{1: rels[1], 3: updated, 5: rels[0]}
	check := func(when string) {
		t.Helper()
		if got := ids(e.cat.All()); !slices.Equal(got, []uint32{1, 3, 5}) {
			t.Fatalf("%s: All = %v, want [1 3 5]", when, got)
		}
		for id, w := range want {
			got, ok := e.cat.ByID(id)
			if !ok {
				t.Fatalf("%s: ByID(%d) missing", when, id)
			}
			if !reflect.DeepEqual(got, w) {
				t.Fatalf("%s: ByID(%d) =\n%+v\nwant\n%+v", when, id, got, w)
			}
		}
		if _, ok := e.cat.ByID(7); ok {
			t.Fatalf("%s: deleted relation 7 is back", when)
		}
		for name, id := range map[string]uint32{"t": 1, "T": 1, "V1": 3, "v2": 5, "V2": 5} {
			got, ok := e.cat.ByName(name)
			if !ok || got.ID != id {
				t.Fatalf("%s: ByName(%q) = %v, %v, want id %d", when, name, got, ok, id)
			}
		}
		if _, ok := e.cat.ByName("gone"); ok {
			t.Fatalf("%s: ByName finds a deleted relation", when)
		}
	}
	check("before reopen")
	e.reopen()
	check("after reopen")
}

// TestPlanSurvivesReopen compares the decoded plan with the original in
// detail: the recovery rebuilds jobs from it.
func TestPlanSurvivesReopen(t *testing.T) {
	e := newEnv(t)
	orig := table(1, "t")
	e.put(orig)
	e.reopen()
	got, ok := e.cat.ByID(1)
	if !ok {
		t.Fatal("relation lost")
	}
	if !reflect.DeepEqual(got.Job.Plan, orig.Job.Plan) {
		t.Fatalf("plan after reopen differs:\n%+v\nwant\n%+v", got.Job.Plan, orig.Job.Plan)
	}
	row := got.Job.Plan.Fragments[0].Root.Inputs[0].Values.Rows[0]
	want := orig.Job.Plan.Fragments[0].Root.Inputs[0].Values.Rows[0]
	for i := range row {
		a, err := expr.Build(row[i], nil)
		if err != nil {
			t.Fatal(err)
		}
		b := expr.MustBuild(want[i], nil)
		da, err := expr.EvalRow(&expr.Context{}, a, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		db, _ := expr.EvalRow(&expr.Context{}, b, nil, nil)
		if types.Compare(da, db) != 0 {
			t.Fatalf("literal %d = %v after reopen, want %v", i, da, db)
		}
	}
}

func TestByNameSkipsDropping(t *testing.T) {
	e := newEnv(t)
	old := view(3, "v", 1)
	old.State = StateDropping
	e.put(old)
	if _, ok := e.cat.ByName("v"); ok {
		t.Fatal("ByName returns a relation being dropped")
	}
	if _, ok := e.cat.ByID(3); !ok {
		t.Fatal("ByID must still find a relation being dropped (the drop finishes by id)")
	}
	// A new relation may reuse the name while the old one is dropping.
	e.put(view(4, "V", 1))
	e.reopen()
	got, ok := e.cat.ByName("v")
	if !ok || got.ID != 4 {
		t.Fatalf("ByName(v) = %v, %v, want the new relation 4", got, ok)
	}
}

func TestAllocIDsNeverReused(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	seen := map[uint32]bool{}
	take := func(n int) {
		t.Helper()
		first, err := e.cat.AllocIDs(ctx, n)
		if err != nil {
			t.Fatal(err)
		}
		for id := first; id < first+uint32(n); id++ {
			if id == 0 {
				t.Fatal("AllocIDs handed out id 0")
			}
			if seen[id] {
				t.Fatalf("id %d handed out twice", id)
			}
			seen[id] = true
		}
	}
	for round := 0; round < 4; round++ {
		for _, n := range []int{1, 5, 256, 1} {
			take(n)
		}
		e.reopen()
	}
	if len(seen) != 4*(1+5+256+1) {
		t.Fatalf("%d distinct ids, want %d", len(seen), 4*(1+5+256+1))
	}
}

func TestReturnedRelationsAreCopies(t *testing.T) {
	e := newEnv(t)
	e.put(view(3, "v", 1))
	got, _ := e.cat.ByID(3)
	got.Name = "changed"
	got.State = StateDropping
	if again, _ := e.cat.ByID(3); again.Name != "v" || again.State != StateCreated {
		t.Fatalf("changing a returned relation changed the catalog: %+v", again)
	}
	all := e.cat.All()
	all[0].Name = "changed"
	if again, _ := e.cat.ByName("v"); again == nil || again.ID != 3 {
		t.Fatal("changing a relation from All changed the catalog")
	}
}

// dag is t(1) ← v1(2) ← v2(3), t ← v3(4).
func dag(t *testing.T) *env {
	e := newEnv(t)
	for _, r := range []*Relation{table(1, "t"), view(2, "v1", 1), view(3, "v2", 2), view(4, "v3", 1)} {
		e.put(r)
	}
	return e
}

func TestDependents(t *testing.T) {
	e := dag(t)
	for id, want := range map[uint32][]uint32{1: {2, 4}, 2: {3}, 3: nil, 4: nil, 99: nil} {
		if got := ids(e.cat.Dependents(id)); !slices.Equal(got, want) {
			t.Errorf("Dependents(%d) = %v, want %v", id, got, want)
		}
	}
	v1, _ := e.cat.ByID(2)
	v1.State = StateDropping
	e.put(v1)
	if got := ids(e.cat.Dependents(1)); !slices.Equal(got, []uint32{4}) {
		t.Fatalf("Dependents(t) with v1 dropping = %v, want [4]", got)
	}
	e.reopen()
	if got := ids(e.cat.Dependents(1)); !slices.Equal(got, []uint32{4}) {
		t.Fatalf("after reopen Dependents(t) with v1 dropping = %v, want [4]", got)
	}
}

func TestClosure(t *testing.T) {
	e := dag(t)
	for id, want := range map[uint32][]uint32{1: {1, 2, 3, 4}, 2: {2, 3}, 3: {3}, 4: {4}} {
		got := e.cat.Closure(id)
		if len(got) == 0 || got[0].ID != id {
			t.Fatalf("Closure(%d) = %v, want %d first", id, ids(got), id)
		}
		sorted := slices.Sorted(slices.Values(ids(got)))
		if !slices.Equal(sorted, want) {
			t.Errorf("Closure(%d) = %v, want the set %v", id, ids(got), want)
		}
		checkTopological(t, got)
	}
	if got := e.cat.Closure(99); len(got) != 0 {
		t.Fatalf("Closure of an unknown id = %v", ids(got))
	}
}

// checkTopological fails if a relation comes before one it depends on.
func checkTopological(t *testing.T, rs []*Relation) {
	t.Helper()
	pos := map[uint32]int{}
	for i, r := range rs {
		pos[r.ID] = i
	}
	for i, r := range rs {
		for _, d := range r.DependsOn {
			if p, ok := pos[d]; ok && p > i {
				t.Errorf("closure %v lists %d before %d, which it depends on", ids(rs), r.ID, d)
			}
		}
	}
}
