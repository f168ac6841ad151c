package storage

import (
	"sync"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// A spill file lives for one epoch: written, read back by the seal's
// merge, removed. A new file's pages cost the kernel far more than
// writing over pages it has cached: here 0.8–0.9 system CPU s per 300 MB
// into a new file against 0.03–0.05 s over a cached one, so a
// million-row load spent about a quarter of a CPU second of its spill
// on fresh page-cache pages alone. So, as PostgreSQL recycles its WAL
// segments, a merged spill's file is kept, up to spillPoolBytes of them,
// and the next spill writes over it; its reader stops at the spill's own
// length (spillFile.size), not at the end of the file.
//
// Only the table owning a spill reads it, and only until its seal closes
// it, so a file is never read once it is back in the pool. The files
// live in the ingest directory, which Open empties.

// spillPoolBytes bounds the disk the pooled files hold.
const spillPoolBytes = 256 << 20

type spillPool struct {
	mu    sync.Mutex
	files []pooledSpill
	bytes int64
}

type pooledSpill struct {
	path string
	size int64 // the file's length: its largest spill so far
}

// take returns a pooled file to write over, if one is free.
func (p *spillPool) take() (pooledSpill, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := len(p.files)
	if n == 0 {
		return pooledSpill{}, false
	}
	f := p.files[n-1]
	p.files = p.files[:n-1]
	p.bytes -= f.size
	return f, true
}

// put keeps f for a later spill, or reports false when the pool is full.
func (p *spillPool) put(f pooledSpill) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.bytes+f.size > spillPoolBytes {
		return false
	}
	p.files = append(p.files, f)
	p.bytes += f.size
	return true
}

// createSpill opens a file for a spill from the start: a pooled one
// (written over, not truncated) or, with none free, path. It returns the
// file's path and its length before the spill.
func (s *Store) createSpill(path string) (vfs.File, pooledSpill, error) {
	if old, ok := s.spills.take(); ok {
		f, err := s.fs.OpenReadWrite(old.path, vfs.WriteCategoryUnspecified)
		if err == nil {
			return f, old, nil
		}
		_ = s.fs.Remove(old.path)
	}
	// Opened for writing at offsets (spill_scatter.go); a new file.
	f, err := s.fs.OpenReadWrite(path, vfs.WriteCategoryUnspecified)
	return f, pooledSpill{path: path}, err
}

// retireSpill keeps a merged spill's file for the next spill, or removes
// it when the pool is full.
func (s *Store) retireSpill(f pooledSpill) {
	if !s.spills.put(f) {
		_ = s.fs.Remove(f.path)
	}
}
