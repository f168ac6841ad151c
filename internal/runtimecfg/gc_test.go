package runtimecfg

import (
	"math"
	"runtime/debug"
	"testing"
)

// TestTuneGCLeavesTheOperatorsChoice: without $GOGC and $GOMEMLIMIT the
// server's target and soft limit are set; with them, what the runtime
// applied from the environment stays.
func TestTuneGCLeavesTheOperatorsChoice(t *testing.T) {
	oldPercent := debug.SetGCPercent(100)
	oldLimit := debug.SetMemoryLimit(math.MaxInt64)
	t.Cleanup(func() {
		debug.SetGCPercent(oldPercent)
		debug.SetMemoryLimit(oldLimit)
	})
	percent, limit := TuneGC(func(string) string { return "" })
	if percent != GCPercent || limit != SoftMemoryLimit() {
		t.Fatalf("unset environment: got GOGC %d, limit %d; want %d, %d", percent, limit, GCPercent, SoftMemoryLimit())
	}
	if l := SoftMemoryLimit(); l <= 0 || l >= MachineMemory() {
		t.Fatalf("soft limit %d is not a part of the machine's %d bytes", l, MachineMemory())
	}

	debug.SetGCPercent(77)
	debug.SetMemoryLimit(1 << 40)
	set := map[string]string{"GOGC": "77", "GOMEMLIMIT": "1TiB"}
	percent, limit = TuneGC(func(k string) string { return set[k] })
	if percent != 77 || limit != 1<<40 {
		t.Fatalf("operator's environment: got GOGC %d, limit %d; want 77, %d", percent, limit, int64(1<<40))
	}
}
