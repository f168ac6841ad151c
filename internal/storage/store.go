package storage

import (
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
	"github.com/cockroachdb/pebble/v2/sstable"
	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/sluice-db/sluice/internal/task"
)

// Options configure Open.
type Options struct {
	// Dir is the directory of the Pebble database. With InMemory and no Dir
	// a fixed name inside the in-memory filesystem is used.
	Dir string
	// InMemory keeps everything in memory (vfs.NewMem) when FS is nil.
	InMemory bool
	// FS, when set, carries every file operation; tests pass a crashable
	// in-memory filesystem to simulate losing unsynced writes.
	FS vfs.FS
	// Logger receives Pebble's log lines at debug (info) and error level.
	// nil discards them.
	Logger *slog.Logger
	// IngestFrom is the estimated size from which a seal's fresh rows go
	// to an sstable ingested at commit (ingest.go) instead of the epoch's
	// batch: 0 means 8 MiB, a negative value never.
	IngestFrom int
	// SpillFrom is the fresh bytes a store's tables keep in memory before
	// the table adding rows writes its own to a spill file
	// (statetable_spill.go): 0 means 48 MiB.
	SpillFrom int
	// AcceptDataLoss opens a store that lacks writes it acknowledged (its
	// write-ahead log was damaged; see acked.go), logging what is lost,
	// instead of refusing with ErrAcknowledgedWritesLost.
	AcceptDataLoss bool
	// DiskReserve is the free space below which acknowledged writes are
	// refused with 53100 (diskguard.go); 0 means 5 % of the file system,
	// at least 64 MiB and at most 1 GiB (a quarter of a small one).
	DiskReserve uint64
	// CommitDelay is the longest a WAL sync waits for more concurrent
	// writes to share it (groupcommit.go): 0 means DefaultCommitDelay, a
	// negative value never waits.
	CommitDelay time.Duration
	// PresealAfter is how long an epoch runs before its tables write
	// their fresh rows to files as they come (preseal.go); 0 or less
	// never.
	PresealAfter time.Duration
}

// IsCorruption reports whether err comes from a corrupt file of the store.
func IsCorruption(err error) bool { return pebble.IsCorruptionError(err) }

// ErrClosed is returned by operations on a closed store.
var ErrClosed = errors.New("storage: store is closed")

// Store is the process's state store: one Pebble database holding every
// state table, the DML logs and the system keys. It is safe for concurrent
// use. See doc.go for the life of an epoch's writes.
type Store struct {
	db     *pebble.DB
	logger *slog.Logger

	// committed is the last committed epoch. It is advanced only after the
	// epoch's batch is synced and applied, so a reader that sees epoch e in
	// committed also sees e's data in Pebble.
	committed atomic.Uint64
	// markerWrites is odd while a commit may be writing the committed-
	// epoch marker, and stays odd after a commit that failed (the marker
	// Pebble holds is then unknown): see snapshotAt.
	markerWrites atomic.Uint64
	// generation is bumped by AbortUncommitted; tables opened before it can
	// no longer seal, because their overlays hold writes that were thrown
	// away.
	generation atomic.Uint64

	// commitMu serializes Commit so that epochs are written in order.
	commitMu sync.Mutex

	mu struct {
		sync.Mutex
		closed bool
		// staged holds sealed, uncommitted batches by epoch.
		staged map[uint64][]*stagedBatch
		// stagedMeta holds meta writes to commit with an epoch.
		stagedMeta map[uint64]map[string][]byte
		// committedCh is closed (and replaced) whenever committed advances.
		committedCh chan struct{}
		// dropGen counts DropTableState calls per table; a table opened
		// before a drop cannot seal into the dropped table.
		dropGen map[uint32]uint64
		// fenced are actors whose writes DiscardActor dropped: a dropped
		// job's actors may still run briefly after the drop returns.
		fenced map[ActorID]struct{}
	}

	dml   dmlLog
	tails tails
	// stall and turn keep DML appends out of Pebble while it stalls
	// (stall.go).
	stall writeStall
	turn  appendTurn
	// writers counts the DML writers in flight (groupcommit.go).
	writers dmlWriters
	// acked counts acknowledged writes (acked.go).
	acked ackCounter
	// disk refuses writes when the disk is nearly full (diskguard.go).
	disk diskGuard

	// Sealed fresh rows as sstables (ingest.go).
	fs           vfs.FS
	dir          string
	ingestDir    string
	ingestFrom   int
	presealAfter time.Duration // see Options.PresealAfter
	// bg runs merges of presealed files (preseal_merge.go) under bgCtx;
	// merges lists them by owner.
	bg            *task.Group
	bgCtx         context.Context
	merges        mergesRunning
	spillFrom     int         // fresh bytes the tables keep in memory (fresh_memory.go)
	spillAtLeast  int         // the fewest fresh bytes a table spills
	freshMem      freshMemory // what they keep
	spills        spillPool   // merged spills' files, to write over (spill_pool.go)
	ingestSeq     atomic.Uint64
	ingestDirMade atomic.Bool
	writerOpts    sstable.WriterOptions
	scanOpts      sstable.WriterOptions // writerOpts for tables read by scans
	readerOpts    sstable.ReaderOptions
	// visMu keeps snapshots from being taken while a commit ingests its
	// files ahead of its batch: they would see the rows without the
	// epoch's marker.
	visMu sync.RWMutex
	// points pools iterators for LatestGet (point_iter.go).
	points pointIters
	// Big DML records in files of their own (dml_segment.go).
	segmentDir     string
	segmentDirMade atomic.Bool
	segmentSeq     atomic.Uint64
	openNanos      int64 // names this run's segments
	// crashAt, set by tests, can stop a commit at a step (crashPoint).
	crashAt func(step string) error
}

