package storage

import (
	"errors"
	"fmt"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/sluice-db/sluice/internal/sqlerr"
)

// A full disk must not reach Pebble: a WAL write that fails for space is
// fatal to it (it panicked in WAL rotation, and a store restarted while
// full blocked every INSERT for ever). So acknowledged writes (DML
// batches, catalog changes) check the free space of the store's file
// system first and are refused with 53100 while it is below a reserve,
// which is left for what must go on: Pebble's flushes and compactions and
// the checkpoints that let DML logs be truncated. Reads never check. A
// refused write changes nothing, and writes resume by themselves once
// space is freed: the check is made again (at most every
// diskCheckInterval) by the next write.
type diskGuard struct {
	fs      vfs.FS
	dir     string
	reserve uint64 // 0: from the file system's size

	checked atomic.Int64  // unix nanos of the last check
	avail   atomic.Uint64 // bytes available at the last check
	need    atomic.Uint64 // the reserve the last check used
	full    atomic.Bool
	known   atomic.Bool // the file system told its usage
}

// dmlAmplification is the space an acknowledged DML record of n bytes
// will take, as a multiple of n: the record itself (WAL, then an
// sstable or a segment), and the table state its epoch commits.
const dmlAmplification = 3

// diskCheckInterval bounds how often writes ask the file system.
const diskCheckInterval = 50 * time.Millisecond

// defaultReserve is the space kept free on a file system of total bytes:
// 5 % of it, at least 64 MiB and at most 1 GiB, but never more than a
// quarter of a small file system.
func defaultReserve(total uint64) uint64 {
	r := min(max(total/20, 64<<20), 1<<30)
	return min(r, total/4)
}

// check returns 53100 when the file system is too full for a write of
// about size bytes.
func (g *diskGuard) check(size int) error {
	now := time.Now().UnixNano()
	if last := g.checked.Load(); now-last >= int64(diskCheckInterval) && g.checked.CompareAndSwap(last, now) {
		g.measure()
	}
	if !g.full.Load() && (size == 0 || !g.known.Load() || g.avail.Load() >= g.need.Load()+uint64(size)) {
		return nil
	}
	return g.fullError()
}

func (g *diskGuard) fullError() error {
	return sqlerr.Errorf(sqlerr.DiskFull,
		"could not write: disk full (%d MB available in %s; Sluice keeps %d MB free for flushes and checkpoints)",
		g.avail.Load()>>20, g.dir, g.need.Load()>>20)
}

// checkCommit refuses an epoch commit of size bytes that would eat into
// the last half of the reserve: Pebble cannot survive running out of
// space in its WAL, and a refused commit only costs a recovery, which
// replays the DML log once space is freed.
func (g *diskGuard) checkCommit(size int) error {
	if !g.known.Load() {
		return nil
	}
	if g.avail.Load() >= g.need.Load()/2+2*uint64(size) {
		return nil
	}
	g.measure()
	if g.avail.Load() >= g.need.Load()/2+2*uint64(size) {
		return nil
	}
	return g.fullError()
}

// noSpace turns a write's "no space left on device" into 53100.
func (g *diskGuard) noSpace(err error) error {
	if errors.Is(err, syscall.ENOSPC) {
		g.measure()
		return fmt.Errorf("%w (%v)", g.fullError(), err)
	}
	return err
}

// measure asks the file system for its free space. A file system that
// cannot tell (in memory) is never full.
func (g *diskGuard) measure() {
	u, err := g.fs.GetDiskUsage(g.dir)
	if err != nil {
		g.full.Store(false)
		g.known.Store(false)
		return
	}
	need := g.reserve
	if need == 0 {
		need = defaultReserve(u.TotalBytes)
	}
	g.avail.Store(u.AvailBytes)
	g.need.Store(need)
	g.full.Store(u.AvailBytes < need)
	g.known.Store(true)
}
