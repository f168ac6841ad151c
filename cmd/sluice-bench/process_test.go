package main

import (
	"fmt"
	"math"
	"runtime"
	"testing"
	"time"
)

func TestCPUMeter(t *testing.T) {
	t0 := time.Unix(1000, 0)
	m := newCPUMeter(100 * time.Millisecond)
	at := func(ms int, cpuMS int) cpuSample {
		return cpuSample{at: t0.Add(time.Duration(ms) * time.Millisecond), cpu: time.Duration(cpuMS) * time.Millisecond}
	}
	m.add(at(0, 0))
	m.add(at(50, 50))
	if _, ok := m.usage(); ok {
		t.Fatal("usage reported before a full window was covered")
	}
	m.add(at(100, 100)) // one core busy for the whole window
	if u, ok := m.usage(); !ok || math.Abs(u-1) > 1e-9 {
		t.Fatalf("busy: usage %v %t, want 1", u, ok)
	}
	m.add(at(150, 100))
	m.add(at(200, 100)) // the window 100..200 used nothing
	if u, ok := m.usage(); !ok || u != 0 {
		t.Fatalf("idle: usage %v %t, want 0", u, ok)
	}
	m.add(at(230, 130)) // window 130..230 holds samples from 100: 30ms over 130ms
	if u, ok := m.usage(); !ok || math.Abs(u-30.0/130) > 1e-9 {
		t.Fatalf("partial: usage %v %t, want %v", u, ok, 30.0/130)
	}
	if len(m.samples) > 4 {
		t.Fatalf("meter keeps %d samples, want old ones dropped", len(m.samples))
	}
}

// TestProcessCPU checks that getrusage sees this process work: spinning
// for 50 ms of wall time must add CPU time, however loaded the machine.
func TestProcessCPU(t *testing.T) {
	before := processCPU()
	if before <= 0 {
		t.Fatalf("processCPU = %v at start of a running test", before)
	}
	x := 0
	for deadline := time.Now().Add(50 * time.Millisecond); time.Now().Before(deadline); {
		x++
	}
	after := processCPU()
	if after <= before {
		t.Fatalf("processCPU did not grow while spinning (%v → %v, %d loops)", before, after, x)
	}
}

// TestHeapAfterGC checks that heapAfterGC sees 32 MiB held live. Memory
// another test's goroutines still hold (an engine closing) can be freed
// between the two readings and hide the growth, so a few tries are
// allowed; a function that did not see live memory fails every one.
func TestHeapAfterGC(t *testing.T) {
	var seen []string
	for range 5 {
		base := heapAfterGC()
		hold := make([]byte, 32<<20)
		hold[len(hold)-1] = 1
		grown := heapAfterGC()
		runtime.KeepAlive(hold)
		if grown >= base+16<<20 {
			return
		}
		seen = append(seen, fmt.Sprintf("%d → %d", base, grown))
	}
	t.Fatalf("heap with 32 MiB live: %v", seen)
}
