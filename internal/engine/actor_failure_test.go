package engine

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluice-db/sluice/internal/stream"
)

// errInjected is the failure the failpoint makes an executor return.
var errInjected = errors.New("injected executor failure")

// failpoint makes one actor of an armed job fail in the middle of an
// epoch: its executor chain returns an error right after it has passed a
// chunk on, before the epoch's barrier, so the epoch has uncommitted state
// writes when the actor dies.
type failpoint struct {
	job   atomic.Uint32 // 0 = disarmed
	fired atomic.Int32
	mu    sync.Mutex
	// hit records where it fired, for the test's log.
	hit string
}

func (f *failpoint) wrap(job uint32, actor stream.ActorID, root stream.Executor) stream.Executor {
	return &failingExec{Executor: root, fp: f, job: job, actor: actor}
}

// failingExec passes its chain through until its failpoint is armed for
// its job; then, after the next chunk, it fails once.
type failingExec struct {
	stream.Executor
	fp         *failpoint
	job        uint32
	actor      stream.ActorID
	epoch      uint64
	afterChunk bool
}

func (x *failingExec) Next(ctx context.Context) (stream.Message, error) {
	if x.afterChunk && x.fp.job.CompareAndSwap(x.job, 0) {
		x.fp.fired.Add(1)
		x.fp.mu.Lock()
		x.fp.hit = fmt.Sprintf("actor %d of job %d in epoch after %d", x.actor, x.job, x.epoch)
		x.fp.mu.Unlock()
		return stream.Message{}, errInjected
	}
	msg, err := x.Executor.Next(ctx)
	switch {
	case err != nil:
	case msg.Barrier != nil:
		x.epoch, x.afterChunk = msg.Barrier.Epoch, false
	case msg.Chunk != nil && msg.Chunk.Cardinality() > 0:
		x.afterChunk = true
	}
	return msg, err
}

// TestActorFailureMidEpochRecovers: an executor of the join view fails in
// the middle of an epoch while writes keep coming. The failure triggers a
// recovery from the last committed epoch; afterwards no acknowledged write
// is lost or doubled, and every view — the failed join and the aggregate
// beside it — equals a recomputation from the tables. It runs the failure
// three times, so recoveries on top of recovered state are covered too.
func TestActorFailureMidEpochRecovers(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	fp := &failpoint{}
	e, err := Open(ctx, Options{InMemory: true, BarrierInterval: 10 * time.Millisecond, Parallelism: 2,
		ChunkSize: 4, Logger: testLogger(), WrapActorRoot: fp.wrap})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := e.Close(); err != nil {
			t.Error(err)
		}
	}()
	if err := setupWorkload(ctx, e); err != nil {
		t.Fatal(err)
	}
	targets := []string{"j", "s", "j"}
	acked := map[int64]bool{}
	k := int64(1)
	write := func(n int) {
		for range n {
			if err := writeOne(ctx, e, k); err != nil {
				t.Fatalf("write %d: %v", k, err)
			}
			acked[k] = true
			k++
		}
	}
	write(20)
	for round, name := range targets {
		st, err := e.coord.Status(ctx)
		if err != nil {
			t.Fatal(err)
		}
		rel, ok := e.Catalog().ByName(name)
		if !ok {
			t.Fatalf("no view %s", name)
		}
		fp.job.Store(rel.ID)
		// Keep writing until the armed actor has seen a chunk and failed;
		// the writes around the failure are the ones at risk.
		for fp.fired.Load() == int32(round) {
			write(1)
		}
		write(10)
		if err := e.waitRecovered(ctx, st.Recoveries+1); err != nil {
			t.Fatalf("round %d: no recovery after the failure: %v", round, err)
		}
		write(10)
		if err := e.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		if err := checkWorkload(ctx, e, acked); err != nil {
			fp.mu.Lock()
			t.Fatalf("round %d, after failing %s: %v", round, fp.hit, err)
		}
		fp.mu.Lock()
		t.Logf("round %d: failed %s; %d writes acknowledged, views exact", round, fp.hit, len(acked))
		fp.mu.Unlock()
	}
}
