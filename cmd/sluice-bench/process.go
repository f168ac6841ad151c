package main

import (
	"os"
	"runtime"
	"strings"
	"syscall"
	"time"
)

// processCPU is the CPU time this process has used, user plus system,
// all threads: the engine and the benchmark's client share the process,
// and the client's share is a few polling queries.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// heapAfterGC is the live heap after a full collection: what the process
// holds, not what it has not yet collected.
func heapAfterGC() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// cpuSample is the process's CPU time at one wall-clock instant.
type cpuSample struct {
	at  time.Time
	cpu time.Duration
}

// cpuMeter turns samples into CPU use (in cores) over a trailing window.
// It reads no clock itself, so tests feed it synthetic samples.
type cpuMeter struct {
	window  time.Duration
	samples []cpuSample
}

func newCPUMeter(window time.Duration) *cpuMeter { return &cpuMeter{window: window} }

// add records a sample and forgets those no longer needed: it keeps the
// newest sample at or before the window's start, so the window is always
// measured over at least its full length.
func (m *cpuMeter) add(s cpuSample) {
	m.samples = append(m.samples, s)
	start := s.at.Add(-m.window)
	drop := 0
	for drop+1 < len(m.samples) && !m.samples[drop+1].at.After(start) {
		drop++
	}
	m.samples = m.samples[drop:]
}

// usage is the CPU used per wall-clock second (1.0 = one core busy) over
// the trailing window. ok is false until the samples cover a full window.
func (m *cpuMeter) usage() (cores float64, ok bool) {
	if len(m.samples) < 2 {
		return 0, false
	}
	first, last := m.samples[0], m.samples[len(m.samples)-1]
	wall := last.at.Sub(first.at)
	if wall < m.window || wall <= 0 {
		return 0, false
	}
	return float64(last.cpu-first.cpu) / float64(wall), true
}

// loadAverage is the machine's 1-minute load average from /proc/loadavg,
// or "unknown": numbers from a shared, loaded machine must say so.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	if f := strings.Fields(string(b)); len(f) > 0 {
		return f[0]
	}
	return "unknown"
}
