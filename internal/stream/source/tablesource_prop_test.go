package source

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/sluice-db/sluice/internal/storage"
	"github.com/sluice-db/sluice/internal/stream"
	"github.com/sluice-db/sluice/internal/stream/streamtest"
	"pgregory.net/rapid"
)

// TestTableSourceExactlyOnceProperty appends records, pulls, passes
// barriers with the source running, paused or rate limited, commits some
// epochs and crashes at random, decoding records in windows of any size. What the committed epochs emitted must be
// every appended row, in order, exactly once, and the committed offset must
// be the position of the last committed row. A barrier pushed while the
// source runs unthrottled must come after every record appended before it
// (read-your-writes); a throttled source must pass it at once. With the
// plan's FreshRows, records of plain inserts leave as fresh rows, in
// windows, under the same rules.
func TestTableSourceExactlyOnceProperty(t *testing.T) {
	defer func(n int) { decodeWindow = n }(decodeWindow)
	rapid.Check(t, func(t *rapid.T) {
		store := streamtest.OpenStore(t)
		chunk := rapid.IntRange(1, 4).Draw(t, "chunk")
		// Records are decoded a window at a time; small windows cut them.
		decodeWindow = rapid.IntRange(1, 12).Draw(t, "window")
		h := &srcHarness{store: store, thr: stream.NewThrottle(), chunk: chunk, freshRows: rapid.Bool().Draw(t, "fresh")}
		h.rebuild(t)
		m := &srcModel{store: store, h: h, chunk: chunk, epoch: 1, mode: modeRunning}
		m.h.barrier(m.epoch)
		expectText(t, next(t, m.h.src), fmt.Sprintf("barrier %d", m.epoch))
		t.Repeat(map[string]func(*rapid.T){
			"append":   m.append,
			"pull":     m.pull,
			"barrier":  func(t *rapid.T) { m.barrier(t, rapid.Bool().Draw(t, "commit")) },
			"throttle": func(t *rapid.T) { m.setMode(rapid.SampledFrom(allModes).Draw(t, "mode")) },
			"crash":    m.crash,
		})
		// Running, one barrier drains everything appended.
		m.setMode(modeRunning)
		m.barrier(t, true)
		if m.committed != len(m.appended) {
			t.Fatalf("committed %d rows of %d", m.committed, len(m.appended))
		}
	})
}

type throttleMode string

const (
	modeRunning throttleMode = "running"
	modePaused  throttleMode = "paused"
	// modeLimited is a rate limit far above what the test emits: rows
	// never wait, but the source counts as rate limited.
	modeLimited throttleMode = "limited"
)

var allModes = []throttleMode{modeRunning, modePaused, modeLimited}

// srcModel is the property test's model of one table source.
type srcModel struct {
	store *storage.Store
	h     *srcHarness
	chunk int
	mode  throttleMode

	appended []string // row texts with ops, in log order
	recEnd   []int    // recEnd[i]: rows appended through seq i+1
	// committed rows are in committed epochs; pending rows were emitted
	// since, in epochs not (yet) committed.
	committed, pending int
	epoch              uint64
	id                 int
}

func (m *srcModel) emitted() int { return m.committed + m.pending }

func (m *srcModel) setMode(mode throttleMode) {
	m.mode = mode
	m.h.thr.SetPaused(mode == modePaused)
	if mode == modeLimited {
		m.h.thr.SetRateLimit(1 << 30)
	} else {
		m.h.thr.SetRateLimit(-1)
	}
}

func (m *srcModel) append(t *rapid.T) {
	var lines []string
	for range rapid.IntRange(1, 5).Draw(t, "rows") {
		m.id++
		if rapid.IntRange(0, 3).Draw(t, "pair") == 0 {
			lines = append(lines, fmt.Sprintf("U- %d x", m.id), fmt.Sprintf("U+ %d y", m.id))
			continue
		}
		lines = append(lines, fmt.Sprintf("+ %d x", m.id))
	}
	if m.h.freshRows {
		appendTableDML(t, m.store, strings.Join(quote(lines), "\n"))
	} else {
		appendDML(t, m.store, strings.Join(quote(lines), "\n"))
	}
	m.appended = append(m.appended, lines...)
	m.recEnd = append(m.recEnd, len(m.appended))
}

// pull takes one chunk when there is one to take (a paused source would
// block: its idleness is TestTableSourcePausedPassesBarrierAtOnce's).
func (m *srcModel) pull(t *rapid.T) {
	if m.mode == modePaused || m.emitted() >= len(m.appended) {
		return
	}
	msg := next(t, m.h.src)
	if msg.Chunk == nil && msg.Fresh == nil {
		t.Fatalf("expected rows, got %v", msg)
	}
	m.checkRows(t, msg)
}

