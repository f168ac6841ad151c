package compute

import (
	"testing"

	"github.com/sluice-db/sluice/internal/plan"
	"github.com/sluice-db/sluice/internal/stream"
	"github.com/sluice-db/sluice/internal/types"
)

// A hash dispatch whose key is outside the upstream's columns is refused
// when the channels are connected; before, it deployed and the upstream
// actor panicked hashing its first chunk.
func TestConnectRefusesOutOfRangeDistKey(t *testing.T) {
	n := NewNode(nil, nil, Config{})
	root := &plan.Node{Kind: plan.KindValues, Schema: []types.Type{types.TInt64, types.TInt64}}
	up := &actor{id: 1, root: root, inputs: map[inputKey][]*stream.Input{}}
	for _, key := range [][]int{{2}, {-1}, {0, 5}} {
		down := []*actor{{id: 2, inputs: map[inputKey][]*stream.Input{}}, {id: 3, inputs: map[inputKey][]*stream.Input{}}}
		if _, err := n.connect(up, 0, down, inputKey{}, plan.Dispatch{Kind: plan.DispatchHash, DistKey: key}); err == nil {
			t.Errorf("hash dispatch on key %v over 2 columns accepted", key)
		}
	}
	down := []*actor{{id: 2, inputs: map[inputKey][]*stream.Input{}}, {id: 3, inputs: map[inputKey][]*stream.Input{}}}
	if _, err := n.connect(up, 0, down, inputKey{}, plan.Dispatch{Kind: plan.DispatchHash, DistKey: []int{1}}); err != nil {
		t.Errorf("valid hash dispatch refused: %v", err)
	}
}
