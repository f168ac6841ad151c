package batch

import (
	"bufio"
	"context"
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"io"
	"os"

	"github.com/sluice-db/sluice/internal/types"
	"github.com/sluice-db/sluice/internal/types/codec"
)

// Operators that keep state by key (aggregation, DISTINCT, a hash join's
// build side) go past the memory limit by hash partitioning: once what
// they keep takes half the query's limit, or the server's query memory
// runs short, rows of keys not yet in memory are written to one of
// spillPartitions files by their key's hash, and each file is processed
// afterwards as an input of its own. All rows of one key land in one
// file, so every key is whole there. A file still too big partitions
// again with another hash seed, up to spillMaxDepth levels; past that the
// operator keeps in memory and fails with 53200 at the limit (one key
// with more rows than memory, which no partitioning can split).
const (
	spillPartitions = 16
	spillMaxDepth   = 4
)

// maySpill reports whether an operator at depth, holding held bytes, should
// write a row needing n more to a partition rather than keep it.
func (x *executor) maySpill(depth int, held, n int64) bool {
	if !x.canSpill() || depth >= spillMaxDepth {
		return false
	}
	return x.pressed(held, n)
}

// canSpill reports whether the query has a place to spill and a reason.
func (x *executor) canSpill() bool {
	return x.spillDir != "" && (x.mem.limit > 0 || x.mem.pool != nil)
}

// pressed reports whether an operator holding held bytes should stop
// keeping n more: past half the query's limit, or past what the pool has.
func (x *executor) pressed(held, n int64) bool {
	return (x.mem.limit > 0 && held+n > x.mem.limit/2) || x.mem.poolShort(n)
}

// partitionSet is one partitioning's files; a file is created with its
// first row.
type partitionSet struct {
	dir   string
	depth int
	ts    []types.Type
	parts [spillPartitions]*spillFile
}

func newPartitionSet(dir string, depth int, ts []types.Type) *partitionSet {
	return &partitionSet{dir: dir, depth: depth, ts: ts}
}

// add writes r, whose key encodes as key, to its partition.
func (p *partitionSet) add(key string, r types.Row) error {
	h := fnv.New32a()
	h.Write([]byte{byte(p.depth)})
	h.Write([]byte(key))
	f := &p.parts[h.Sum32()%spillPartitions]
	if *f == nil {
		s, err := newSpillFile(p.dir)
		if err != nil {
			return err
		}
		*f = s
	}
	return (*f).write(r, p.ts)
}

// feed passes partition i's rows to add in chunks of size; an empty
// partition passes none.
func (p *partitionSet) feed(ctx context.Context, i, size int, add emitFunc) error {
	if p == nil || p.parts[i] == nil {
		return nil
	}
	src, err := p.parts[i].rewind(p.ts)
	if err != nil {
		return err
	}
	return feedRows(ctx, src, p.ts, size, add)
}

// each calls fn with the feed of every partition that has rows, in turn.
func (p *partitionSet) each(ctx context.Context, size int, fn func(feed func(emitFunc) error) error) error {
	for i := range spillPartitions {
		if p.empty(i) {
			continue
		}
		if err := fn(func(add emitFunc) error { return p.feed(ctx, i, size, add) }); err != nil {
			return err
		}
	}
	return nil
}

// empty reports whether partition i has no rows.
func (p *partitionSet) empty(i int) bool { return p == nil || p.parts[i] == nil }

// close removes the files.
func (p *partitionSet) close() {
	if p == nil {
		return
	}
	for _, f := range p.parts {
		if f != nil {
			f.remove()
		}
	}
}

// spillFile is a file of encoded rows: a uvarint length, then the value.
type spillFile struct {
	f   *os.File
	w   *bufio.Writer
	buf []byte
}

func newSpillFile(dir string) (*spillFile, error) {
	f, err := os.CreateTemp(dir, "sluice-spill-*")
	if err != nil {
		return nil, fmt.Errorf("batch: spilling to disk: %w", err)
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
		return fmt.Errorf("batch: spilling to disk: %w", err)
	}
	if _, err := s.w.Write(v); err != nil {
		return fmt.Errorf("batch: spilling to disk: %w", err)
	}
	return nil
}

// rewind makes the file readable from its start.
func (s *spillFile) rewind(ts []types.Type) (*fileRun, error) {
	if err := s.w.Flush(); err != nil {
		return nil, fmt.Errorf("batch: spilling to disk: %w", err)
	}
	if _, err := s.f.Seek(0, io.SeekStart); err != nil {
		return nil, fmt.Errorf("batch: spilling to disk: %w", err)
	}
	return &fileRun{r: bufio.NewReaderSize(s.f, 64<<10), ts: ts}, nil
}

func (s *spillFile) remove() {
	_ = s.f.Close()
	_ = os.Remove(s.f.Name())
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
