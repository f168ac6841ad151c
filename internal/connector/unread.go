package connector

import (
	"fmt"

	"github.com/sluice-db/sluice/internal/types"
)

// unreadColumns stands in for the columns no executor reads (Narrower):
// each is the head of one column of zero values made once per reader, so
// a chunk pays a header for it instead of a vector it fills and nobody
// looks at. Nexmark q5 reads two of a bid's seven columns; the other five
// were a seventh of everything the query allocated. A reader's columns
// are used by one goroutine at a time and never changed: a column nobody
// reads is not written either.
type unreadColumns struct {
	zeros []types.Column // per column: nil when read
}

// newUnreadColumns prepares the stand-ins of schema's columns that read
// marks unread (nil: all are read), for chunks of up to max rows.
func newUnreadColumns(schema []types.Type, read []bool, max int) unreadColumns {
	var u unreadColumns
	for i, t := range schema {
		if read != nil && i < len(read) && !read[i] {
			if u.zeros == nil {
				u.zeros = make([]types.Column, len(schema))
			}
			u.zeros[i] = types.ZeroColumn(t, max)
		}
	}
	return u
}

// read reports whether column i is read.
func (u unreadColumns) read(i int) bool { return u.zeros == nil || u.zeros[i] == nil }

// columns returns empty columns with room for n rows for the read
// columns, and nil for the others (fill sets them).
func (u unreadColumns) columns(ts []types.Type, n int) ([]types.Column, error) {
	cols := make([]types.Column, len(ts))
	for i, t := range ts {
		if !u.read(i) {
			continue
		}
		c, err := types.NewColumn(t, n)
		if err != nil {
			return nil, fmt.Errorf("connector: %w", err)
		}
		cols[i] = c
	}
	return cols, nil
}

// fill sets each unread column of cols to n zero values.
func (u unreadColumns) fill(cols []types.Column, n int) {
	for i, z := range u.zeros {
		if z != nil {
			cols[i] = types.Head(z, n)
		}
	}
}
