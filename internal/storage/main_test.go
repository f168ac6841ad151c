package storage

import (
	"context"
	"testing"

	"github.com/cockroachdb/pebble/v2/vfs"
	"go.uber.org/goleak"

	"github.com/sluice-db/sluice/internal/types"
	"github.com/sluice-db/sluice/internal/types/codec"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// openMem opens a store on fs (a fresh in-memory one if nil) and closes it
// when the test ends.
func openMem(t testing.TB, fs vfs.FS) *Store {
	t.Helper()
	if fs == nil {
		fs = vfs.NewMem()
	}
	s, err := Open(context.Background(), Options{FS: fs, Dir: "db"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// kvDesc is a table (k bigint, name varchar, v bigint) with PK (k ASC, name
// DESC NULLS FIRST), distributed by k.
func kvDesc(id uint32) TableDesc {
	return TableDesc{
		ID:      id,
		Types:   []types.Type{types.TInt64, types.TVarchar, types.TInt64},
		PK:      []int{0, 1},
		Orders:  []codec.Order{{}, {Desc: true, NullsFirst: true}},
		DistKey: []int{0},
	}
}

func mustOpenTable(t testing.TB, s *Store, desc TableDesc, owner ActorID, vnodes types.Bitmap) *StateTable {
	t.Helper()
	tbl, err := s.OpenTable(desc, owner, vnodes)
	if err != nil {
		t.Fatal(err)
	}
	return tbl
}

func drain(t testing.TB, it Iterator) []types.Row {
	t.Helper()
	var rows []types.Row
	for {
		row, ok, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			break
		}
		rows = append(rows, row)
	}
	if err := it.Close(); err != nil {
		t.Fatal(err)
	}
	return rows
}

func scanAll(t testing.TB, tbl *StateTable, prefix types.Row) []types.Row {
	t.Helper()
	it, err := tbl.Scan(context.Background(), prefix)
	if err != nil {
		t.Fatal(err)
	}
	return drain(t, it)
}

func vnodeOfK(k int64) uint16 {
	return codec.VNodeOf(codec.HashRow(types.Row{k}, []types.Type{types.TInt64}))
}

// evenOdd returns bitmaps of the even and the odd vnodes.
func evenOdd() (even, odd types.Bitmap) {
	for v := 0; v < codec.VNodeCount; v++ {
		if v%2 == 0 {
			even.Set(v)
		} else {
			odd.Set(v)
		}
	}
	return even, odd
}

func newMemFS() vfs.FS { return vfs.NewMem() }
