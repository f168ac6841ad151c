package engine

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/sluice-db/sluice/internal/types"
	"pgregory.net/rapid"
)

// TestWideViewsEqualRecomputation is TestViewsEqualRecomputation over the
// wide shapes (property_wide_shapes_test.go) and a DML mix that also writes
// NULL join and group keys, updates rows in place (changing join and group
// keys), overwrites primary keys and deletes the current extreme of a.
// For long local runs, SLUICE_WIDE_STEPS raises the number of DML steps per
// case and -rapid.checks the number of cases:
//
//	SLUICE_WIDE_STEPS=80 go test -run TestWide ./internal/engine/ -rapid.checks=200
func TestWideViewsEqualRecomputation(t *testing.T) {
	maxSteps := 30
	if raceEnabled {
		maxSteps = 15
	}
	if s := os.Getenv("SLUICE_WIDE_STEPS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			t.Fatal(err)
		}
		maxSteps = n
	}
	// Parallelism is drawn, not looped over, to halve the run time; each
	// run of -rapid.checks cases sees both.
	rapid.Check(t, func(t *rapid.T) {
		runWideProperty(t, rapid.SampledFrom([]int{1, 4}).Draw(t, "parallelism"), maxSteps)
	})
}

func runWideProperty(t *rapid.T, par, maxSteps int) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cache := rapid.SampledFrom([]int{1, 4, 1000}).Draw(t, "cache")
	m := openPropModel(t, ctx, Options{Parallelism: par, ChunkSize: 4, CacheEntries: cache})
	defer func() { must(t, m.e.Close()) }()
	e := m.e
	shapes := wideShapes()
	// A random subset, so that each case is cheaper and failures shrink
	// to the one view that shows them; deep2 and deep3 bring their inputs.
	var picked []viewShape
	have := map[string]bool{}
	for _, s := range shapes {
		if (s.needs != "" && !have[s.needs]) || rapid.IntRange(0, 2).Draw(t, "pick_"+s.name) == 0 {
			continue
		}
		picked = append(picked, s)
		have[s.name] = true
	}
	early := rapid.IntRange(0, len(picked)).Draw(t, "early")
	for i, s := range picked {
		t.Logf("view %s early=%v", s.name, i < early)
	}
	for _, s := range picked[:early] {
		m.create(t, ctx, s)
	}
	steps := rapid.IntRange(5, maxSteps).Draw(t, "steps")
	for i := 0; i < steps; i++ {
		m.wideDML(t, ctx)
		switch rapid.IntRange(0, 9).Draw(t, "after") {
		case 0, 1:
			m.check(t, ctx, i)
		case 2:
			must(t, e.Recover(ctx))
		}
		if i == steps/2 {
			for _, s := range picked[early:] {
				m.create(t, ctx, s)
			}
		}
	}
	m.check(t, ctx, steps)
}

func wideVal(t *rapid.T, label string, lo, hi int) string {
	if rapid.IntRange(0, 7).Draw(t, label+"null") == 0 {
		return "NULL"
	}
	return fmt.Sprint(rapid.IntRange(lo, hi).Draw(t, label))
}

