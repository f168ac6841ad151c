package batch

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/sluice-db/sluice/internal/types"
)

// TestSpoolKeepsOrderPastMemory: a spool hands back every row in the order
// added, the same whether it kept them in memory or moved them to its file
// part way, and leaves no file in its directory.
func TestSpoolKeepsOrderPastMemory(t *testing.T) {
	ts := []types.Type{types.TInt64, types.TVarchar}
	for _, limit := range []int64{1 << 20, 200, 0} {
		t.Run(fmt.Sprint(limit), func(t *testing.T) {
			dir := t.TempDir()
			s := NewSpool(ts, dir, limit)
			defer s.Close()
			for i := range 5000 {
				var name types.Datum = fmt.Sprint("row ", i)
				if i%7 == 0 {
					name = nil
				}
				if err := s.Add(types.Row{int64(i), name}); err != nil {
					t.Fatal(err)
				}
			}
			if files, _ := os.ReadDir(dir); len(files) != 0 {
				t.Fatalf("spool left %d files in its directory", len(files))
			}
			n := 0
			err := s.Each(context.Background(), func(r types.Row) error {
				want := types.Row{int64(n), fmt.Sprint("row ", n)}
				if n%7 == 0 {
					want[1] = nil
				}
				if fmt.Sprint(r) != fmt.Sprint(want) {
					return fmt.Errorf("row %d is %v, want %v", n, r, want)
				}
				n++
				return nil
			})
			if err != nil || n != 5000 || s.Len() != 5000 {
				t.Fatalf("read %d rows of %d: %v", n, s.Len(), err)
			}
		})
	}
}