// checkRows checks a chunk (checkChunk) or fresh rows: plain inserts, at
// most a decode window of them, the next ones of the log, each with its
// own id.
func (m *srcModel) checkRows(t *rapid.T, msg stream.Message) {
	if msg.Fresh == nil {
		m.checkChunk(t, msg.Chunk.String())
		return
	}
	if !m.h.freshRows || msg.Fresh.Len() > decodeWindow {
		t.Fatalf("fresh rows %v (fresh rows wanted %v, window %d)", msg.Fresh.IDs, m.h.freshRows, decodeWindow)
	}
	c, err := msg.Fresh.Decode(srcSchema)
	if err != nil {
		t.Fatal(err)
	}
	for k, id := range msg.Fresh.IDs {
		if c.Row(k)[0] != id {
			t.Fatalf("fresh row %v carries id %d", c.Row(k), id)
		}
	}
	for _, line := range strings.Split(strings.TrimSpace(c.String()), "\n") {
		at := m.emitted()
		if at >= len(m.appended) || line != m.appended[at] {
			t.Fatalf("fresh row %d is %q, want %q", at, line, m.appended[min(at, len(m.appended)-1)])
		}
		m.pending++
	}
}

// checkChunk checks a chunk's rows are the next ones of the log, that it
// respects the chunk size (an update pair may exceed a size of 1) and that
// it does not cut an update pair.
func (m *srcModel) checkChunk(t *rapid.T, text string) {
	lines := strings.Split(strings.TrimSpace(text), "\n")
	if len(lines) > max(m.chunk, 2) {
		t.Fatalf("chunk of %d rows with chunk size %d", len(lines), m.chunk)
	}
	for _, line := range lines {
		at := m.emitted()
		if at >= len(m.appended) || line != m.appended[at] {
			t.Fatalf("row %d is %q, want %q", at, line, m.appended[min(at, len(m.appended)-1)])
		}
		m.pending++
	}
	if strings.HasPrefix(lines[len(lines)-1], "U-") {
		t.Fatalf("chunk ends inside an update pair: %q", text)
	}
}

// barrier pushes a barrier and pulls until it comes out. Running, the rows
// before it must include every record appended so far; throttled, it must
// be the very next message.
func (m *srcModel) barrier(t *rapid.T, doCommit bool) {
	appendedBefore := len(m.appended)
	m.epoch++
	m.h.barrier(m.epoch)
	for {
		msg := next(t, m.h.src)
		if msg.Barrier != nil {
			expectText(t, msg, fmt.Sprintf("barrier %d", m.epoch))
			break
		}
		if m.mode != modeRunning {
			t.Fatalf("%s source returned a chunk before barrier %d: %v", m.mode, m.epoch, msg)
		}
		m.checkRows(t, msg)
	}
	if m.mode == modeRunning && m.emitted() < appendedBefore {
		t.Fatalf("barrier %d came after %d rows; %d were appended before it", m.epoch, m.emitted(), appendedBefore)
	}
	if doCommit {
		commit(t, m.store, m.epoch)
		m.committed, m.pending = m.emitted(), 0
		m.checkCommittedPos(t)
	}
}

// checkCommittedPos checks the committed offset is the log position just
// after the last committed row.
func (m *srcModel) checkCommittedPos(t *rapid.T) {
	if m.committed == 0 {
		return // no row was ever written
	}
	// Records seq 1..whole are consumed entirely.
	whole := sort.SearchInts(m.recEnd, m.committed+1)
	want := logPos{seq: uint64(whole), rows: m.committed}
	if whole > 0 {
		want.rows -= m.recEnd[whole-1]
	}
	if got := committedPos(t, m.store); got != want {
		t.Fatalf("committed position %+v after %d rows, want %+v", got, m.committed, want)
	}
}

// crash drops everything uncommitted and rebuilds the source, which must
// start with a barrier whatever its throttle.
func (m *srcModel) crash(t *rapid.T) {
	m.store.AbortUncommitted()
	m.pending = 0
	m.h.rebuild(t)
	m.epoch++
	m.h.barrier(m.epoch)
	expectText(t, next(t, m.h.src), fmt.Sprintf("barrier %d", m.epoch))
}

// quote turns "+ 1 x" into "+ 1 'x'" for the chunk parser.
func quote(lines []string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		f := strings.Fields(l)
		out[i] = fmt.Sprintf("%s %s '%s'", f[0], f[1], f[2])
	}
	return out
}
