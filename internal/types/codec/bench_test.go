package codec

import (
	"fmt"
	"testing"

	"github.com/cockroachdb/apd/v3"
	"github.com/sluice-db/sluice/internal/types"
)

var benchTypes = []types.Type{types.TInt64, types.TVarchar, types.TDecimal}

// benchChunk is 1024 rows of (bigint, varchar, numeric) with a few NULLs.
func benchChunk(b *testing.B) *types.Chunk {
	bld := types.NewBuilder(benchTypes, types.DefaultChunkSize)
	for i := range types.DefaultChunkSize {
		var name types.Datum = fmt.Sprintf("customer-%06d", i*7919%100000)
		if i%50 == 0 {
			name = nil
		}
		row := types.Row{int64(i)*1_000_003 - 500_000_000, name, apd.New(int64(i*37%100000), -2)}
		if c := bld.Append(types.Insert, row); c != nil {
			return c
		}
	}
	b.Fatal("builder did not fill a chunk")
	return nil
}

func benchRows(b *testing.B) []types.Row {
	c := benchChunk(b)
	rows := make([]types.Row, c.Capacity())
	for i := range rows {
		rows[i] = c.Row(i)
	}
	return rows
}

// Each op is one 1024-row chunk; per-row cost is ns/op / 1024.
func BenchmarkEncodeKey(b *testing.B) {
	rows := benchRows(b)
	orders := []Order{{}, {Desc: true, NullsFirst: true}, {}}
	var buf []byte
	b.ReportAllocs()
	for b.Loop() {
		for _, r := range rows {
			var err error
			if buf, err = EncodeKey(buf[:0], r, benchTypes, orders); err != nil {
				b.Fatal(err)
			}
		}
	}
}

func BenchmarkEncodeValue(b *testing.B) {
	rows := benchRows(b)
	var buf []byte
	b.ReportAllocs()
	for b.Loop() {
		for _, r := range rows {
			var err error
			if buf, err = EncodeValue(buf[:0], r, benchTypes); err != nil {
				b.Fatal(err)
			}
		}
	}
}

func BenchmarkDecodeValue(b *testing.B) {
	rows := benchRows(b)
	encs := make([][]byte, len(rows))
	for i, r := range rows {
		var err error
		if encs[i], err = EncodeValue(nil, r, benchTypes); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		for _, e := range encs {
			if _, err := DecodeValue(e, benchTypes); err != nil {
				b.Fatal(err)
			}
		}
	}
}

func BenchmarkHashColumns(b *testing.B) {
	c := benchChunk(b)
	cols := []int{0, 1, 2}
	out := make([]uint64, 0, c.Capacity())
	b.ReportAllocs()
	for b.Loop() {
		out = HashColumns(c, cols, out)
	}
}

func BenchmarkHashRow(b *testing.B) {
	rows := benchRows(b)
	b.ReportAllocs()
	for b.Loop() {
		for _, r := range rows {
			HashRow(r, benchTypes)
		}
	}
}

// BenchmarkDecodeValueInto decodes the same chunk's rows straight into
// column vectors with a ColumnDecoder (the columns are reset, keeping
// capacity, each op).
func BenchmarkDecodeValueInto(b *testing.B) {
	rows := benchRows(b)
	encs := make([][]byte, len(rows))
	for i, r := range rows {
		var err error
		if encs[i], err = EncodeValue(nil, r, benchTypes); err != nil {
			b.Fatal(err)
		}
	}
	cols := make([]types.Column, len(benchTypes))
	for i, t := range benchTypes {
		cols[i] = types.MustColumn(t, len(rows))
	}
	dec := NewColumnDecoder(len(rows))
	b.ReportAllocs()
	for b.Loop() {
		for _, c := range cols {
			c.Reset()
		}
		for _, e := range encs {
			if err := dec.DecodeInto(e, benchTypes, cols); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkHashInt64s hashes a piece of row ids, as a bulk load routes and
// keys each fresh row.
func BenchmarkHashInt64s(b *testing.B) {
	ids := make([]int64, 4096)
	for i := range ids {
		ids[i] = int64(i) + 1<<20
	}
	out := make([]uint64, 0, len(ids))
	for b.Loop() {
		out = HashInt64s(ids, out[:0])
	}
}
