package topn

import (
	"context"
	"testing"

	"go.uber.org/goleak"

	"github.com/sluice-db/sluice/internal/storage"
)

// The executor starts no goroutines, but the stores the tests open do;
// goleak checks every test closes its store.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// testStore is the slice of testing.T and rapid.T the store helper needs.
type testStore interface {
	Helper()
	Fatalf(format string, args ...any)
	Cleanup(func())
}

// openStore opens an in-memory store closed when the test ends.
func openStore(t testStore) *storage.Store {
	t.Helper()
	s, err := storage.Open(context.Background(), storage.Options{InMemory: true})
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}
