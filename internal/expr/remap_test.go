package expr

import (
	"testing"

	"github.com/sluice-db/sluice/internal/types"
)

// TestRemapInputs: every input is renumbered, the original is left as it
// was, and a refused column refuses the whole expression.
func TestRemapInputs(t *testing.T) {
	i64 := types.TInt64
	d := Func("+", Input(0, i64), Func("-", Input(2, i64), Literal(int64(1), i64)))
	m, ok := RemapInputs(d, func(i int) (int, bool) { return i + 10, true })
	if !ok || m.Args[0].Index != 10 || m.Args[1].Args[0].Index != 12 {
		t.Fatalf("remapped %+v (%v)", m, ok)
	}
	if d.Args[0].Index != 0 || d.Args[1].Args[0].Index != 2 {
		t.Fatalf("the original changed: %+v", d)
	}
	if _, ok := RemapInputs(d, func(i int) (int, bool) { return i, i != 2 }); ok {
		t.Fatal("a refused column was accepted")
	}
}
