package storage

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"pgregory.net/rapid"

	"github.com/sluice-db/sluice/internal/types"
	"github.com/sluice-db/sluice/internal/types/codec"
)

// TestReadDMLMatchesStored: whatever mix of appends (some too big for the
// in-memory records, and in the second run some kept in segments),
// reads from any position and truncations, ReadDML returns exactly what
// reading the log from Pebble returns.
func TestReadDMLMatchesStored(t *testing.T) {
	defer func(n, m int) { recentDMLBytes, segmentFrom = n, m }(recentDMLBytes, segmentFrom)
	recentDMLBytes = 1 << 10
	for _, seg := range []int{1 << 20, 300} {
		segmentFrom = seg
		t.Run(fmt.Sprint("segmentFrom=", seg), testReadDMLMatchesStored)
	}
}

func testReadDMLMatchesStored(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		ctx := context.Background()
		s := openMem(t, nil)
		const table = 9
		var last, truncated uint64
		for range rapid.IntRange(1, 60).Draw(rt, "steps") {
			switch rapid.IntRange(0, 5).Draw(rt, "op") {
			case 0, 1, 2:
				size := rapid.SampledFrom([]int{1, 40, 300, 700}).Draw(rt, "size")
				payload := []byte(fmt.Sprintf("%0*d", size, last+1))
				seq, err := s.AppendDML(ctx, table, payload)
				if err != nil {
					rt.Fatal(err)
				}
				last = seq
			case 3:
				through := rapid.Uint64Range(0, last).Draw(rt, "through")
				if err := s.TruncateDML(ctx, table, through); err != nil {
					rt.Fatal(err)
				}
				truncated = max(truncated, through)
			default:
				from := rapid.Uint64Range(truncated+1, last+2).Draw(rt, "from")
				n := rapid.IntRange(1, 8).Draw(rt, "max")
				got, err := s.ReadDML(table, from, n)
				if err != nil {
					rt.Fatal(err)
				}
				want, err := s.readDMLStored(table, from, last, n)
				if err != nil {
					rt.Fatal(err)
				}
				if !slices.EqualFunc(got, want, func(a, b DMLRecord) bool {
					return a.Seq == b.Seq && string(a.Payload) == string(b.Payload)
				}) {
					rt.Fatalf("ReadDML(%d, %d): %d records from %v, stored %d from %v", from, n, len(got), seqOf(got), len(want), seqOf(want))
				}
			}
		}
	})
}

func seqOf(recs []DMLRecord) []uint64 {
	var out []uint64
	for _, r := range recs {
		out = append(out, r.Seq)
	}
	return out
}

// TestSharedRecordServedFromMemory: a record too big for the cache whose
// payload the table's tail keeps anyway (a bulk fresh run) is read back
// from memory, the very payload written; one the tail does not keep is
// read from the store.
func TestSharedRecordServedFromMemory(t *testing.T) {
	defer func(n int) { recentDMLBytes = n }(recentDMLBytes)
	recentDMLBytes = 1 << 10
	ctx := context.Background()
	s := openMem(t, nil)
	desc := rowIDDesc(4)
	b := types.NewBuilder(desc.Types, 201)
	for i := range 200 {
		b.Append(types.Insert, types.Row{fmt.Sprint("row", i), int64(i + 1)})
	}
	c := b.Take()
	enc := &EncodedRows{}
	for i := range c.Capacity() {
		start := len(enc.Buf)
		var err error
		if enc.Buf, err = codec.EncodeValue(enc.Buf, c.Row(i), desc.Types); err != nil {
			t.Fatal(err)
		}
		enc.Spans = append(enc.Spans, uint32(start), uint32(len(enc.Buf)))
	}
	for _, kept := range []bool{true, false} {
		w := DMLWrite{Payload: enc.Buf, Tail: &desc, Rows: c, Fresh: true}
		if kept {
			w.Encoded = enc
		}
		seq, err := s.WriteDML(ctx, desc.ID, w)
		if err != nil {
			t.Fatal(err)
		}
		recs, err := s.ReadDML(desc.ID, seq, 1)
		if err != nil || len(recs) != 1 {
			t.Fatalf("ReadDML: %v %v", recs, err)
		}
		if same := &recs[0].Payload[0] == &enc.Buf[0]; same != kept {
			t.Fatalf("tail keeps the payload: %v; read from memory: %v", kept, same)
		}
	}
}
