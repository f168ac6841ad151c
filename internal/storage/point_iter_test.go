package storage

import (
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
)

// TestPointItersSeeChanges checks the pool's one promise: an iterator it
// hands out for want sees every change counted up to want, however the
// iterators made before the change come back (returned after it, or
// still idle in the pool when the reader asks).
func TestPointItersSeeChanges(t *testing.T) {
	db, err := pebble.Open("db", &pebble.Options{FS: vfs.NewMem()})
	if err != nil {
		t.Fatal(err)
	}
	var p pointIters
	has := func(pi *pointIter, key string) bool {
		t.Helper()
		_, found, err := seek(pi.it, []byte(key))
		if err != nil {
			t.Fatal(err)
		}
		return found
	}
	change := func(key string) {
		t.Helper()
		if err := db.Set([]byte(key), []byte("v"), pebble.Sync); err != nil {
			t.Fatal(err)
		}
		p.changed()
	}
	get := func() *pointIter {
		t.Helper()
		pi, err := p.take(p.gen.Load())
		if err == nil && pi == nil {
			pi, err = p.make(db)
		}
		if err != nil {
			t.Fatal(err)
		}
		return pi
	}
	mustSee := func(key, why string) {
		t.Helper()
		pi := get()
		defer p.put(pi)
		if !has(pi, key) {
			t.Fatalf("a reader got %s made before the change it wants", why)
		}
	}

	// An iterator in use during a change comes back after it.
	inUse := get()
	change("a")
	p.put(inUse)
	if n := len(p.mu.free); n != 0 {
		t.Fatalf("the pool keeps %d iterators made before the last change: they pin its memtables", n)
	}
	mustSee("a", "an iterator")

	// A change counted but not yet drained from the pool.
	idle := get()
	p.put(idle)
	if err := db.Set([]byte("b"), []byte("v"), pebble.Sync); err != nil {
		t.Fatal(err)
	}
	p.gen.Add(1) // changed() has counted b, not yet closed the idle iterator
	mustSee("b", "an idle iterator")

	// Iterators made at the current gen are reused, and all are closed.
	a := get()
	p.put(a)
	if b := get(); b != a {
		t.Fatal("a current iterator was not reused")
	} else {
		p.put(b)
	}
	// Past its age an iterator is not reused, even with nothing changed.
	defer func(d time.Duration) { pointIterMaxAge = d }(pointIterMaxAge)
	pointIterMaxAge = 0
	c := get()
	p.put(c)
	if d := get(); d == c {
		t.Fatal("an iterator past its age was reused")
	} else {
		p.put(d)
	}
	// close waits for the iterators handed out.
	out := get()
	closed := make(chan struct{})
	go func() { p.close(); close(closed) }()
	select {
	case <-closed:
		t.Fatal("close returned while an iterator was out")
	case <-time.After(50 * time.Millisecond):
	}
	p.put(out)
	<-closed
	if _, err := p.take(0); err == nil {
		t.Fatal("take after close: no error")
	}
	if _, err := p.make(db); err == nil {
		t.Fatal("make after close: no error")
	}
	if err := db.Close(); err != nil {
		t.Fatalf("close: %v (an iterator left open)", err)
	}
}
