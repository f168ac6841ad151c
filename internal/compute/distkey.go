package compute

import (
	"fmt"

	"github.com/sluice-db/sluice/internal/plan"
)

// checkDistKey refuses a hash dispatch key that names a column the
// upstream fragment does not put out: a malformed plan is an error at
// deployment, not a panic in a running actor.
func checkDistKey(key []int, root *plan.Node) error {
	if root == nil {
		return fmt.Errorf("compute: hash dispatch from a fragment without a root")
	}
	for _, k := range key {
		if k < 0 || k >= len(root.Schema) {
			return fmt.Errorf("compute: hash dispatch key column %d out of range for %d columns", k, len(root.Schema))
		}
	}
	return nil
}
