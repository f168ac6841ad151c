package join

import (
	"context"
	"maps"
	"slices"
	"testing"

	"github.com/sluice-db/sluice/internal/stream"
	"github.com/sluice-db/sluice/internal/stream/streamtest"
	"pgregory.net/rapid"
)

// segments splits a side's script into epochs: segs[e] holds the messages
// before barrier e (the epoch's data), barriers removed.
func segments(msgs []stream.Message) map[uint64][]stream.Message {
	segs := map[uint64][]stream.Message{}
	var cur []stream.Message
	for _, m := range msgs {
		if m.Barrier == nil {
			cur = append(cur, m)
			continue
		}
		segs[m.Barrier.Epoch] = cur
		cur = nil
	}
	return segs
}

// replay builds a source script of epochs from..to of segs, renumbered
// from base (a rebuilt job resumes with fresh epochs after the committed
// one), starting with the barrier base+from-1 unless that is epoch 0.
func replay(segs map[uint64][]stream.Message, from, to, base uint64, stop bool) []stream.Message {
	var out []stream.Message
	if base+from > 1 {
		out = append(out, stream.NewBarrier(base+from-1))
	}
	for e := from; e <= to; e++ {
		out = append(out, segs[e]...)
		if stop && e == to {
			out = append(out, stream.NewStopBarrier(base+e, testActor))
		} else {
			out = append(out, stream.NewBarrier(base+e))
		}
	}
	return out
}

// TestRecovery runs a join, commits some epoch c, runs on past it, crashes
// (uncommitted state discarded), rebuilds the executor on the same store
// and replays the input after c. The first run's output through c plus the
// second run's output must equal the join of the whole input at every
// barrier, which holds only if the committed state (rows and degrees) is
// all the executor needs.
func TestRecovery(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		c := propCase(rapid.SampledFrom(joinTypes).Draw(rt, "type"), false, rapid.Bool().Draw(rt, "residual"))
		cfg := config{chunkSize: 4, cacheEntries: rapid.SampledFrom([]int{1, 1000}).Draw(rt, "cache"), largeKeyRows: 2,
			adaptMinStores: rapid.SampledFrom([]int{1, 1 << 30}).Draw(rt, "adaptMinStores")}
		c.appendOnly = [2]bool{rapid.Bool().Draw(rt, "leftAppendOnly"), rapid.Bool().Draw(rt, "rightAppendOnly")}
		sc := genScript(rt, c.appendOnly)
		segs := [2]map[uint64][]stream.Message{segments(sc.msgs[0]), segments(sc.msgs[1])}
		last := sc.stop
		commit := rapid.Uint64Range(1, last).Draw(rt, "commit")
		crash := rapid.Uint64Range(commit, last).Draw(rt, "crash")
		store := streamtest.OpenStore(rt)

		a := newHarness(rt, store, c, cfg,
			stream.NewMockSource(idkv, replay(segs[0], 1, crash, 0, false)...),
			stream.NewMockSource(idkv, replay(segs[1], 1, crash, 0, false)...))
		ms := map[string]int{}
		var atCommit map[string]int
		runUntil(rt, a, c, sc, ms, 0, crash, func(e uint64) {
			if e == commit {
				atCommit = maps.Clone(ms)
				if err := store.Commit(context.Background(), commit, nil); err != nil {
					rt.Fatal(err)
				}
			}
		})
		a.stop()
		store.AbortUncommitted()
		if commit == last {
			return
		}

		const base = 1000
		b := newHarness(rt, store, c, cfg,
			stream.NewMockSource(idkv, replay(segs[0], commit+1, last, base, true)...),
			stream.NewMockSource(idkv, replay(segs[1], commit+1, last, base, true)...))
		runUntil(rt, b, c, sc, atCommit, base, last, nil)
	})
}

// runUntil pulls h's output into ms until barrier base+until, checking ms
// against the oracle at every barrier and calling onBarrier(epoch).
func runUntil(rt *rapid.T, h *harness, c joinCase, sc *script, ms map[string]int, base, until uint64, onBarrier func(uint64)) {
	outTypes := slices.Concat(c.lt, c.rt)
	for {
		msg := h.next()
		if msg.Chunk != nil {
			applyChunk(rt, ms, msg.Chunk, outTypes)
			continue
		}
		if msg.Barrier == nil {
			continue
		}
		e := msg.Barrier.Epoch - base
		if want := oracle(c, sc.states[e]); !maps.Equal(ms, want) {
			rt.Fatalf("epoch %d: output\n%v\nwant\n%v", e, ms, want)
		}
		if onBarrier != nil {
			onBarrier(e)
		}
		if e == until {
			return
		}
	}
}
