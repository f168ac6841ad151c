package engine

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/sluice-db/sluice/internal/types"
)

// TestTinyCacheLargeState runs every stateful view shape with one cache entry per
// executor and state hundreds of times larger: join sides with ~100 keys
// each, ~100 aggregation groups, min/max and DISTINCT value tables with
// hundreds of values, top-N tables of hundreds of rows. Every lookup misses
// the cache and must be answered from the state table. The deletes take
// away the current maximum again and again (min/max and top-N must refill
// from evicted state) and the updates move rows between groups and join
// keys. One actor per fragment, so each executor holds all of the state.
func TestTinyCacheLargeState(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	m := openPropModel(t, ctx, Options{Parallelism: 1, ChunkSize: 16, CacheEntries: 1})
	defer func() { must(t, m.e.Close()) }()
	e := m.e
	stateful := map[string]bool{"leftj": true, "fullj": true, "fjres": true, "fjmulti": true, "grouped": true,
		"global": true, "aggs": true, "typedaggs": true, "globalaggs": true, "top": true, "grouptop": true,
		"topoff": true, "grouptopties": true, "offsetonly": true, "distinctv": true}
	for _, s := range append(allShapes(), wideShapes()...) {
		if stateful[s.name] {
			m.create(t, ctx, s)
		}
	}
	// Sizes: rows of a, keys of b, repeated max deletes. Even the small
	// ones (under -race) are a hundred times the cache.
	na, nb, nmax := 400, 120, 15
	if raceEnabled {
		na, nb, nmax = 150, 60, 6
	}
	rng := rand.New(rand.NewPCG(7, 11))
	val := func(lo, n int) string {
		if rng.IntN(12) == 0 {
			return "NULL"
		}
		return fmt.Sprint(lo + rng.IntN(n))
	}
	i2 := []types.Type{types.TInt64, types.TInt64}
	var rows, brows strings.Builder
	for range na {
		fmt.Fprintf(&rows, "+ %s %s\n", val(0, 100), val(-50, 200))
	}
	for k := range nb {
		fmt.Fprintf(&brows, "+ %d %s\n", k, val(-50, 200))
	}
	must(t, e.Write(ctx, "a", types.MustParseChunk(i2, rows.String())))
	must(t, e.Write(ctx, "b", types.MustParseChunk(i2, brows.String())))
	m.check(t, ctx, 0)

	at := m.a.Table.Types
	cur, err := e.Scan(ctx, "a")
	must(t, err)
	var changes strings.Builder
	for i, r := range cur {
		switch {
		case i%5 == 0:
			fmt.Fprintf(&changes, "- %s\n", types.FormatRow(r, at))
		case i%5 == 1:
			nr := append(types.Row(nil), r...)
			nr[0], nr[1] = parseOrNil(val(0, 100)), parseOrNil(val(-50, 200))
			fmt.Fprintf(&changes, "U- %s\nU+ %s\n", types.FormatRow(r, at), types.FormatRow(nr, at))
		}
	}
	must(t, e.Write(ctx, "a", types.MustParseChunk(at, changes.String())))
	var bchanges strings.Builder
	for k := 0; k < nb; k += 3 {
		fmt.Fprintf(&bchanges, "- %d 0\n+ %d %s\n", k, k+1, val(-50, 200))
	}
	must(t, e.Write(ctx, "b", types.MustParseChunk(i2, bchanges.String())))
	m.check(t, ctx, 1)

	// Take away the largest v, epoch after epoch.
	for i := range nmax {
		must(t, e.Flush(ctx))
		cur, err := e.Scan(ctx, "a")
		must(t, err)
		best := cur[0]
		for _, r := range cur[1:] {
			if best[1] == nil || (r[1] != nil && types.Compare(r[1], best[1]) > 0) {
				best = r
			}
		}
		must(t, e.Write(ctx, "a", types.MustParseChunk(at, "- "+types.FormatRow(best, at))))
		if i%3 == 2 {
			m.check(t, ctx, 2+i)
		}
	}
	m.check(t, ctx, 100)
}
