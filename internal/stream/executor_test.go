package stream

import (
	"context"
	"reflect"
	"testing"

	"github.com/sluice-db/sluice/internal/plan"
	"github.com/sluice-db/sluice/internal/storage"
	"github.com/sluice-db/sluice/internal/types"
)

func openTestStore(t *testing.T) *storage.Store {
	t.Helper()
	s, err := storage.Open(context.Background(), storage.Options{InMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func TestEnvOpenTable(t *testing.T) {
	store := openTestStore(t)
	tbl := plan.Table{ID: 9, Types: []types.Type{types.TInt64, types.TVarchar}, PK: []int{0}, DistKey: []int{0}}
	owns := func(st *storage.StateTable) []uint16 {
		var vs []uint16
		for v := range uint16(256) {
			if st.OwnsVNode(v) {
				vs = append(vs, v)
			}
		}
		return vs
	}

	env := &Env{Store: store, ActorID: 4, VNodes: []uint16{3, 200}}
	st, err := env.OpenTable(tbl)
	if err != nil {
		t.Fatal(err)
	}
	if got := owns(st); !reflect.DeepEqual(got, []uint16{3, 200}) {
		t.Fatalf("actor's table owns vnodes %v, want [3 200]", got)
	}
	if got, want := st.Desc(), storage.TableDesc(tbl); !reflect.DeepEqual(got, want) {
		t.Fatalf("desc %+v, want %+v", got, want)
	}

	all, err := env.OpenTableAllVNodes(tbl)
	if err != nil {
		t.Fatal(err)
	}
	if got := len(owns(all)); got != 256 {
		t.Fatalf("all-vnodes table owns %d vnodes, want 256", got)
	}

	whole, err := (&Env{Store: store, ActorID: 5}).OpenTable(tbl)
	if err != nil {
		t.Fatal(err)
	}
	if got := len(owns(whole)); got != 256 {
		t.Fatalf("actor without a vnode list owns %d vnodes, want 256", got)
	}

	if _, err := (&Env{Store: store, VNodes: []uint16{}}).OpenTable(tbl); err == nil {
		t.Fatal("an actor owning no vnodes opened a table")
	}
	if _, err := (&Env{}).OpenTable(tbl); err == nil {
		t.Fatal("opened a table without a store")
	}
	if _, err := (&Env{}).OpenTableAllVNodes(tbl); err == nil {
		t.Fatal("opened a table without a store")
	}
}
