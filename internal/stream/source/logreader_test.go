package source

import (
	"context"
	"runtime"
	"testing"
	"weak"

	"github.com/sluice-db/sluice/internal/stream/streamtest"
	"github.com/sluice-db/sluice/internal/types"
)

// TestLogReaderLetsGoOfTakenRecords: once a record's rows are all taken,
// the reader holds nothing of its payload (a bulk statement's is a hundred
// megabytes), even while the log has nothing new.
func TestLogReaderLetsGoOfTakenRecords(t *testing.T) {
	store := streamtest.OpenStore(t)
	b := types.NewBuilder(srcSchema, 1<<18+1)
	for i := range 1 << 18 {
		b.Append(types.Insert, types.Row{int64(i), "a value long enough to make the record megabytes"})
	}
	payload, err := EncodeDML(b.Take())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.AppendDML(context.Background(), srcTableID, payload); err != nil {
		t.Fatal(err)
	}
	payload = nil
	r := newLogReader(store, srcTableID, srcSchema, logPos{})
	c, _, err := r.take(1024)
	if err != nil || c == nil {
		t.Fatalf("first take: %v %v", c, err)
	}
	held := weak.Make(&r.rec.r.b[0])
	for c != nil {
		if c, _, err = r.take(1024); err != nil {
			t.Fatal(err)
		}
	}
	runtime.GC()
	if held.Value() != nil {
		t.Fatal("the reader still holds the payload of a record it has taken whole")
	}
	runtime.KeepAlive(r) // the reader is alive: what it holds is what counts
}
