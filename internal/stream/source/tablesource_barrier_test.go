package source

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sluice-db/sluice/internal/stream"
	"github.com/sluice-db/sluice/internal/stream/streamtest"
	"github.com/sluice-db/sluice/internal/types"
)

// The tests of this file check when a barrier passes the table source:
// running, after every record durable when it arrived (FLUSH reads its
// writes) but not after records appended later; paused or rate limited, at
// once.

// rowsUntilBarrier pulls messages until a barrier and returns the rows
// before it, one text line each, and the barrier. It reports errors rather
// than failing a test, so it may run on any goroutine.
func rowsUntilBarrier(ctx context.Context, ex stream.Executor) ([]string, *stream.Barrier, error) {
	var rows []string
	for {
		m, err := ex.Next(ctx)
		if err != nil {
			return rows, nil, err
		}
		if m.Barrier != nil {
			return rows, m.Barrier, nil
		}
		rows = append(rows, strings.Split(strings.TrimSpace(m.Chunk.String()), "\n")...)
	}
}

// mustRowsUntil is rowsUntilBarrier on the test goroutine, checking the
// barrier's epoch.
func mustRowsUntil(t *testing.T, ex stream.Executor, epoch uint64) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	rows, b, err := rowsUntilBarrier(ctx, ex)
	if err != nil {
		t.Fatalf("waiting for barrier %d after %d rows: %v", epoch, len(rows), err)
	}
	if b.Epoch != epoch {
		t.Fatalf("got barrier %d, want %d", b.Epoch, epoch)
	}
	return rows
}

// appendRecords appends n records of 1 to 3 rows (some update pairs) with
// ids from first on, and returns their rows as the source prints them.
func appendRecords(t *testing.T, h *srcHarness, first, n int) []string {
	t.Helper()
	var all []string
	id := first
	for i := range n {
		var lines []string
		for range 1 + i%3 {
			if id%4 == 0 {
				lines = append(lines, fmt.Sprintf("U- %d x", id), fmt.Sprintf("U+ %d y", id))
			} else {
				lines = append(lines, fmt.Sprintf("+ %d x", id))
			}
			id++
		}
		appendDML(t, h.store, strings.Join(quote(lines), "\n"))
		all = append(all, lines...)
	}
	return all
}

