//go:build unix

package engine

import (
	"bytes"
	"fmt"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Probes of the test process itself: which goroutines a job still has,
// how much CPU the process burns, how big its heap is. The whole-system
// tests use them to show that a dropped or cancelled job is really gone,
// not merely forgotten by the catalog.

// goroutineRecord is one stack of a goroutine profile (debug=1): how many
// goroutines share it, their pprof labels and the stack text.
type goroutineRecord struct {
	count  int
	labels string
	stack  string
}

func goroutineProfile() []goroutineRecord {
	var buf bytes.Buffer
	if err := pprof.Lookup("goroutine").WriteTo(&buf, 1); err != nil {
		panic(err)
	}
	var out []goroutineRecord
	for _, line := range strings.Split(buf.String(), "\n") {
		if c, _, ok := strings.Cut(line, " @ "); ok && !strings.HasPrefix(line, "#") {
			if n, err := strconv.Atoi(c); err == nil {
				out = append(out, goroutineRecord{count: n})
				continue
			}
		}
		if len(out) == 0 {
			continue
		}
		cur := &out[len(out)-1]
		if l, ok := strings.CutPrefix(line, "# labels: "); ok {
			cur.labels = l
		} else {
			cur.stack += line + "\n"
		}
	}
	return out
}

// jobGoroutines counts the goroutines carrying the job's pprof label,
// which compute sets on every actor goroutine and which the goroutines an
// actor starts inherit.
func jobGoroutines(job uint32) int {
	want := fmt.Sprintf(`"job":"%d"`, job)
	n := 0
	for _, r := range goroutineProfile() {
		if strings.Contains(r.labels, want) {
			n += r.count
		}
	}
	return n
}

// goroutinesIn counts goroutines whose stack mentions fn (a function name
// as the profile prints it).
func goroutinesIn(fn string) int {
	n := 0
	for _, r := range goroutineProfile() {
		if strings.Contains(r.stack, fn) {
			n += r.count
		}
	}
	return n
}

// cpuTime is the user and system CPU time of the whole process so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		panic(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// cpuShare measures the process's CPU use over window, in cores.
func cpuShare(window time.Duration) float64 {
	c0, t0 := cpuTime(), time.Now()
	time.Sleep(window)
	return float64(cpuTime()-c0) / float64(time.Since(t0))
}

// liveHeap collects garbage and returns the bytes of live heap objects.
// Two cycles: the first one's finalizers may free more.
func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}
