package streamtest

import (
	"github.com/sluice-db/sluice/internal/storage"
	"github.com/sluice-db/sluice/internal/types"
	"github.com/sluice-db/sluice/internal/types/codec"
)

// LoadFile builds a one-row bulk load's file of table in store's log
// directory (storage.BulkLoad), for tests of a log holding a load record.
func LoadFile(t TB, store *storage.Store, table uint32) *storage.LoadedFile {
	t.Helper()
	desc := storage.TableDesc{ID: table, Types: []types.Type{types.TInt64}, PK: []int{0}, DistKey: []int{0}}
	load, err := store.NewBulkLoad(desc)
	if err != nil {
		t.Fatalf("bulk load: %v", err)
	}
	val, err := codec.EncodeValue(nil, types.Row{int64(1)}, desc.Types)
	if err != nil {
		t.Fatalf("encode: %v", err)
	}
	if err := load.Add([]int64{1}, storage.EncodedRows{Buf: val, Spans: []uint32{0, uint32(len(val))}}); err != nil {
		t.Fatalf("bulk load: %v", err)
	}
	path, err := store.NewLoadPath(table)
	if err != nil {
		t.Fatalf("bulk load path: %v", err)
	}
	f, err := load.Finish(path)
	if err != nil {
		t.Fatalf("bulk load: %v", err)
	}
	return f
}