// Open opens (or creates) the store and reads the committed epoch back.
func Open(ctx context.Context, opts Options) (*Store, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	fs := opts.FS
	dir := opts.Dir
	if fs == nil {
		if opts.InMemory {
			fs = vfs.NewMem()
		} else {
			fs = vfs.Default
		}
	}
	if dir == "" {
		if !opts.InMemory && opts.FS == nil {
			return nil, errors.New("storage: Options.Dir is required for an on-disk store")
		}
		dir = "sluice-state"
	}
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	exists, err := classifyDir(fs, dir)
	if err != nil {
		return nil, err
	}
	s := &Store{logger: logger, fs: fs, dir: dir, ingestDir: fs.PathJoin(dir, ingestDirName), turn: make(appendTurn, 1)}
	popts := pebbleOptions(fs, logger)
	popts.WALMinSyncInterval = minSyncInterval(opts.CommitDelay, &s.writers)
	s.stall.listen(popts.EventListener, popts.Logger)
	popts.ErrorIfNotExists = exists // a store whose marker vanishes mid-open is not remade
	db, err := pebble.Open(dir, popts)
	popts.Cache.Unref()
	if err != nil {
		return nil, fmt.Errorf("storage: open pebble at %q: %w", dir, err)
	}
	s.db = db
	s.segmentDir, s.openNanos = fs.PathJoin(dir, segmentDirName), time.Now().UnixNano()
	s.disk = diskGuard{fs: fs, dir: dir, reserve: opts.DiskReserve}
	s.spillFrom, s.spillAtLeast = cmp.Or(opts.SpillFrom, defaultSpillFrom), defaultSpillAtLeast
	s.ingestFrom = opts.IngestFrom
	if s.ingestFrom == 0 {
		s.ingestFrom = defaultIngestFrom
	}
	s.presealAfter = opts.PresealAfter
	// File names count from the open's time: a table of an earlier open
	// in this process, collected late, removes its files by name
	// (presealFiles.removeAll), which must not be this open's.
	s.ingestSeq.Store(uint64(s.openNanos))
	s.bg, s.bgCtx = task.NewGroup(context.Background())
	popts.EnsureDefaults()
	s.writerOpts = popts.MakeWriterOptions(0, min(db.TableFormat(), bulkTableFormat))
	s.scanOpts = scanWriterOptions(s.writerOpts)
	s.readerOpts = popts.MakeReaderOptions()
	s.mu.staged = make(map[uint64][]*stagedBatch)
	s.mu.stagedMeta = make(map[uint64]map[string][]byte)
	s.mu.committedCh = make(chan struct{})
	s.mu.dropGen = make(map[uint32]uint64)
	s.mu.fenced = make(map[ActorID]struct{})
	s.dml.init()
	s.tails.init()
	epoch, err := readEpoch(db)
	if err != nil {
		_ = db.Close()
		return nil, err
	}
	s.committed.Store(epoch)
	if err := s.openAcked(opts.AcceptDataLoss); err != nil {
		_ = db.Close()
		return nil, err
	}
	if err := s.recoverIngest(epoch); err != nil {
		_ = s.acked.close()
		_ = db.Close()
		return nil, err
	}
	return s, nil
}

