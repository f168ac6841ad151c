package storage

import (
	"testing"
	"time"
)

func TestMinSyncInterval(t *testing.T) {
	var w dmlWriters
	for range commitSiblings + 1 { // the writer asking and its siblings
		defer w.enter()()
	}
	if f := minSyncInterval(0, &w); f == nil || f() != DefaultCommitDelay {
		t.Errorf("CommitDelay 0: want the default %v", DefaultCommitDelay)
	}
	if f := minSyncInterval(time.Millisecond, &w); f == nil || f() != time.Millisecond {
		t.Error("CommitDelay 1ms: want 1ms between syncs")
	}
	if f := minSyncInterval(-1, &w); f != nil {
		t.Errorf("negative CommitDelay: want no interval, got %v", f())
	}
}

// TestLoneWriterSyncsAtOnce: without siblings in flight a sync waits for
// no one (a lone session paid the delay on every statement); the delay
// comes back as soon as enough writers are in flight, and goes once they
// leave.
func TestLoneWriterSyncsAtOnce(t *testing.T) {
	var w dmlWriters
	f := minSyncInterval(time.Millisecond, &w)
	leave := w.enter()
	if d := f(); d != 0 {
		t.Fatalf("one writer in flight: interval %v, want 0", d)
	}
	var leaves []func()
	for range commitSiblings {
		leaves = append(leaves, w.enter())
	}
	if d := f(); d != time.Millisecond {
		t.Fatalf("%d writers in flight: interval %v, want 1ms", commitSiblings+1, d)
	}
	for _, l := range leaves {
		l()
	}
	leave()
	if d := f(); d != 0 {
		t.Fatalf("no writer in flight: interval %v, want 0", d)
	}
}
