package storage

import (
	"fmt"
	"testing"

	"github.com/sluice-db/sluice/internal/types"
)

// One huge epoch (a bulk INSERT) must not pin its buffers once epochs are
// small again: reuse is for steady state, not for the table's life.
func TestOverlayReleasesHugeEpochBuffers(t *testing.T) {
	o := newOverlay()
	const big = 20 * retainItems
	row := types.Row{int64(1)}
	seal := func(e uint64) {
		run, kvs, err := o.sealEncoded(e, func(dst []byte, r types.Row) ([]byte, error) {
			return append(dst, "value"...), nil
		})
		if err != nil {
			t.Fatal(err)
		}
		for j, it := range runItems(run) { // the buffers let go are not the ones returned
			if string(kvs.key(j)) != it.key || string(kvs.value(j)) != "value" {
				t.Fatalf("epoch %d, item %d: sealed %q=%q, want %q=value", e, j, kvs.key(j), kvs.value(j), it.key)
			}
		}
	}
	for i := range big {
		o.put(fmt.Appendf(nil, "t1234%08d", i), row)
	}
	o.ensureOrder() // a scan: the key order's buffers grow too
	seal(1)
	o.prune(1)
	for e := uint64(2); e < 6; e++ {
		for i := range 10 {
			o.put(fmt.Appendf(nil, "t1234%08d", i), row)
		}
		seal(e)
		o.prune(e)
	}
	for _, c := range []int{cap(o.encWritten.at) / 3, cap(o.encRun.at) / 3, cap(o.encWritten.buf) / 32, cap(o.encRun.buf) / 32} {
		if c > retainItems {
			t.Errorf("a seal's encoding buffers keep room for %d items", c)
		}
	}
	if c := o.items.capacity(); c > retainItems {
		t.Errorf("items keeps capacity %d", c)
	}
	if c := o.spare.capacity(); c > retainItems {
		t.Errorf("spare keeps capacity %d", c)
	}
	for _, b := range [][]int32{o.order.sorted, o.order.spare, o.order.fresh} {
		if cap(b) > retainItems {
			t.Errorf("the key order keeps a buffer of %d positions", cap(b))
		}
	}
	if c := cap(o.sortKeys); c > retainItems {
		t.Errorf("sortKeys keeps capacity %d", c)
	}
	for _, x := range []keyIndex{o.pending, o.spareIx} {
		if c := len(x.slots) / 2; c > retainItems {
			t.Errorf("a key index sized for %d keys is kept", c)
		}
	}
	for _, r := range o.runs {
		if c := r.log.capacity(); c > retainItems {
			t.Errorf("run of epoch %d keeps capacity %d", r.epoch, c)
		}
		if c := len(r.index.slots) / 2; c > retainItems {
			t.Errorf("run of epoch %d keeps an index sized for %d keys", r.epoch, c)
		}
	}
}

// Steady epochs of the same size keep reusing their buffers.
func TestOverlayReusesSteadyEpochBuffers(t *testing.T) {
	o := newOverlay()
	row := types.Row{int64(1)}
	const n = 4 * retainItems
	for e := uint64(1); e < 5; e++ {
		for i := range n {
			o.put(fmt.Appendf(nil, "t1234%08d", i), row)
		}
		o.seal(e)
		o.prune(e)
	}
	if c := o.items.capacity() + o.spare.capacity(); c < n {
		t.Errorf("steady epochs of %d writes keep only %d items of buffer", n, c)
	}
	if c := len(o.pending.slots) + len(o.spareIx.slots); c < 2*n {
		t.Errorf("steady epochs of %d writes keep only %d index slots", n, c)
	}
}