// wideDML applies one random change to a or b.
func (m *propModel) wideDML(t *rapid.T, ctx context.Context) {
	ii := []types.Type{types.TInt64, types.TInt64}
	at := m.a.Table.Types
	switch rapid.IntRange(0, 7).Draw(t, "op") {
	case 0:
		rows := ""
		for range rapid.IntRange(1, 5).Draw(t, "n") {
			rows += fmt.Sprintf("+ %s %s\n", wideVal(t, "k", 0, 4), wideVal(t, "v", -2, 8))
		}
		m.write(t, ctx, "a", types.MustParseChunk(ii, rows))
	case 1, 2:
		// Delete a random row, or the row with a's largest or smallest v:
		// the current extreme, which min/max must replace from their value
		// table and top-N from its state.
		r, ok := m.pickA(t, ctx, rapid.IntRange(0, 2).Draw(t, "which"))
		if ok {
			m.write(t, ctx, "a", types.MustParseChunk(at, "- "+types.FormatRow(r, at)))
		}
	case 3:
		// Update a row of a in place: its join/group key, its value or both.
		r, ok := m.pickA(t, ctx, 0)
		if !ok {
			return
		}
		nr := append(types.Row(nil), r...)
		switch rapid.IntRange(0, 2).Draw(t, "what") {
		case 0:
			nr[0] = parseOrNil(wideVal(t, "nk", 0, 4))
		case 1:
			nr[1] = parseOrNil(wideVal(t, "nv", -2, 8))
		default:
			nr[0], nr[1] = parseOrNil(wideVal(t, "nk", 0, 4)), parseOrNil(wideVal(t, "nv", -2, 8))
		}
		c := "U- " + types.FormatRow(r, at) + "\nU+ " + types.FormatRow(nr, at)
		m.write(t, ctx, "a", types.MustParseChunk(at, c))
	case 4:
		// Upsert: an existing key is overwritten.
		m.write(t, ctx, "b", types.MustParseChunk(ii, fmt.Sprintf("+ %d %s", rapid.IntRange(0, 5).Draw(t, "bk"), wideVal(t, "w", -2, 8))))
	case 5:
		m.write(t, ctx, "b", types.MustParseChunk(ii, fmt.Sprintf("- %d 0", rapid.IntRange(0, 5).Draw(t, "bk"))))
	case 6:
		// Move a row of b to another key (a primary-key change is a delete
		// and an insert).
		cur, err := m.e.Scan(ctx, "b")
		must(t, err)
		if len(cur) == 0 {
			return
		}
		r := cur[rapid.IntRange(0, len(cur)-1).Draw(t, "bvictim")]
		c := fmt.Sprintf("- %s\n+ %d %s", types.FormatRow(r, ii), rapid.IntRange(0, 5).Draw(t, "bnk"), wideVal(t, "nw", -2, 8))
		m.write(t, ctx, "b", types.MustParseChunk(ii, c))
	case 7:
		// Several changes to few keys in one chunk: the same key inserted,
		// overwritten and deleted in one batch.
		rows := ""
		for range rapid.IntRange(2, 6).Draw(t, "bn") {
			op := rapid.SampledFrom([]string{"+", "-"}).Draw(t, "bop")
			rows += fmt.Sprintf("%s %d %s\n", op, rapid.IntRange(0, 2).Draw(t, "bk"), wideVal(t, "w", -2, 8))
		}
		m.write(t, ctx, "b", types.MustParseChunk(ii, rows))
	}
}

func parseOrNil(s string) types.Datum {
	if s == "NULL" {
		return nil
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		panic(err)
	}
	return v
}

// pickA returns a random committed row of a (which 0), the one with the
// largest v (1) or the one with the smallest (2).
func (m *propModel) pickA(t *rapid.T, ctx context.Context, which int) (types.Row, bool) {
	cur, err := m.e.Scan(ctx, "a")
	must(t, err)
	if len(cur) == 0 {
		return nil, false
	}
	if which == 0 {
		return cur[rapid.IntRange(0, len(cur)-1).Draw(t, "victim")], true
	}
	sign := 1
	if which == 2 {
		sign = -1
	}
	best := cur[0]
	for _, r := range cur[1:] {
		if best[1] == nil || (r[1] != nil && sign*types.Compare(r[1], best[1]) > 0) {
			best = r
		}
	}
	return best, true
}

// write applies one DML chunk and logs it, so a failing case's output
// shows the changes that led to it.
func (m *propModel) write(t *rapid.T, ctx context.Context, table string, c *types.Chunk) {
	t.Logf("%s <- %s", table, c)
	must(t, m.e.Write(ctx, table, c))
}
