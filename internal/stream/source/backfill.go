package source

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"

	"github.com/sluice-db/sluice/internal/plan"
	"github.com/sluice-db/sluice/internal/storage"
	"github.com/sluice-db/sluice/internal/stream"
	"github.com/sluice-db/sluice/internal/task"
	"github.com/sluice-db/sluice/internal/types"
	"github.com/sluice-db/sluice/internal/types/codec"
)

// Progress is what the engine polls to show a backfill in SHOW JOBS. It is
// safe to call from any goroutine.
type Progress interface {
	Progress() (scanned int64, done bool)
}

// Backfill is the first executor of a new job over an existing table: it
// merges the table's committed snapshot, scanned in (vnode, pk) order, with
// the table's live changes (its input), with no gap and no duplicate. See
// doc.go for the algorithm and the argument.
type Backfill struct {
	store     *storage.Store
	actor     stream.ActorID
	g         *task.Group
	input     stream.Executor
	upstream  storage.TableDesc
	keys      *upstreamKeys
	columns   []int
	schema    []types.Type
	progress  *storage.StateTable
	throttle  *stream.Throttle
	chunkSize int
	owned     []uint16 // upstream vnodes this actor scans, ascending
	ownedSet  types.Bitmap

	loaded bool
	pump   *pump
	vn     []vnodeProgress // indexed by vnode
	epoch  uint64          // of the last barrier passed; 0 before the first
	// wantSnap: the last barrier was a checkpoint, so its epoch will
	// commit and the scan can read the table as of it.
	wantSnap   bool
	snap       *storage.Snapshot // at exactly epoch, once committed
	cursor     int               // index in owned where the scan goes on
	preferScan bool              // round robin between scan and upstream
	permit     bool              // throttle tokens held for one scan chunk
	done       bool              // every owned vnode finished

	scanned  atomic.Int64
	finished atomic.Bool
	keyBuf   []byte
}

var _ Progress = (*Backfill)(nil)

// NewBackfill builds the backfill of node bf over input, the upstream
// table's change stream. g runs the goroutine that pulls input.
func NewBackfill(env *stream.Env, g *task.Group, bf *plan.Backfill, input stream.Executor) (*Backfill, error) {
	if env == nil || env.Store == nil {
		return nil, fmt.Errorf("source: backfill needs a store")
	}
	if g == nil {
		return nil, fmt.Errorf("source: backfill needs a task group")
	}
	if err := checkProgressTable(bf.ProgressTable); err != nil {
		return nil, err
	}
	up := bf.Upstream
	if !slices.Equal(input.Schema(), up.Types) {
		return nil, fmt.Errorf("source: backfill input schema %v, upstream table %d has %v", input.Schema(), up.ID, up.Types)
	}
	keys, err := newUpstreamKeys(up)
	if err != nil {
		return nil, err
	}
	b := &Backfill{
		store: env.Store, actor: env.ActorID, g: g, input: input,
		upstream: storage.TableDesc(up), keys: keys, columns: slices.Clone(bf.Columns),
		throttle: env.Throttle, chunkSize: env.ChunkSizeOrDefault(),
		vn: make([]vnodeProgress, codec.VNodeCount),
	}
	for _, c := range bf.Columns {
		if c < 0 || c >= len(up.Types) {
			return nil, fmt.Errorf("source: backfill column %d out of range [0,%d)", c, len(up.Types))
		}
		b.schema = append(b.schema, up.Types[c])
	}
	b.owned = ownedVNodes(env.VNodes)
	for _, v := range b.owned {
		b.ownedSet.Set(int(v))
	}
	// Progress rows are keyed by upstream vnode, and actors own disjoint
	// vnodes, so the table is opened over all of its own vnodes.
	b.progress, err = env.OpenTableAllVNodes(bf.ProgressTable)
	if err != nil {
		return nil, fmt.Errorf("source: open progress table: %w", err)
	}
	return b, nil
}

func ownedVNodes(vs []uint16) []uint16 {
	if vs == nil {
		out := make([]uint16, codec.VNodeCount)
		for i := range out {
			out[i] = uint16(i)
		}
		return out
	}
	out := slices.Clone(vs)
	slices.Sort(out)
	return slices.Compact(out)
}

// Schema returns the projected upstream columns.
func (b *Backfill) Schema() []types.Type { return b.schema }

// Progress returns the rows scanned so far (including before a recovery)
// and whether the backfill has finished.
func (b *Backfill) Progress() (int64, bool) { return b.scanned.Load(), b.finished.Load() }

