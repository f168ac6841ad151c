package runtimecfg

import (
	"bufio"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
)

// GCPercent is the garbage collector's target a server runs with when
// $GOGC does not set one: the heap may grow to three times what is live
// before a cycle, where Go's default (100) allows twice. A streaming
// job allocates a row's boxed values, its encoded keys and its chunks
// per row and keeps few of them, so with the default the collector ran
// every few hundred megabytes and took 9–14 % of Nexmark q4, q5 and q7
// (q4 121 k → 156 k events per CPU-second at 400, q5 184 k → 219 k, q7
// 126 k → 165 k). A larger target has its own cost: every byte the heap
// grows by is a page the process touches for the first time, and a page
// fault cost about 7 µs on the VM measured. Against 400, 200 was as fast
// (q4, q5, q9, q18: medians within noise over eight and three rounds)
// or faster (q7 +7 %, q20 +14 %), with a peak RSS 10–30 % lower on
// every query (docs/BENCHMARKS.md, thirtieth session).
// SoftMemoryLimit keeps the growth from running the machine out of
// memory: near it the collector runs as often as it must.
const GCPercent = 200

// memoryLimitShare is the part of the machine's memory (or its cgroup's
// limit) the runtime's soft limit allows the process, in quarters.
const memoryLimitShare = 3

// TuneGC sets the collector's target to GCPercent and its soft memory
// limit to SoftMemoryLimit(), each unless the environment ($GOGC,
// $GOMEMLIMIT, read through getenv) sets it, since the runtime has then
// applied the operator's choice. It returns the values in force.
func TuneGC(getenv func(string) string) (percent int, limit int64) {
	if getenv("GOGC") == "" {
		debug.SetGCPercent(GCPercent)
	}
	if getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(SoftMemoryLimit())
	}
	percent = debug.SetGCPercent(-1)
	debug.SetGCPercent(percent)
	return percent, debug.SetMemoryLimit(-1)
}

// SoftMemoryLimit is three quarters of MachineMemory.
func SoftMemoryLimit() int64 { return MachineMemory() / 4 * memoryLimitShare }

// MachineMemory is the memory the process may use: /proc/meminfo's
// MemTotal, or the cgroup's memory.max when that is lower (a container);
// 4 GiB when neither can be read.
func MachineMemory() int64 {
	total := memTotal()
	if cg, ok := cgroupLimit(); ok && (total <= 0 || cg < total) {
		total = cg
	}
	if total <= 0 {
		return 4 << 30
	}
	return total
}

// memTotal is /proc/meminfo's MemTotal in bytes (0 when unknown).
func memTotal() int64 {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 2 && fields[0] == "MemTotal:" {
			if kb, err := strconv.ParseInt(fields[1], 10, 64); err == nil && kb > 0 {
				return kb << 10
			}
		}
	}
	return 0
}

// cgroupLimit is the cgroup v2 memory.max of the process's cgroup, when
// it sets a number ("max" sets none).
func cgroupLimit() (int64, bool) {
	b, err := os.ReadFile("/sys/fs/cgroup/memory.max")
	if err != nil {
		return 0, false
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	return n, err == nil && n > 0
}
