package stream

import (
	"context"
	"slices"
	"testing"

	"github.com/sluice-db/sluice/internal/types"
	"github.com/sluice-db/sluice/internal/types/codec"
	"pgregory.net/rapid"
)

// freshOf encodes rows (id, id*10) for ids as FreshRows keyed by column 0,
// with a byte between rows as in a DML payload.
func freshOf(t interface{ Fatal(...any) }, ids []int64) *FreshRows {
	f := &FreshRows{IDs: ids}
	for _, id := range ids {
		f.Rows.Buf = append(f.Rows.Buf, 0xee)
		start := len(f.Rows.Buf)
		var err error
		if f.Rows.Buf, err = codec.EncodeValue(f.Rows.Buf, types.Row{id, id * 10}, ii); err != nil {
			t.Fatal(err)
		}
		f.Rows.Spans = append(f.Rows.Spans, uint32(start), uint32(len(f.Rows.Buf)))
	}
	return f
}

// TestHashDispatcherRoutesFreshRowsLikeChunks: fresh rows reach the output
// that the same rows in a chunk reach, each exactly once, in order, and
// still decode to themselves.
func TestHashDispatcherRoutesFreshRowsLikeChunks(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		ctx := context.Background()
		n := rapid.IntRange(1, 4).Draw(rt, "outputs")
		ids := rapid.SliceOfNDistinct(rapid.Int64Range(-500, 500), 1, 60, rapid.ID[int64]).Draw(rt, "ids")
		slices.Sort(ids)
		route := func(msg Message) [][]types.Row {
			outs, ins := make([]*Output, n), make([]*Input, n)
			for k := range n {
				outs[k], ins[k] = NewChannel(1, ActorID(k+2), 4)
			}
			d, err := NewHashDispatcher(outs, []int{0}, EvenVNodeOwners(n))
			if err != nil {
				rt.Fatal(err)
			}
			if err := d.Dispatch(ctx, msg); err != nil {
				rt.Fatal(err)
			}
			got := make([][]types.Row, n)
			for k, in := range ins {
				for len(in.ch) > 0 {
					m := <-in.ch
					c := m.Chunk
					if m.Fresh != nil {
						if c, err = m.Fresh.Decode(ii); err != nil {
							rt.Fatal(err)
						}
						for i, id := range m.Fresh.IDs {
							if c.Row(i)[0] != id {
								rt.Fatalf("fresh row %v carries id %d", c.Row(i), id)
							}
						}
					}
					for _, i := range c.VisibleIndices() {
						got[k] = append(got[k], c.Row(i))
					}
				}
			}
			return got
		}
		b := types.NewBuilder(ii, len(ids)+1)
		for _, id := range ids {
			b.Append(types.Insert, types.Row{id, id * 10})
		}
		want := route(ChunkMsg(b.Take()))
		got := route(Message{Fresh: freshOf(rt, ids)})
		for k := range n {
			if len(got[k]) != len(want[k]) {
				rt.Fatalf("output %d got %v, want %v", k, got[k], want[k])
			}
			for i := range got[k] {
				if types.CompareRows(got[k][i], want[k][i]) != 0 {
					rt.Fatalf("output %d got %v, want %v", k, got[k], want[k])
				}
			}
		}
	})
}

// TestHashDispatcherRefusesFreshRowsOfAnotherKey: rows routed by a column
// other than their id would reach actors that do not own them.
func TestHashDispatcherRefusesFreshRowsOfAnotherKey(t *testing.T) {
	o1, _ := NewChannel(1, 2, 4)
	o2, _ := NewChannel(1, 3, 4)
	d, err := NewHashDispatcher([]*Output{o1, o2}, []int{1}, EvenVNodeOwners(2))
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Dispatch(context.Background(), Message{Fresh: freshOf(t, []int64{1, 2})}); err == nil {
		t.Fatal("fresh rows dispatched by another column")
	}
}

type nopSink struct{}

func (nopSink) Collect(context.Context, ActorID, uint64) error { return nil }

// TestDownstreamFollowsDispatchers: an actor's Downstream says none while
// it has no dispatcher, and follows an Add barrier and a detach.
func TestDownstreamFollowsDispatchers(t *testing.T) {
	ctx := context.Background()
	a := NewActor(1, 1, nil, nil, nopSink{}, NewThrottle())
	var d Downstream
	a.TrackDownstream(&d)
	if !d.None() {
		t.Fatal("an actor without dispatchers has a downstream")
	}
	out, in := NewChannel(1, 2, 4)
	add := &AddMutation{Dispatchers: map[ActorID][]Dispatcher{1: {&SimpleDispatcher{Out: out}}}}
	if _, err := a.handleBarrier(ctx, &Barrier{Epoch: 2, Mutation: add}); err != nil {
		t.Fatal(err)
	}
	if d.None() {
		t.Fatal("no downstream after an Add")
	}
	if m := <-in.ch; m.Barrier == nil {
		t.Fatalf("the new dispatcher got %v, want the barrier", m)
	}
	a.HandleControl(ControlDetach{Downstream: map[ActorID]bool{2: true}})
	if !d.None() {
		t.Fatal("a downstream after its detach")
	}
	var unset *Downstream
	if unset.None() {
		t.Fatal("an untracked downstream says none")
	}
}

// TestMergeDecodesFreshRowsNotTaken: a Merge hands fresh rows on as they
// are only while the chain above takes them; otherwise, and by default,
// it decodes them, so no other executor ever sees them.
func TestMergeDecodesFreshRowsNotTaken(t *testing.T) {
	ctx := context.Background()
	out, in := NewChannel(1, 2, 8)
	m := NewMerge(ii, []*Input{in})
	send := func() {
		if err := out.Send(ctx, Message{Fresh: freshOf(t, []int64{4, 9})}); err != nil {
			t.Fatal(err)
		}
	}
	next := func() Message {
		msg, err := m.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return msg
	}
	send()
	if msg := next(); msg.Fresh != nil || msg.Chunk == nil || msg.Chunk.String() != "+ 4 40\n+ 9 90\n" {
		t.Fatalf("by default: %v", msg)
	}
	take := false
	m.PassFresh(func() bool { return take })
	send()
	if msg := next(); msg.Chunk == nil {
		t.Fatalf("not taken: %v", msg)
	}
	take = true
	send()
	if msg := next(); msg.Fresh == nil || !slices.Equal(msg.Fresh.IDs, []int64{4, 9}) {
		t.Fatalf("taken: %v", msg)
	}
}

// TestDownstreamCarriesFreshOnlyNoShuffle: fresh rows go on as they are
// only when every dispatcher is no-shuffle.
func TestDownstreamCarriesFreshOnlyNoShuffle(t *testing.T) {
	o1, _ := NewChannel(1, 2, 4)
	o2, _ := NewChannel(1, 3, 4)
	h, err := NewHashDispatcher([]*Output{o2}, []int{0}, EvenVNodeOwners(1))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		ds   []Dispatcher
		want bool
	}{
		{nil, false},
		{[]Dispatcher{&SimpleDispatcher{Out: o1}}, true},
		{[]Dispatcher{&SimpleDispatcher{Out: o1}, h}, false},
		{[]Dispatcher{&BroadcastDispatcher{Outs: []*Output{o1}}}, false},
	} {
		var d Downstream
		NewActor(1, 1, nil, tc.ds, nopSink{}, NewThrottle()).TrackDownstream(&d)
		if d.CarriesFresh() != tc.want {
			t.Errorf("%d dispatchers: carries fresh %v, want %v", len(tc.ds), d.CarriesFresh(), tc.want)
		}
	}
}
