package source

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/sluice-db/sluice/internal/stream/streamtest"
	"github.com/sluice-db/sluice/internal/types"
)

func benchChunk(b *testing.B, rows int) *types.Chunk {
	var sb strings.Builder
	for i := range rows {
		fmt.Fprintf(&sb, "+ %d 'name-%d' %d.5 true %d\n", i, i, i, i%1000)
	}
	return types.MustParseChunk(dmlTypes, sb.String())
}

// BenchmarkDMLCodec: go test -bench DMLCodec ./internal/stream/source/
func BenchmarkDMLCodec(b *testing.B) {
	c := benchChunk(b, 1024)
	payload, err := EncodeDML(c)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("encode", func(b *testing.B) {
		b.SetBytes(int64(len(payload)))
		for b.Loop() {
			if _, err := EncodeDML(c); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("decode", func(b *testing.B) {
		b.SetBytes(int64(len(payload)))
		for b.Loop() {
			if _, err := DecodeDML(payload, dmlTypes); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkTableSourceTail measures rows per second from an already
// written log through the source (decode, cut, emit).
func BenchmarkTableSourceTail(b *testing.B) {
	store := streamtest.OpenStore(b)
	h := newSrcHarness(b, store, 1024)
	h.barrier(1)
	next(b, h.src)
	var sb strings.Builder
	for i := range 256 {
		fmt.Fprintf(&sb, "+ %d 'row'\n", i)
	}
	payload, err := EncodeDML(types.MustParseChunk(srcSchema, sb.String()))
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	rows := 0
	for b.Loop() {
		if _, err := store.AppendDML(ctx, srcTableID, payload); err != nil {
			b.Fatal(err)
		}
		for got := 0; got < 256; {
			got += next(b, h.src).Chunk.Cardinality()
		}
		rows += 256
	}
	b.ReportMetric(float64(rows)/b.Elapsed().Seconds(), "rows/s")
}
