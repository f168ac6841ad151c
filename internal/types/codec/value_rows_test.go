package codec

import (
	"bytes"
	"testing"

	"github.com/sluice-db/sluice/internal/types"
	"pgregory.net/rapid"
)

// TestRowEncoderMatchesEncodeValueColumns: for rows of every type, NULLs
// included, a RowEncoder writes exactly what EncodeValueColumns writes.
func TestRowEncoderMatchesEncodeValueColumns(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		ts := rapid.SliceOfN(genType(), 0, 12).Draw(t, "types")
		n := rapid.IntRange(1, 5).Draw(t, "rows")
		cols := newColumns(t, ts)
		for range n {
			for j, d := range genRow(t, ts, "row") {
				cols[j].Append(d)
			}
		}
		enc := NewRowEncoder(cols)
		for i := range n {
			want, err := EncodeValueColumns([]byte("pre"), cols, i)
			if err != nil {
				t.Fatal(err)
			}
			got, err := enc.Append([]byte("pre"), i)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("row %d of %v: RowEncoder %x, EncodeValueColumns %x", i, ts, got, want)
			}
		}
	})
}

// BenchmarkEncodeBidRows encodes 1024 rows shaped like the ingest bench's
// bids (three bigints, three strings, a timestamp), row by row, with
// EncodeValueColumns and with a RowEncoder.
func BenchmarkEncodeBidRows(b *testing.B) {
	ts := []types.Type{types.TInt64, types.TInt64, types.TInt64, types.TVarchar, types.TVarchar, types.TTimestamp, types.TVarchar, types.TInt64}
	cols := make([]types.Column, len(ts))
	for j, t := range ts {
		cols[j] = types.MustColumn(t, 1024)
	}
	for i := range 1024 {
		row := types.Row{int64(1000 + i%10000), int64(i * 7), int64(i * 1013 % 10_000_000), "Google",
			"https://www.nexmark.com/abcde/fghij/item.htm?query=1&channel_id=123456",
			types.DTimestamp(int64(i) * 1000), "extra-payload-x", int64(i)}
		for j, d := range row {
			cols[j].Append(d)
		}
	}
	buf := make([]byte, 0, 1<<18)
	b.Run("EncodeValueColumns", func(b *testing.B) {
		for b.Loop() {
			buf = buf[:0]
			for i := range 1024 {
				buf, _ = EncodeValueColumns(buf, cols, i)
			}
		}
	})
	b.Run("RowEncoder", func(b *testing.B) {
		for b.Loop() {
			buf = buf[:0]
			enc := NewRowEncoder(cols)
			for i := range 1024 {
				buf, _ = enc.Append(buf, i)
			}
		}
	})
}
