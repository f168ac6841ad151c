package overwindow

import (
	"testing"

	"go.uber.org/goleak"
)

// The executor starts no goroutines, but the stores the tests open do.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