// Next returns one message: an upstream barrier, a forwarded (filtered,
// projected) upstream chunk, or one chunk of the snapshot scan. When both
// the scan and the upstream are ready it alternates, so a barrier waits for
// at most one scan chunk and the scan is never starved by a busy upstream.
//
// The goroutine pulling the input runs under the ctx of the first call
// (as stream.Aligned's pumps do), so the actor passes its own ctx to every
// call; a later call's shorter ctx only bounds that call.
func (b *Backfill) Next(ctx context.Context) (stream.Message, error) {
	if err := b.maybeStart(ctx); err != nil {
		return stream.Message{}, err
	}
	for {
		if err := ctx.Err(); err != nil {
			b.closeSnap()
			return stream.Message{}, err
		}
		if err := b.maybeSnapshot(); err != nil {
			return stream.Message{}, err
		}
		scanReady := b.scanWork() && b.permitReady()
		if scanReady && b.preferScan {
			b.preferScan = false
			if msg, ok, err := b.scanStep(ctx); err != nil || ok {
				return msg, err
			}
			continue
		}
		select {
		case m, ok := <-b.pump.ch:
			b.preferScan = true
			if msg, ok, err := b.handleUpstream(m, ok); err != nil || ok {
				return msg, err
			}
			continue
		default:
		}
		if scanReady {
			b.preferScan = true
			continue
		}
		if msg, ok, err := b.block(ctx); err != nil || ok {
			return msg, err
		}
	}
}

// maybeStart loads the committed progress and starts pulling the input.
// Both need a ctx, hence not in the constructor.
func (b *Backfill) maybeStart(ctx context.Context) error {
	if b.loaded {
		return nil
	}
	if err := loadProgress(ctx, b.progress, b.vn); err != nil {
		return fmt.Errorf("source: load backfill progress: %w", err)
	}
	var n int64
	for _, v := range b.owned {
		n += b.vn[v].scanned
	}
	b.scanned.Store(n)
	b.maybeFinish()
	b.pump = startPump(ctx, b.g, b.input, b.actor)
	b.loaded = true
	return nil
}

// scanWork reports whether the scan has rows to read in this epoch.
func (b *Backfill) scanWork() bool {
	return b.snap != nil && !b.done && b.cursor < len(b.owned)
}

// permitReady reports whether the throttle lets one scan chunk pass now.
func (b *Backfill) permitReady() bool {
	if b.permit || b.throttle == nil {
		return true
	}
	paused, limit := b.throttle.State()
	return !paused && limit < 0
}

// maybeSnapshot opens the snapshot of the last barrier's epoch once that
// epoch has committed. Until this backfill passes the next barrier the
// store cannot commit a later epoch (this actor has not collected it), so
// the snapshot is at exactly b.epoch; anything else breaks the argument in
// doc.go and is reported rather than risked.
func (b *Backfill) maybeSnapshot() error {
	if b.snap != nil || !b.wantSnap || b.done || b.store.CommittedEpoch() < b.epoch {
		return nil
	}
	sn, err := b.store.Snapshot()
	if err != nil {
		return fmt.Errorf("source: backfill snapshot: %w", err)
	}
	if sn.Epoch() != b.epoch {
		_ = sn.Close()
		return fmt.Errorf("source: backfill of table %d: committed epoch %d is not the last barrier's epoch %d; the backfill actor must be collected before later epochs commit",
			b.upstream.ID, sn.Epoch(), b.epoch)
	}
	b.snap = sn
	return nil
}

// Release closes the scan's snapshot; the compute node calls it after the
// actor has returned (stream.Releaser).
func (b *Backfill) Release() { b.closeSnap() }

func (b *Backfill) closeSnap() {
	if b.snap != nil {
		_ = b.snap.Close()
		b.snap = nil
	}
}

// block waits for an upstream message, for the commit of the last
// barrier's epoch (the scan's snapshot), or for throttle tokens.
func (b *Backfill) block(ctx context.Context) (stream.Message, bool, error) {
	var commit, tokens *background
	if b.snap == nil && b.wantSnap && !b.done {
		epoch := b.epoch
		commit = startBackground(ctx, "backfill-wait-commit", func(ctx context.Context) error {
			return b.store.WaitCommitted(ctx, epoch)
		})
	}
	if b.scanWork() && !b.permitReady() {
		rows := b.chunkSize
		tokens = startBackground(ctx, "backfill-throttle", func(ctx context.Context) error {
			return b.throttle.Wait(ctx, rows)
		})
	}
	defer commit.stop()
	defer tokens.stop()
	select {
	case m, ok := <-b.pump.ch:
		b.preferScan = true
		return b.handleUpstream(m, ok)
	case <-commit.doneChan():
		return stream.Message{}, false, commit.result()
	case <-tokens.doneChan():
		err := tokens.result()
		b.permit = err == nil
		return stream.Message{}, false, err
	case <-ctx.Done():
		b.closeSnap()
		return stream.Message{}, false, ctx.Err()
	}
}
