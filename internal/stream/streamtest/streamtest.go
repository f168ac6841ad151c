package streamtest

import (
	"context"
	"fmt"
	"strings"

	"github.com/sluice-db/sluice/internal/storage"
	"github.com/sluice-db/sluice/internal/stream"
	"github.com/sluice-db/sluice/internal/types"
)

// TB is the part of *testing.T, *testing.B and *rapid.T the helpers use.
type TB interface {
	Helper()
	Fatalf(format string, args ...any)
	Errorf(format string, args ...any)
	Cleanup(func())
}

// OpenStore opens an in-memory store that is closed when t ends. The
// store starts goroutines, so closing it is what lets goleak pass; a
// failed close (an iterator or snapshot an executor never released) fails
// the test.
func OpenStore(t TB) *storage.Store {
	t.Helper()
	return OpenStoreWith(t, storage.Options{})
}

// OpenStoreWith is OpenStore with opts (always in memory).
func OpenStoreWith(t TB, opts storage.Options) *storage.Store {
	t.Helper()
	opts.InMemory = true
	s, err := storage.Open(context.Background(), opts)
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("close store: %v", err)
		}
	})
	return s
}

// Script parses a test script into messages. "barrier" and "stop" lines
// are barriers with epochs firstEpoch, firstEpoch+1, ... ("stop" stops
// actor); "chunk" forces a chunk boundary; blank lines and lines starting
// with # are skipped; every other line is a row, in chunk text form, of
// the chunk the next barrier or "chunk" closes; "watermark COL VALUE" is
// a watermark on column COL (VALUE in the column's text form).
func Script(in []types.Type, text string, firstEpoch uint64, actor stream.ActorID) []stream.Message {
	var msgs []stream.Message
	var rows []string
	epoch := firstEpoch
	flush := func() {
		if len(rows) > 0 {
			msgs = append(msgs, stream.TextChunk(in, strings.Join(rows, "\n")))
			rows = nil
		}
	}
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		switch {
		case line == "" || strings.HasPrefix(line, "#"):
		case line == "barrier":
			flush()
			msgs = append(msgs, stream.NewBarrier(epoch))
			epoch++
		case line == "stop":
			flush()
			msgs = append(msgs, stream.NewStopBarrier(epoch, actor))
			epoch++
		case line == "chunk":
			flush()
		case strings.HasPrefix(line, "watermark "):
			flush()
			msgs = append(msgs, stream.Message{Watermark: parseWatermark(in, line)})
		default:
			rows = append(rows, line)
		}
	}
	flush()
	return msgs
}

// parseWatermark reads "watermark COL VALUE"; a malformed line panics (a
// broken test script).
func parseWatermark(in []types.Type, line string) *stream.Watermark {
	f := strings.SplitN(line, " ", 3)
	var col int
	if len(f) != 3 {
		panic("streamtest: " + line)
	}
	if _, err := fmt.Sscan(f[1], &col); err != nil || col < 0 || col >= len(in) {
		panic("streamtest: " + line)
	}
	v, err := types.ParseDatum(f[2], in[col])
	if err != nil {
		panic(fmt.Sprintf("streamtest: %s: %v", line, err))
	}
	return &stream.Watermark{Col: col, Value: v}
}

// Render prints a message as expectations spell it: a chunk's rows (hidden
// ones with a trailing D), "barrier N", "barrier N stop" when the barrier
// stops actor, or "watermark COL VALUE".
func Render(msg stream.Message, actor stream.ActorID) string {
	switch {
	case msg.Chunk != nil:
		return strings.TrimRight(msg.Chunk.StringAll(), "\n")
	case msg.Barrier != nil:
		if msg.Barrier.IsStop(actor) {
			return fmt.Sprintf("barrier %d stop", msg.Barrier.Epoch)
		}
		return fmt.Sprintf("barrier %d", msg.Barrier.Epoch)
	case msg.Watermark != nil:
		return fmt.Sprintf("watermark %d %v", msg.Watermark.Col, msg.Watermark.Value)
	case msg.Fresh != nil:
		return fmt.Sprintf("fresh ids %v", msg.Fresh.IDs)
	}
	return "empty"
}

// maxPull bounds a pull loop, so an executor that never yields the
// awaited barrier fails the test instead of hanging it.
const maxPull = 100000

// PullUntilStop pulls e until the barrier that stops actor and returns
// every message, that barrier last. An error from e fails the test.
func PullUntilStop(ctx context.Context, t TB, e stream.Executor, actor stream.ActorID) []stream.Message {
	t.Helper()
	return pullUntil(ctx, t, e, func(b *stream.Barrier) bool { return b.IsStop(actor) })
}

// PullUntilBarrier pulls e until the next barrier and returns every
// message, the barrier last. An error from e fails the test.
func PullUntilBarrier(ctx context.Context, t TB, e stream.Executor) []stream.Message {
	t.Helper()
	return pullUntil(ctx, t, e, func(*stream.Barrier) bool { return true })
}

func pullUntil(ctx context.Context, t TB, e stream.Executor, last func(*stream.Barrier) bool) []stream.Message {
	t.Helper()
	var out []stream.Message
	for range maxPull {
		msg, err := e.Next(ctx)
		if err != nil {
			t.Fatalf("Next after %d messages: %v\nso far:\n%s", len(out), err, describe(out))
		}
		out = append(out, msg)
		if msg.Barrier != nil && last(msg.Barrier) {
			return out
		}
	}
	t.Fatalf("no awaited barrier after %d messages", maxPull)
	return nil
}

func describe(msgs []stream.Message) string {
	var sb strings.Builder
	for _, m := range msgs {
		sb.WriteString(m.String())
		sb.WriteByte('\n')
	}
	return sb.String()
}

// RenderUntilEpoch pulls e until the barrier of epoch and returns every
// message rendered (Render), one per line. An error from e fails the test.
func RenderUntilEpoch(t TB, e stream.Executor, epoch uint64, actor stream.ActorID) string {
	t.Helper()
	var out []string
	for range maxPull {
		msg, err := e.Next(context.Background())
		if err != nil {
			t.Fatalf("Next after %d messages: %v", len(out), err)
			return ""
		}
		out = append(out, Render(msg, actor))
		if msg.Barrier != nil && msg.Barrier.Epoch == epoch {
			return strings.Join(out, "\n")
		}
	}
	t.Fatalf("no barrier %d after %d messages", epoch, maxPull)
	return ""
}
