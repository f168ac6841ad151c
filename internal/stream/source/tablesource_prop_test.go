package source

import (
	"fmt"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// TestTableSourceExactlyOnceProperty appends records, pulls, passes
// barriers, commits some epochs and crashes at random. What the committed
// epochs emitted must be every appended row, in order, exactly once.
func TestTableSourceExactlyOnceProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		store := openStore(t)
		h := newSrcHarness(t, store, rapid.IntRange(1, 4).Draw(t, "chunk"))
		var appended []string // row texts with ops, in log order
		committed, pending := 0, 0
		epoch := uint64(1)
		h.barrier(epoch)
		expectText(t, next(t, h.src), fmt.Sprintf("barrier %d", epoch))
		id := 0
		pull := func() {
			m := next(t, h.src)
			if m.Chunk == nil {
				t.Fatalf("expected a chunk, got %v", m)
			}
			for _, line := range strings.Split(strings.TrimSpace(m.Chunk.String()), "\n") {
				at := committed + pending
				if at >= len(appended) || line != appended[at] {
					t.Fatalf("row %d is %q, want %q", at, line, appended[min(at, len(appended)-1)])
				}
				pending++
			}
		}
		barrier := func(doCommit bool) {
			epoch++
			h.barrier(epoch)
			expectText(t, next(t, h.src), fmt.Sprintf("barrier %d", epoch))
			if doCommit {
				commit(t, store, epoch)
				committed, pending = committed+pending, 0
			}
		}
		t.Repeat(map[string]func(*rapid.T){
			"append": func(t *rapid.T) {
				var lines []string
				for range rapid.IntRange(1, 5).Draw(t, "rows") {
					id++
					if rapid.IntRange(0, 3).Draw(t, "pair") == 0 {
						lines = append(lines, fmt.Sprintf("U- %d x", id), fmt.Sprintf("U+ %d y", id))
						continue
					}
					lines = append(lines, fmt.Sprintf("+ %d x", id))
				}
				appendDML(t, store, strings.Join(quote(lines), "\n"))
				appended = append(appended, lines...)
			},
			"pull": func(t *rapid.T) {
				if committed+pending < len(appended) {
					pull()
				}
			},
			"barrier": func(t *rapid.T) { barrier(rapid.Bool().Draw(t, "commit")) },
			"crash": func(t *rapid.T) {
				store.AbortUncommitted()
				pending = 0
				h.rebuild(t)
				epoch++
				h.barrier(epoch)
				expectText(t, next(t, h.src), fmt.Sprintf("barrier %d", epoch))
			},
		})
		for committed+pending < len(appended) {
			pull()
		}
		barrier(true)
		if committed != len(appended) {
			t.Fatalf("committed %d rows of %d", committed, len(appended))
		}
	})
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
