package batch

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"os"

	"github.com/sluice-db/sluice/internal/plan"
	"github.com/sluice-db/sluice/internal/types"
	"github.com/sluice-db/sluice/internal/types/codec"
)

// A GROUP BY with more groups than memory aggregates in partitions (hybrid
// hash aggregation): once its groups take half the query's memory limit,
// a row of a group not yet in memory is written to one of aggPartitions
// files by its key's hash instead, while rows of the groups in memory go
// on folding into them. After the input, the groups in memory are
// emitted, then each partition is aggregated the same way from its file
// (a partition too big again partitions again, up to aggMaxDepth levels).
// A group's rows all land in one place, so every group is whole. What one
// group keeps (string_agg's values, DISTINCT's seen arguments) is not
// partitioned and still fails with 53200 past the limit.
const (
	aggPartitions = 16
	aggMaxDepth   = 4
)

// errSpillRow tells add to write the row to a partition.
var errSpillRow = errors.New("batch: aggregate row to spill")

// aggSpill is an aggregation's partition files.
type aggSpill struct {
	parts [aggPartitions]*spillFile
}

// spillFile is a file of encoded rows: a uvarint length, then the value.
type spillFile struct {
	f   *os.File
	w   *bufio.Writer
	buf []byte
}

func newSpillFile(dir string) (*spillFile, error) {
	f, err := os.CreateTemp(dir, "sluice-agg-*")
	if err != nil {
		return nil, fmt.Errorf("batch: spilling an aggregate: %w", err)
	}
	return &spillFile{f: f, w: bufio.NewWriterSize(f, 64<<10)}, nil
}

func (s *spillFile) write(r types.Row, ts []types.Type) error {
	v, err := codec.EncodeValue(s.buf[:0], r, ts)
	if err != nil {
		return err
	}
	s.buf = v
	var n [binary.MaxVarintLen64]byte
	if _, err := s.w.Write(n[:binary.PutUvarint(n[:], uint64(len(v)))]); err != nil {
		return fmt.Errorf("batch: spilling an aggregate: %w", err)
	}
	if _, err := s.w.Write(v); err != nil {
		return fmt.Errorf("batch: spilling an aggregate: %w", err)
	}
	return nil
}

// rewind makes the file readable from its start.
func (s *spillFile) rewind(ts []types.Type) (*fileRun, error) {
	if err := s.w.Flush(); err != nil {
		return nil, fmt.Errorf("batch: spilling an aggregate: %w", err)
	}
	if _, err := s.f.Seek(0, io.SeekStart); err != nil {
		return nil, fmt.Errorf("batch: spilling an aggregate: %w", err)
	}
	return &fileRun{r: bufio.NewReaderSize(s.f, 64<<10), ts: ts}, nil
}

func (s *spillFile) remove() {
	_ = s.f.Close()
	_ = os.Remove(s.f.Name())
}

// mayPartition reports whether a new group should go to a partition.
func (g *aggregation) mayPartition(n int64) bool {
	x := g.x
	return x.spillDir != "" && x.mem.limit > 0 && len(g.a.GroupKeys) > 0 && g.depth < aggMaxDepth &&
		g.groupBytes+n > x.mem.limit/2
}

// spillRow writes r, whose group key is k, to its partition.
func (g *aggregation) spillRow(k string, r types.Row) error {
	if g.spill == nil {
		g.spill = &aggSpill{}
	}
	h := fnv.New32a()
	h.Write([]byte{byte(g.depth)})
	h.Write([]byte(k))
	p := &g.spill.parts[h.Sum32()%aggPartitions]
	if *p == nil {
		f, err := newSpillFile(g.x.spillDir)
		if err != nil {
			return err
		}
		*p = f
	}
	return (*p).write(r, g.in)
}

// closeSpill removes the partition files.
func (g *aggregation) closeSpill() {
	if g.spill == nil {
		return
	}
	for _, p := range g.spill.parts {
		if p != nil {
			p.remove()
		}
	}
}

// aggregatePartitions aggregates each partition file as its own input.
func (g *aggregation) aggregatePartitions(ctx context.Context, n *plan.Node, emit emitFunc) error {
	if g.spill == nil {
		return nil
	}
	for _, p := range g.spill.parts {
		if p == nil {
			continue
		}
		src, err := p.rewind(g.in)
		if err != nil {
			return err
		}
		sub := &aggregation{x: g.x, a: g.a, in: g.in, groups: map[string]*aggGroup{}, depth: g.depth + 1}
		if err := sub.prepare(); err != nil {
			return err
		}
		err = sub.runAll(ctx, n, emit, func(add emitFunc) error { return feedRows(ctx, src, g.in, g.x.size, add) })
		if err != nil {
			return err
		}
	}
	return nil
}

// feedRows passes a file's rows to add in chunks.
func feedRows(ctx context.Context, src *fileRun, ts []types.Type, size int, add emitFunc) error {
	bld := types.NewBuilder(ts, size)
	for {
		r, err := src.next()
		if err != nil {
			return err
		}
		if r == nil {
			break
		}
		if c := bld.Append(types.Insert, r); c != nil {
			if err := add(ctx, c); err != nil {
				return err
			}
		}
	}
	if c := bld.Take(); c != nil {
		return add(ctx, c)
	}
	return nil
}
