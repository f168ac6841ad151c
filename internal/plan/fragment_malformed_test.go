package plan

import (
	"testing"

	"github.com/sluice-db/sluice/internal/types"
)

// A malformed tree — a nil input anywhere, also below a multi-input node
// whose inputs are searched for barrier sources first — is an error from
// Fragmentize, not a nil-pointer panic.
func TestFragmentizeNilInputIsAnError(t *testing.T) {
	ii := []types.Type{types.TInt64, types.TInt64}
	values := func() *Node { return &Node{Kind: KindValues, Schema: ii, StreamKey: []int{0}, Values: &Values{}} }
	next := uint32(0)
	opts := FragmentOptions{NextFragmentID: func() uint32 { next++; return next }}
	for name, root := range map[string]*Node{
		"nil input": {Kind: KindMaterialize, Schema: ii, Inputs: []*Node{nil},
			Materialize: &Materialize{Table: Table{ID: 1, Types: ii, PK: []int{0}, DistKey: []int{0}}}},
		"nil input below a union": {Kind: KindUnion, Schema: ii, Inputs: []*Node{
			values(), {Kind: KindFilter, Schema: ii, Inputs: []*Node{nil}}}},
	} {
		if _, err := Fragmentize(1, root, opts); err == nil {
			t.Errorf("%s: Fragmentize accepted a nil input", name)
		}
	}
}
