package parser

import "github.com/sluice-db/sluice/internal/sqlerr"

// A statement's text is small next to what parsing and planning it take:
// a 100 000-item IN list of five-digit numbers is 600 KB of SQL but about
// 1.7 KB per item in memory (pg_query's C tree and its protobuf, the Go
// tree, the plan), so a 64 MB message could need 17 GB and end the
// process. ParseWithin refuses a text whose estimate is above the
// session's query_memory_limit: before scanning, by its length (the
// scanner's tokens cost up to scanBytesPerByte per byte of SQL), and after,
// by its tokens (parseBytesPerToken each, measured on such lists).
const (
	scanBytesPerByte   = 96
	parseBytesPerToken = 1536
)

// checkSize refuses n units of perUnit bytes each above limit (0: none).
func checkSize(n, perUnit, limit int64) error {
	if limit <= 0 || n <= limit/perUnit {
		return nil
	}
	e := sqlerr.Errorf(sqlerr.ProgramLimitExceeded,
		"statement too large: parsing it would take about %d MB, more than query_memory_limit (%d MB)",
		n*perUnit>>20, limit>>20)
	e.Hint = "Load bulk data with COPY, split the statement into smaller ones, or raise query_memory_limit."
	return e
}
