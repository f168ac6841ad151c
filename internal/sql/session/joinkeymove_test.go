package session

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/sluice-db/sluice/internal/engine"
)

// TestJoinKeyMovesAcrossActors: an UPDATE that changes rows' join keys at
// parallelism 4 sends each row's delete to the old key's join actor and its
// insert to the new key's, so the two reach the view over different
// channels in either order. The view must still end with exactly the new
// rows — NULL-padded unmatched rows of a LEFT and FULL JOIN, and matched
// pairs whose both rows moved to the same new key in one statement — which
// needs the join key in the join's stream key.
func TestJoinKeyMovesAcrossActors(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	p, err := StartPlayground(ctx, engine.Options{BarrierInterval: 5 * time.Millisecond, Parallelism: 4, CheckInserts: true,
		ChunkSize: 4}, Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := p.Close(); err != nil {
			t.Error(err)
		}
	}()
	c := connect(t, p)
	exec(t, c, "CREATE TABLE a (id int PRIMARY KEY, k int)")
	exec(t, c, "CREATE TABLE b (id int PRIMARY KEY, k int)")
	exec(t, c, "CREATE TABLE l (id int PRIMARY KEY, k int)")
	exec(t, c, "CREATE MATERIALIZED VIEW lj AS SELECT a.id AS aid, b.id AS bid FROM a LEFT JOIN b ON a.k = b.k")
	exec(t, c, "CREATE MATERIALIZED VIEW fj AS SELECT a.id AS aid, b.id AS bid FROM a FULL JOIN b ON a.k = b.k")
	exec(t, c, "CREATE MATERIALIZED VIEW ij AS SELECT a.id AS aid, l.id AS lid FROM a JOIN l ON a.k = l.k")
	for i := 0; i < 64; i++ {
		exec(t, c, fmt.Sprintf("INSERT INTO a VALUES (%d, %d)", i, i))
		exec(t, c, fmt.Sprintf("INSERT INTO b VALUES (%d, %d)", i, -i-1))
		exec(t, c, fmt.Sprintf("INSERT INTO l VALUES (%d, %d)", i, i))
	}
	views := map[string]string{
		"lj": "SELECT a.id, b.id FROM a LEFT JOIN b ON a.k = b.k",
		"fj": "SELECT a.id, b.id FROM a FULL JOIN b ON a.k = b.k",
		"ij": "SELECT a.id, l.id FROM a JOIN l ON a.k = l.k",
	}
	for round := 1; round <= 6; round++ {
		// Every row of a and of b moves to a fresh key in one statement
		// each; l moves along with a in the same epoch.
		exec(t, c, fmt.Sprintf("UPDATE a SET k = k + %d", 1000))
		exec(t, c, fmt.Sprintf("UPDATE l SET k = k + %d", 1000))
		exec(t, c, fmt.Sprintf("UPDATE b SET k = k - %d", 1000))
		exec(t, c, "FLUSH")
		if n := p.Engine.InconsistentOps(); n != 0 {
			t.Fatalf("round %d: %d inconsistent changes reached views' materializes", round, n)
		}
		for v, q := range views {
			got := queryStrings(t, c, "SELECT * FROM "+v+" ORDER BY 1, 2")
			want := queryStrings(t, c, q+" ORDER BY 1, 2")
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("round %d: view %s has %d rows, a recomputation %d\n got %q\nwant %q",
					round, v, len(got), len(want), got, want)
			}
		}
	}
}