func expectRows(t *testing.T, got, want []string) {
	t.Helper()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("rows\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func expectCommittedSeq(t *testing.T, h *srcHarness, epoch, seq uint64) {
	t.Helper()
	commit(t, h.store, epoch)
	if p := committedPos(t, h.store); p != (logPos{seq: seq}) {
		t.Fatalf("committed position at epoch %d is %+v, want seq %d", epoch, p, seq)
	}
}

// TestTableSourceBarrierFollowsDurableRecords: every record durable when a
// barrier arrives is emitted before it, whether the barrier waits in the
// inbox or reaches a source blocked on an empty log.
func TestTableSourceBarrierFollowsDurableRecords(t *testing.T) {
	const n = 12
	t.Run("waiting", func(t *testing.T) {
		h := newSrcHarness(t, streamtest.OpenStore(t), 3)
		h.barrier(1)
		expectText(t, next(t, h.src), "barrier 1")
		want := appendRecords(t, h, 1, n)
		h.barrier(2)
		expectRows(t, mustRowsUntil(t, h.src, 2), want)
		expectCommittedSeq(t, h, 2, n)
		h.barrier(3)
		expectText(t, next(t, h.src), "barrier 3")
	})
	t.Run("blocked", func(t *testing.T) {
		h := newSrcHarness(t, streamtest.OpenStore(t), 3)
		h.barrier(1)
		expectText(t, next(t, h.src), "barrier 1")
		type result struct {
			rows []string
			b    *stream.Barrier
			err  error
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		got := make(chan result, 1)
		go func() {
			rows, b, err := rowsUntilBarrier(ctx, h.src)
			got <- result{rows, b, err}
		}()
		time.Sleep(10 * time.Millisecond) // let it block on the empty log
		want := appendRecords(t, h, 1, n)
		h.barrier(2)
		r := <-got
		if r.err != nil || r.b.Epoch != 2 {
			t.Fatalf("barrier %v, err %v", r.b, r.err)
		}
		expectRows(t, r.rows, want)
		expectCommittedSeq(t, h, 2, n)
	})
}

// nextWithin pulls one message, failing if it takes longer than d: a
// barrier that must pass at once must not wait for a throttle.
func nextWithin(t *testing.T, ex stream.Executor, d time.Duration) stream.Message {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	m, err := ex.Next(ctx)
	if err != nil {
		t.Fatalf("next within %v: %v", d, err)
	}
	return m
}

// TestTableSourcePausedPassesBarrierAtOnce: a paused or rate-limited source
// never holds a barrier for its records, which wait until after it; once
// running again, the next barrier brings them.
func TestTableSourcePausedPassesBarrierAtOnce(t *testing.T) {
	t.Run("paused on arrival", func(t *testing.T) {
		h := newSrcHarness(t, streamtest.OpenStore(t), 2)
		h.barrier(1)
		expectText(t, next(t, h.src), "barrier 1")
		want := appendRecords(t, h, 1, 3)
		h.thr.SetPaused(true)
		h.barrier(2)
		expectText(t, nextWithin(t, h.src, time.Second), "barrier 2")
		expectIdle(t, h.src)
		h.thr.SetPaused(false)
		h.barrier(3)
		expectRows(t, mustRowsUntil(t, h.src, 3), want)
		expectCommittedSeq(t, h, 3, 3)
	})
	t.Run("paused while draining", func(t *testing.T) {
		h := newSrcHarness(t, streamtest.OpenStore(t), 1)
		h.barrier(1)
		expectText(t, next(t, h.src), "barrier 1")
		for i := 1; i <= 4; i++ {
			appendDML(t, h.store, fmt.Sprintf("+ %d 'x'", i))
		}
		h.barrier(2)
		expectText(t, next(t, h.src), "chunk:\n+ 1 x") // barrier 2 is held
		h.thr.SetPaused(true)
		expectText(t, nextWithin(t, h.src, time.Second), "barrier 2")
		expectCommittedSeq(t, h, 2, 1)
		expectIdle(t, h.src)
		h.thr.SetPaused(false)
		h.barrier(3)
		expectRows(t, mustRowsUntil(t, h.src, 3), []string{"+ 2 x", "+ 3 x", "+ 4 x"})
		expectCommittedSeq(t, h, 3, 4)
	})
	t.Run("rate limited", func(t *testing.T) {
		h := newSrcHarness(t, streamtest.OpenStore(t), 1)
		h.thr.SetRateLimit(1) // one row per second, burst 1
		h.barrier(1)
		expectText(t, next(t, h.src), "barrier 1")
		for i := 1; i <= 3; i++ {
			appendDML(t, h.store, fmt.Sprintf("+ %d 'x'", i))
		}
		expectText(t, next(t, h.src), "chunk:\n+ 1 x") // spends the burst
		h.barrier(2)
		// Draining would take two seconds of tokens.
		expectText(t, nextWithin(t, h.src, 500*time.Millisecond), "barrier 2")
		expectCommittedSeq(t, h, 2, 1)
		h.thr.SetRateLimit(-1)
		h.barrier(3)
		expectRows(t, mustRowsUntil(t, h.src, 3), []string{"+ 2 x", "+ 3 x"})
		expectCommittedSeq(t, h, 3, 3)
	})
}

// TestTableSourceBarrierNotStarvedByAppends: records appended after a
// barrier arrived need not come before it, so writes that keep coming
// cannot hold it forever. A record is appended after every chunk the
// source returns; with one-row records and chunks of one row, a source
// chasing the log's end would never catch up.
func TestTableSourceBarrierNotStarvedByAppends(t *testing.T) {
	const before = 5
	h := newSrcHarness(t, streamtest.OpenStore(t), 1)
	h.barrier(1)
	expectText(t, next(t, h.src), "barrier 1")
	id := 0
	appendOne := func() {
		id++
		appendDML(t, h.store, fmt.Sprintf("+ %d 'x'", id))
	}
	for range before {
		appendOne()
	}
	h.barrier(2)
	var rows []string
	for {
		m := next(t, h.src)
		if m.Barrier != nil {
			expectText(t, m, "barrier 2")
			break
		}
		rows = append(rows, strings.TrimSpace(m.Chunk.String()))
		if len(rows) > 20*before {
			t.Fatalf("barrier 2 starved: %d chunks and counting", len(rows))
		}
		appendOne()
	}
	// All records appended before the barrier; a few more are allowed
	// (a source may read a little ahead), but not the whole stream.
	if len(rows) < before || len(rows) > 2*before {
		t.Fatalf("barrier 2 came after %d rows, want %d to %d", len(rows), before, 2*before)
	}
	// The rest follows, once each, in order.
	h.barrier(3)
	rows = append(rows, mustRowsUntil(t, h.src, 3)...)
	expectConsecutive(t, rows, id)
}

// expectConsecutive checks rows are "+ 1 x" to "+ n x" in order.
func expectConsecutive(t *testing.T, rows []string, n int) {
	t.Helper()
	if len(rows) != n {
		t.Fatalf("%d rows, want %d", len(rows), n)
	}
	for i, r := range rows {
		if want := fmt.Sprintf("+ %d x", i+1); r != want {
			t.Fatalf("row %d is %q, want %q", i, r, want)
		}
	}
}

// TestTableSourceBarrierNotStarvedByConcurrentAppends: another goroutine
// appends without pause. The rows before a barrier are at least the records
// durable when it was pushed (read-your-writes) and at most those durable
// right after the source took it (not starved).
func TestTableSourceBarrierNotStarvedByConcurrentAppends(t *testing.T) {
	h := newSrcHarness(t, streamtest.OpenStore(t), 1)
	h.barrier(1)
	expectText(t, next(t, h.src), "barrier 1")
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	appendErr := make(chan error, 1)
	wg.Go(func() { appendErr <- appendUntilDone(ctx, h) })

	lastDML := func() int {
		n, err := h.store.LastDML(srcTableID)
		if err != nil {
			t.Fatal(err)
		}
		return int(n)
	}
	wctx, wcancel := context.WithTimeout(ctx, 5*time.Second)
	defer wcancel()
	if err := h.store.WaitDML(wctx, srcTableID, 20); err != nil {
		t.Fatal(err)
	}
	rows := []string{strings.TrimSpace(next(t, h.src).Chunk.String())}
	low := lastDML()
	h.barrier(2)
	// The source takes the barrier on this Next, before anything else.
	m := next(t, h.src)
	high := lastDML()
	for m.Barrier == nil {
		rows = append(rows, strings.TrimSpace(m.Chunk.String()))
		m = next(t, h.src)
	}
	expectText(t, m, "barrier 2")
	if len(rows) < low || len(rows) > high {
		t.Fatalf("barrier 2 came after %d rows; %d were durable when it was pushed, %d just after it arrived",
			len(rows), low, high)
	}
	cancel()
	wg.Wait()
	if err := <-appendErr; err != nil {
		t.Fatal(err)
	}
	h.barrier(3)
	rows = append(rows, mustRowsUntil(t, h.src, 3)...)
	expectConsecutive(t, rows, lastDML())
}

// appendUntilDone appends one-row records "+ i x", i = 1, 2, ..., until ctx
// ends (a bounded number, so a stuck test cannot fill memory).
func appendUntilDone(ctx context.Context, h *srcHarness) error {
	for i := 1; i <= 100_000; i++ {
		b, err := EncodeDML(types.MustParseChunk(srcSchema, fmt.Sprintf("+ %d 'x'", i)))
		if err != nil {
			return err
		}
		if _, err := h.store.AppendDML(ctx, srcTableID, b); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
	}
	return nil
}
