package batch

import (
	"context"
	"fmt"
	"os"

	"github.com/sluice-db/sluice/internal/types"
)

// Spool keeps rows in the order they come, to be read back once: in
// memory up to a bound, then in a spill file (partition.go's), as
// Postgres's tuplestore keeps a statement's RETURNING rows until the
// statement is done. The file is unlinked as soon as it is created, so it
// goes however the process ends.
type Spool struct {
	ts    []types.Type
	dir   string
	limit int64
	rows  []types.Row // in memory, before the file
	bytes int64
	file  *spillFile
	n     int
}

// NewSpool returns a spool of rows of types ts that keeps up to limit
// bytes of them in memory (rowBytes) and the rest in a file in dir.
func NewSpool(ts []types.Type, dir string, limit int64) *Spool {
	return &Spool{ts: ts, dir: dir, limit: limit}
}

// Len returns the rows added.
func (s *Spool) Len() int { return s.n }

// Add keeps r, which the spool owns from now on.
func (s *Spool) Add(r types.Row) error {
	s.n++
	if s.file == nil {
		if b := rowBytes(r); s.bytes+b <= s.limit || len(s.rows) == 0 {
			s.rows, s.bytes = append(s.rows, r), s.bytes+b
			return nil
		}
		if err := s.open(); err != nil {
			return err
		}
	}
	return s.file.write(r, s.ts)
}

// open creates the file and moves the rows held in memory to it.
func (s *Spool) open() error {
	f, err := newSpillFile(s.dir)
	if err != nil {
		return err
	}
	s.file = f
	if err := os.Remove(f.f.Name()); err != nil {
		return fmt.Errorf("batch: spooling rows: %w", err)
	}
	for _, r := range s.rows {
		if err := f.write(r, s.ts); err != nil {
			return err
		}
	}
	s.rows, s.bytes = nil, 0
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
	if s.file == nil {
		return nil
	}
	src, err := s.file.rewind(s.ts)
	if err != nil {
		return err
	}
	for i := 0; ; i++ {
		if i%1024 == 1023 && ctx.Err() != nil {
			return ctx.Err()
		}
		row, err := src.next()
		if err != nil || row == nil {
			return err
		}
		if err := fn(row); err != nil {
			return err
		}
	}
}

// Close lets the rows go and closes the file (removing it, if its unlink
// failed).
func (s *Spool) Close() {
	if s.file != nil {
		s.file.remove()
	}
	s.rows, s.file = nil, nil
}
