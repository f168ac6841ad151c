package session

import (
	"strconv"
	"strings"

	"github.com/sluice-db/sluice/internal/batch"
	"github.com/sluice-db/sluice/internal/runtimecfg"
	"github.com/sluice-db/sluice/internal/sqlerr"
)

// query_memory_limit bounds what one query keeps in memory (the batch
// executor's sorts, hash joins, aggregates and DISTINCT, batch/mem.go);
// Config.QueryPool bounds what all running queries keep together. Past
// either a query spills to disk, or fails with 53200 when it cannot,
// instead of the process running out of memory. The defaults are a
// quarter and a half of the machine's memory (4 GB when it cannot be
// read). Values are written as Postgres writes memory settings: a plain
// number is kB; B, kB, MB, GB and TB are units.

// DefaultQueryPool is a query memory pool of half the machine's memory.
func DefaultQueryPool() *batch.MemoryPool { return batch.NewMemoryPool(runtimecfg.MachineMemory() / 2) }

var memoryUnits = []struct {
	name  string
	bytes int64
}{{"TB", 1 << 40}, {"GB", 1 << 30}, {"MB", 1 << 20}, {"kB", 1 << 10}, {"B", 1}}

// ParseMemory reads a memory setting into bytes.
func ParseMemory(s string) (int64, error) { return parseMemory(s) }

// parseMemory reads a memory setting into bytes.
func parseMemory(s string) (int64, error) {
	s = strings.TrimSpace(s)
	num, unit := s, int64(1<<10) // plain numbers are kB
	for _, u := range memoryUnits {
		if len(s) > len(u.name) && strings.EqualFold(s[len(s)-len(u.name):], u.name) {
			num, unit = strings.TrimSpace(s[:len(s)-len(u.name)]), u.bytes
			break
		}
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n < 0 || n > (1<<62)/unit {
		e := sqlerr.Errorf(sqlerr.InvalidParameterValue, "invalid value for parameter \"query_memory_limit\": %q", s)
		e.Hint = `Valid units for this parameter are "B", "kB", "MB", "GB", and "TB"; 0 means no limit.`
		return 0, e
	}
	return n * unit, nil
}

// formatMemory writes bytes in the largest unit that divides them.
func formatMemory(n int64) string {
	if n == 0 {
		return "0"
	}
	for _, u := range memoryUnits {
		if n%u.bytes == 0 {
			return strconv.FormatInt(n/u.bytes, 10) + u.name
		}
	}
	return strconv.FormatInt(n, 10) + "B"
}

// checkMemory normalises a query_memory_limit value.
func checkMemory(s string) (string, error) {
	n, err := parseMemory(s)
	if err != nil {
		return "", err
	}
	return formatMemory(n), nil
}

// memoryLimit is the session's query_memory_limit in bytes.
func (s *Session) memoryLimit() int64 {
	_, v, _ := s.vars.get("query_memory_limit")
	n, _ := parseMemory(v)
	return n
}
