package topn

import (
	"testing"

	"go.uber.org/goleak"
)

// The executor starts no goroutines, but the stores the tests open do;
// goleak checks every test closes its store.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
