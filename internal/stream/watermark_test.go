package stream

import (
	"context"
	"testing"
)

// TestMergeWatermarkIsTheLeast: a merge passes on the least of its
// upstream actors' watermarks, once each has sent one, and only advances.
func TestMergeWatermarkIsTheLeast(t *testing.T) {
	ctx := context.Background()
	o1, i1 := NewChannel(1, 9, 64)
	o2, i2 := NewChannel(2, 9, 64)
	m := NewMerge(ii, []*Input{i1, i2})
	wm := func(v int64) Message { return Message{Watermark: &Watermark{Col: 1, Value: v}} }
	for _, s := range []struct {
		o   *Output
		msg Message
	}{{o1, wm(10)}, {o2, wm(5)}, {o1, wm(12)}, {o2, wm(4)}, {o2, wm(11)}, {o1, NewBarrier(1)}, {o2, NewBarrier(1)}} {
		if err := s.o.Send(ctx, s.msg); err != nil {
			t.Fatal(err)
		}
	}
	var got []int64
	for {
		msg, err := m.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if msg.Barrier != nil {
			break
		}
		got = append(got, msg.Watermark.Value.(int64))
	}
	// Messages of the two inputs interleave in any order; whatever it is,
	// the output must be increasing, each value some input's and none
	// above the least input's latest.
	if len(got) == 0 || got[len(got)-1] != 11 {
		t.Fatalf("watermarks %v, want them to end at 11", got)
	}
	for i := 1; i < len(got); i++ {
		if got[i] <= got[i-1] {
			t.Fatalf("watermarks %v do not increase", got)
		}
	}
}
