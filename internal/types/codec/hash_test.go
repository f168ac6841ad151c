package codec

import (
	"fmt"
	"math"
	"math/bits"
	"strings"
	"testing"

	"github.com/cespare/xxhash/v2"
	"github.com/cockroachdb/apd/v3"
	"github.com/sluice-db/sluice/internal/types"
	"pgregory.net/rapid"
)

func TestHashEqualForEqualDatums(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		ts := rapid.SliceOfN(genType(), 1, 4).Draw(t, "types")
		a := genRow(t, ts, "a")
		b := make(types.Row, len(a))
		for i := range a {
			b[i] = twin(t, a[i], "twin")
		}
		if ha, hb := HashRow(a, ts), HashRow(b, ts); ha != hb {
			t.Fatalf("HashRow(%v)=%x != HashRow(%v)=%x", a, ha, b, hb)
		}
	})
}

func TestHashColumnsMatchesHashRow(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		ts := rapid.SliceOfN(genType(), 1, 5).Draw(t, "types")
		n := rapid.IntRange(0, 70).Draw(t, "rows")
		b := types.NewBuilder(ts, n+1)
		rows := make([]types.Row, n)
		for i := range rows {
			rows[i] = genRow(t, ts, "row")
			b.Append(types.Insert, rows[i])
		}
		c := b.Take()
		if c == nil {
			c = types.NewChunk(make([]types.Column, len(ts)), nil)
			for i, ty := range ts {
				c.Cols[i] = types.MustColumn(ty, 0)
			}
		}
		var vis types.Bitmap // hidden rows are hashed too
		for i := range n {
			if rapid.Bool().Draw(t, "visible") {
				vis.Set(i)
			}
		}
		c.SetVisibility(vis)
		cols := rapid.SliceOfN(rapid.IntRange(0, len(ts)-1), 0, 6).Draw(t, "cols")
		colTypes := make([]types.Type, len(cols))
		for k, ci := range cols {
			colTypes[k] = ts[ci]
		}
		reuse := make([]uint64, rapid.IntRange(0, 80).Draw(t, "reuse"))
		out := HashColumns(c, cols, reuse)
		if len(out) != n {
			t.Fatalf("HashColumns returned %d hashes for %d rows", len(out), n)
		}
		for i, row := range rows {
			sub := make(types.Row, len(cols))
			for k, ci := range cols {
				sub[k] = row[ci]
			}
			if want := HashRow(sub, colTypes); out[i] != want {
				t.Fatalf("row %d cols %v: HashColumns %x, HashRow %x", i, cols, out[i], want)
			}
		}
	})
}

// TestHashGolden pins the persisted hash function: these values decide
// which vnode stored state lives in. If this fails, the change moves every
// row of every existing table; it needs a migration, not a new golden.
func TestHashGolden(t *testing.T) {
	cases := []struct {
		row  types.Row
		ts   []types.Type
		want uint64
	}{
		{types.Row{}, nil, 0xa9d8fb4184944a8f},
		{types.Row{nil}, []types.Type{types.TInt64}, 0x6cd313c0749d499c},
		{types.Row{int64(1)}, []types.Type{types.TInt32}, 0xb5b023ac91bf24b2},
		{types.Row{int64(-42), "hello"}, []types.Type{types.TInt64, types.TVarchar}, 0xf3202b3fce575871},
		{types.Row{apd.New(15, -1), 2.5, true}, []types.Type{types.TDecimal, types.TFloat64, types.TBool}, 0xc6315fede87a1e99},
		{types.Row{types.DDate(19000), types.DInterval{Months: 1, Days: 2, Micros: 3}, []byte{0, 1}},
			[]types.Type{types.TDate, types.TInterval, types.TBytea}, 0xf041f9d1de7e20e5},
	}
	for i, c := range cases {
		if got := HashRow(c.row, c.ts); got != c.want {
			t.Errorf("case %d HashRow(%v) = %#x, want %#x", i, c.row, got, c.want)
		}
	}
}

