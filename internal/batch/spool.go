package batch

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/sluice-db/sluice/internal/types"
	"github.com/sluice-db/sluice/internal/types/codec"
)

// Spool keeps rows in the order they come, to be read back once: in
// memory up to a bound, then in a file, as Postgres's tuplestore keeps a
// statement's RETURNING rows until the statement is done. The file is
// unlinked as soon as it is created, so it goes however the process ends.
type Spool struct {
	ts    []types.Type
	dir   string
	limit int64
	rows  []types.Row // in memory, before the file
	bytes int64
	f     *os.File
	w     *bufio.Writer
	buf   []byte
	n     int
}

// NewSpool returns a spool of rows of types ts that keeps up to limit
// bytes of them in memory (RowBytes) and the rest in a file in dir.
func NewSpool(ts []types.Type, dir string, limit int64) *Spool {
	return &Spool{ts: ts, dir: dir, limit: limit}
}

// RowBytes estimates the heap a row holds: its slice and each datum.
func RowBytes(r types.Row) int64 { return rowBytes(r) }

// Len returns the rows added.
func (s *Spool) Len() int { return s.n }

// Add keeps r, which the spool owns from now on.
func (s *Spool) Add(r types.Row) error {
	s.n++
	if s.f == nil {
		if b := rowBytes(r); s.bytes+b <= s.limit || len(s.rows) == 0 {
			s.rows, s.bytes = append(s.rows, r), s.bytes+b
			return nil
		}
		if err := s.open(); err != nil {
			return err
		}
	}
	return s.write(r)
}

// open creates the file and moves the rows held in memory to it.
func (s *Spool) open() error {
	f, err := os.CreateTemp(s.dir, "sluice-spool-*")
	if err != nil {
		return fmt.Errorf("batch: spooling rows: %w", err)
	}
	if err := os.Remove(f.Name()); err != nil {
		_ = f.Close()
		return fmt.Errorf("batch: spooling rows: %w", err)
	}
	s.f, s.w = f, bufio.NewWriterSize(f, 256<<10)
	for _, r := range s.rows {
		if err := s.write(r); err != nil {
			return err
		}
	}
	s.rows, s.bytes = nil, 0
	return nil
}

func (s *Spool) write(r types.Row) error {
	v, err := codec.EncodeValue(s.buf[:0], r, s.ts)
	if err != nil {
		return err
	}
	s.buf = v
	var n [binary.MaxVarintLen64]byte
	if _, err := s.w.Write(n[:binary.PutUvarint(n[:], uint64(len(v)))]); err != nil {
		return fmt.Errorf("batch: spooling rows: %w", err)
	}
	if _, err := s.w.Write(v); err != nil {
		return fmt.Errorf("batch: spooling rows: %w", err)
	}
	return nil
}

// Each hands every row to fn, in the order they were added. It checks ctx
// once every 1 024 rows read from the file.
func (s *Spool) Each(ctx context.Context, fn func(types.Row) error) error {
	for _, r := range s.rows {
		if err := fn(r); err != nil {
			return err
		}
	}
	if s.f == nil {
		return nil
	}
	if err := s.w.Flush(); err != nil {
		return fmt.Errorf("batch: spooling rows: %w", err)
	}
	if _, err := s.f.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("batch: reading spooled rows: %w", err)
	}
	r := bufio.NewReaderSize(s.f, 256<<10)
	var buf []byte
	for i := 0; ; i++ {
		if i%1024 == 1023 && ctx.Err() != nil {
			return ctx.Err()
		}
		n, err := binary.ReadUvarint(r)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("batch: reading spooled rows: %w", err)
		}
		buf = slices.Grow(buf[:0], int(n))[:n]
		if _, err := io.ReadFull(r, buf); err != nil {
			return fmt.Errorf("batch: reading spooled rows: %w", err)
		}
		row, err := codec.DecodeValue(buf, s.ts)
		if err != nil {
			return err
		}
		if err := fn(row); err != nil {
			return err
		}
	}
}

// Close lets the rows go and closes the file.
func (s *Spool) Close() {
	if s.f != nil {
		_ = s.f.Close()
	}
	s.rows, s.f, s.w = nil, nil, nil
}
