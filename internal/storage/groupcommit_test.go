package storage

import (
	"testing"
	"time"
)

func TestMinSyncInterval(t *testing.T) {
	if f := minSyncInterval(0); f == nil || f() != DefaultCommitDelay {
		t.Errorf("CommitDelay 0: want the default %v", DefaultCommitDelay)
	}
	if f := minSyncInterval(time.Millisecond); f == nil || f() != time.Millisecond {
		t.Error("CommitDelay 1ms: want 1ms between syncs")
	}
	if f := minSyncInterval(-1); f != nil {
		t.Errorf("negative CommitDelay: want no interval, got %v", f())
	}
}