// TestHashSpec recomputes one hash from the documented recipe (ascending
// key bytes per column, xxhash64 each, fold, fmix64), independently of the
// code paths under test.
func TestHashSpec(t *testing.T) {
	col1 := xxhash.Sum64([]byte{valueMarker, 0x80, 0, 0, 0, 0, 0, 0, 7})
	col2 := xxhash.Sum64([]byte{valueMarker, 'a', 0x00, 0xFF, 'b', 0x00, 0x01})
	h := uint64(hashSeed)
	for _, c := range []uint64{col1, col2} {
		h = bits.RotateLeft64((h^c)*hashPrime1, 31)
	}
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb9fe1a85ec53
	h ^= h >> 33
	if got := HashRow(types.Row{int64(7), "a\x00b"}, []types.Type{types.TInt16, types.TVarchar}); got != h {
		t.Fatalf("HashRow = %#x, recipe gives %#x", got, h)
	}
}

func TestHashNullIsFixedAndDistinct(t *testing.T) {
	// NULL hashes the same whatever the column type, and unlike any value
	// of the small domains tried.
	null := HashRow(types.Row{nil}, []types.Type{types.TInt64})
	for _, ty := range allTypes {
		if h := HashRow(types.Row{nil}, []types.Type{ty}); h != null {
			t.Errorf("NULL %s hashes %x, NULL bigint %x", ty, h, null)
		}
	}
	for _, d := range []types.Row{{int64(0)}, {int64(-1)}, {""}} {
		ty := types.TInt64
		if _, ok := d[0].(string); ok {
			ty = types.TVarchar
		}
		if HashRow(d, []types.Type{ty}) == null {
			t.Errorf("%v hashes like NULL", d)
		}
	}
}

// TestVNodeSpread checks that consecutive integer keys spread evenly over
// the vnodes (a chi-squared bound far above what a uniform hash produces).
func TestVNodeSpread(t *testing.T) {
	const n = 256 * 200
	var counts [VNodeCount]int
	for i := range int64(n) {
		counts[VNodeOf(HashRow(types.Row{i}, []types.Type{types.TInt64}))]++
	}
	exp := float64(n) / VNodeCount
	chi := 0.0
	for _, c := range counts {
		chi += (float64(c) - exp) * (float64(c) - exp) / exp
	}
	// 255 degrees of freedom: mean 255, p=1e-6 near 370.
	if chi > 400 {
		t.Fatalf("vnode chi-squared %.1f: counts %v", chi, counts)
	}
	if d := math.Abs(float64(counts[0]) - exp); d > exp/2 {
		t.Fatalf("vnode 0 holds %d rows, expected about %.0f", counts[0], exp)
	}
}

func TestHashRowPanicsOnWrongDatum(t *testing.T) {
	defer func() {
		if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), "codec") {
			t.Fatalf("recover() = %v, want a codec panic", r)
		}
	}()
	HashRow(types.Row{"x"}, []types.Type{types.TInt64})
}

// TestXXHashIntKeyIsXXHash checks the inline xxh64 of an integer's key
// against the library over the key bytes.
func TestXXHashIntKeyIsXXHash(t *testing.T) {
	check := func(t interface{ Fatalf(string, ...any) }, v int64) {
		want := xxhash.Sum64(appendKeyInt([]byte{valueMarker}, v))
		if got := xxhashIntKey(v); got != want {
			t.Fatalf("xxhashIntKey(%d) = %x, xxhash.Sum64 of its key %x", v, got, want)
		}
	}
	for _, v := range []int64{0, 1, -1, 255, 256, math.MaxInt64, math.MinInt64, 1 << 40} {
		check(t, v)
	}
	rapid.Check(t, func(t *rapid.T) { check(t, rapid.Int64().Draw(t, "v")) })
}
