package session

import (
	"fmt"
	"testing"

	"pgregory.net/rapid"
)

// TestProposedKeysMatchesAMap: whatever the order of the keys (rising
// runs, repeats, a break after a long rise), add reports a key proposed
// before exactly when a plain set does.
func TestProposedKeysMatchesAMap(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		p := newProposedKeys(rapid.IntRange(0, 8).Draw(rt, "hint"))
		model := map[string]bool{}
		next := 0
		for i := range rapid.IntRange(1, 60).Draw(rt, "n") {
			var k int
			switch rapid.IntRange(0, 3).Draw(rt, fmt.Sprint("how", i)) {
			case 0, 1: // rise
				next += rapid.IntRange(0, 3).Draw(rt, fmt.Sprint("step", i))
				k = next
			default: // anywhere, often a repeat
				k = rapid.IntRange(0, next+2).Draw(rt, fmt.Sprint("k", i))
			}
			// Fixed-width big-endian keys compare as their numbers do;
			// a shorter prefix key checks that order is by bytes.
			key := fmt.Appendf(nil, "%04d", k)
			if k%7 == 3 {
				key = key[:3]
			}
			if got, want := p.add(key), model[string(key)]; got != want {
				rt.Fatalf("key %q (#%d): add says proposed before %v, want %v", key, i, got, want)
			}
			model[string(key)] = true
		}
	})
}