// pebbleOptions are Pebble's options. The memtable stays at Pebble's
// default (4 MiB): 32 and 64 MiB, tried so that an aggregate's per-epoch
// rewrites of the same keys would cancel before a flush, cost more CPU on
// BenchmarkHashAggUpdate (deeper skiplist, larger WAL files) and four
// times the memory. The block cache is blockCacheBytes instead of Pebble's
// 8 MiB, with which state reads decompressed the same blocks again and
// again once a few tables had been flushed. The caller unrefs the cache
// after Open (the DB holds its own reference).
//
// Values of 64 KiB and more go to blob files (Pebble's value separation,
// which needs the newest format; opening an older store upgrades it).
// Those are a bulk statement's DML records: written once, truncated an
// epoch later, but flushed to an sstable in between, where a 100 MB value
// made one data block. Every seek landing near the log (a new table's row
// counts sort just before it) decompressed that block again: a CREATE
// TABLE after a million-row COPY took 100–400 ms of CPU, now 5 ms.
func pebbleOptions(fs vfs.FS, logger *slog.Logger) *pebble.Options {
	o := &pebble.Options{FS: fs, Logger: pebbleLogger{logger}, Cache: pebble.NewCache(blockCacheBytes),
		FormatMajorVersion: pebble.FormatNewest}
	// A corrupt file is an error for the read that met it, logged here;
	// Pebble's default panics (through Logger.Fatalf), which ended the
	// process with a goroutine dump instead of a message.
	o.EventListener = &pebble.EventListener{DataCorruption: func(info pebble.DataCorruptionInfo) {
		logger.Error("storage: on-disk corruption", "file", info.Path, "err", info.Details.Error())
	}}
	for i := range o.Levels {
		o.Levels[i].FilterPolicy = bloom.FilterPolicy(bloomBitsPerKey)
	}
	o.L0StopWritesThreshold = l0StopWrites
	o.Experimental.ValueSeparationPolicy = func() pebble.ValueSeparationPolicy {
		return pebble.ValueSeparationPolicy{
			Enabled:               true,
			MinimumSize:           separateValuesFrom,
			MaxBlobReferenceDepth: 10,
			RewriteMinimumAge:     time.Minute,
			TargetGarbageRatio:    0.5,
		}
	}
	return o
}

// l0StopWrites is the L0 read amplification (sublevels) at which Pebble
// stops writes until compactions bring it down; Pebble's default is 12.
// The commit of a stalled epoch ingests the files its tables wrote as it
// ran (preseal.go), which overlap one another, and each past the first
// few lands in L0 as a sublevel of its own: 40 files made 22 sublevels,
// and the epoch's batch then waited 1.5-2.2 s for compactions, with every
// other view's freshness. Not much higher: without admission control
// (CockroachDB's, which runs Pebble with 1000 here), this is the only
// thing that holds writes back while compactions fall behind, and every
// L0 sublevel is one more file a point read may search.
const l0StopWrites = 48

// bloomBitsPerKey sizes every sstable's bloom filter (about 1 % false
// positives). An INSERT's key check is a point read of a key that is
// usually absent; without filters it searched the index and a data block
// of every file that might hold it.
const bloomBitsPerKey = 10

