package connector

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/sluice-db/sluice/internal/sqlerr"
	"github.com/sluice-db/sluice/internal/types"
)

// RowIDColumn is the hidden key column a connector fills when the source
// or table declares no primary key.
const RowIDColumn = "_row_id"

// Column is a declared column of a source.
type Column struct {
	Name string
	Type types.Type
}

// Spec is a source as declared: what Open validates, and what a plan
// carries so that every actor opens the same source.
type Spec struct {
	Connector string
	// Options are the WITH options other than connector, by name as
	// written (names are matched case-insensitively).
	Options map[string]string `json:",omitempty"`
	Columns []Column
	// RowID appends the hidden _row_id column (bigint) to the rows.
	RowID bool `json:",omitempty"`
}

// Schema is the types of the rows a source of spec produces: the declared
// columns, then _row_id when spec.RowID.
func (s Spec) Schema() []types.Type {
	ts := make([]types.Type, 0, len(s.Columns)+1)
	for _, c := range s.Columns {
		ts = append(ts, c.Type)
	}
	if s.RowID {
		ts = append(ts, types.TInt64)
	}
	return ts
}

// Source is a validated source: a fixed set of splits.
type Source interface {
	// Splits is the number of splits, numbered from 0.
	Splits() int
	// Open returns a reader of split from offset (0: its beginning; else
	// an offset a reader of the same split returned).
	Open(split int, offset int64) (Reader, error)
	// End is the offset of split's end, when the split has one (a bounded
	// generator); ok is false for an endless split.
	End(split int) (offset int64, ok bool)
}

// Narrower is a Source that can leave out of its rows the work of columns
// nobody reads: ReadOnly marks the columns read (nil: all), before any
// split is opened. An unread column may hold anything.
type Narrower interface {
	ReadOnly(read []bool)
}

// Reader reads one split. It is used by one goroutine at a time.
type Reader interface {
	// Read returns up to limit rows ready now and the split's offset after
	// them. With no row ready it returns a nil chunk and Ready says when
	// to ask again.
	Read(limit int) (*types.Chunk, int64, Ready, error)
}

// Ready is when a reader that returned no rows may have rows again.
type Ready struct {
	// At is the earliest time (a paced generator's next row); zero with
	// Done false means at once.
	At time.Time
	// Done reports that the split is exhausted for good.
	Done bool
}

// opener validates the options and columns for one connector.
type opener func(o *options, cols []Column, rowID bool) (Source, error)

var connectors = map[string]opener{
	"nexmark": openNexmark,
	"datagen": openDatagen,
}

// plannedConnectors are connectors RisingWave users will name that Sluice
// does not have yet.
var plannedConnectors = []string{"kafka", "postgres-cdc", "mysql-cdc", "kinesis", "pulsar", "s3", "filesystem"}

// Open validates spec and returns its source.
func Open(spec Spec) (Source, error) {
	name := strings.ToLower(spec.Connector)
	open, ok := connectors[name]
	if !ok {
		if slices.Contains(plannedConnectors, name) {
			return nil, sqlerr.Errorf(sqlerr.FeatureNotSupported, "connector %q is not supported yet; the connectors are %s",
				spec.Connector, strings.Join(Names(), ", "))
		}
		return nil, sqlerr.Errorf(sqlerr.InvalidParameterValue, "unknown connector %q; the connectors are %s",
			spec.Connector, strings.Join(Names(), ", "))
	}
	if err := checkColumns(spec.Columns); err != nil {
		return nil, err
	}
	o := newOptions(name, spec.Options)
	src, err := open(o, spec.Columns, spec.RowID)
	if err != nil {
		return nil, err
	}
	if err := o.unused(); err != nil {
		return nil, err
	}
	return src, nil
}

// Names lists the connectors, sorted.
func Names() []string {
	out := make([]string, 0, len(connectors))
	for n := range connectors {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

func checkColumns(cols []Column) error {
	if len(cols) == 0 {
		return sqlerr.New(sqlerr.FeatureNotSupported, "a source needs at least one column")
	}
	for i, c := range cols {
		if c.Name == RowIDColumn {
			return sqlerr.Errorf(sqlerr.Code("42701"), "column name %q is reserved", c.Name)
		}
		for _, d := range cols[:i] {
			if d.Name == c.Name {
				return sqlerr.Errorf(sqlerr.Code("42701"), "column %q specified more than once", c.Name)
			}
		}
	}
	return nil
}

// newColumns returns empty columns of ts with room for n rows, and nil
// for the columns read marks unread (read nil: all are read), which the
// caller fills with NULLs from a types.NullHeads.
func newColumns(ts []types.Type, n int, read []bool) ([]types.Column, error) {
	cols := make([]types.Column, len(ts))
	for i, t := range ts {
		if read != nil && i < len(read) && !read[i] {
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

// insertChunk wraps filled columns as a chunk of n inserts.
func insertChunk(cols []types.Column, n int) *types.Chunk {
	return types.NewChunk(cols, make([]types.Op, n)) // the zero Op is Insert
}