// separateValuesFrom is the smallest value kept in a blob file rather than
// an sstable's data block.
const separateValuesFrom = 64 << 10

// bulkTableFormat is the format of the sstables the store writes itself
// (bulk seals, ingested): Pebble's last row-block format. Its writer is a
// third cheaper than the columnar one (BenchmarkWriteSST: 16.8 ms against
// 26.5 ms for 100 000 rows), and a million-row seal is mostly that writer.
// Pebble reads and ingests it at every format version we open; its own
// flushes and compactions keep writing the columnar format.
const bulkTableFormat = sstable.TableFormatPebblev4

// scanWriterOptions are o for the sealed rows of a table keyed by its
// hidden row id, which are read by scans (views' backfill, SELECT) and
// next to never by key (the fresh inserts that fill it are stored without
// a lookup): no bloom filter, and CockroachDB's 32 KiB data blocks instead
// of 4 KiB. Writing 227 000 of a COPY's bid rows took 15 % less CPU
// (medians of eight: 292 against 345 ns a row) into a file 8 % smaller.
func scanWriterOptions(o sstable.WriterOptions) sstable.WriterOptions {
	o.BlockSize = scanBlockSize
	o.FilterPolicy = pebble.NoFilterPolicy
	return o
}

// scanBlockSize is the data block size of a table read by scans.
const scanBlockSize = 32 << 10

// blockCacheBytes is the size of Pebble's block cache (allocated as used).
const blockCacheBytes = 64 << 20

// readEpoch reads the committed-epoch marker; a fresh store is at epoch 0.
func readEpoch(r pebble.Reader) (uint64, error) {
	return readUint64(r, keyCommittedEpoch, "committed-epoch marker")
}

// readUint64 reads the big-endian uint64 under key, 0 when absent; what
// names it in errors.
func readUint64(r pebble.Reader, key []byte, what string) (uint64, error) {
	v, closer, err := r.Get(key)
	if errors.Is(err, pebble.ErrNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("storage: read %s: %w", what, err)
	}
	defer closer.Close()
	if len(v) != 8 {
		return 0, fmt.Errorf("storage: corrupt %s (%d bytes)", what, len(v))
	}
	return binary.BigEndian.Uint64(v), nil
}

// Close releases staged batches and closes Pebble. Waiters in
// WaitCommitted and WaitDML return when their contexts end; callers stop
// their actors before closing the store.
func (s *Store) Close() error {
	s.mu.Lock()
	if s.mu.closed {
		s.mu.Unlock()
		return nil
	}
	s.mu.closed = true
	close(s.mu.committedCh) // wake WaitCommitted callers; they see closed
	for e, bs := range s.mu.staged {
		for _, b := range bs {
			b.release()
		}
		delete(s.mu.staged, e)
	}
	s.mu.Unlock()
	// Wait for an in-flight Commit before closing Pebble under it.
	s.commitMu.Lock()
	defer s.commitMu.Unlock()
	s.bg.Cancel()
	_ = s.bg.Wait() // merges return no error: a failed one leaves its inputs
	ackErr := s.acked.close()
	s.points.close()
	if err := s.db.Close(); err != nil {
		return fmt.Errorf("storage: close pebble: %w", err)
	}
	return ackErr
}

// CommittedEpoch returns the last epoch whose writes are durable.
func (s *Store) CommittedEpoch() uint64 { return s.committed.Load() }

// pebbleLogger forwards Pebble's log lines to slog. Pebble expects Fatalf
// not to return, so it panics after logging.
type pebbleLogger struct{ l *slog.Logger }

func (p pebbleLogger) Infof(format string, args ...any) {
	p.l.Debug(fmt.Sprintf(format, args...), "component", "pebble")
}

func (p pebbleLogger) Errorf(format string, args ...any) {
	p.l.Error(fmt.Sprintf(format, args...), "component", "pebble")
}

func (p pebbleLogger) Fatalf(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	p.l.Error(msg, "component", "pebble", "fatal", true)
	panic("pebble: " + msg)
}
