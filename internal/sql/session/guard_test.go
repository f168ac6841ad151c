package session

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/sluice-db/sluice/internal/sqlerr"
)

// TestAmplificationGuardNoticesTheCreator: a foreground CREATE of a
// self-join over 200 rows of one key, under a limit of 100 rows per input
// row, gets the guard's WARNING (01000) naming the view and the key before
// it returns, and the view is still created and exact. The settings are
// checked.
func TestAmplificationGuardNoticesTheCreator(t *testing.T) {
	p := startPlayground(t)
	var mu sync.Mutex
	var notices []*pgconn.Notice
	c := connectWith(t, p, func(n *pgconn.Notice) {
		mu.Lock()
		defer mu.Unlock()
		notices = append(notices, n)
	})
	exec(t, c, "CREATE TABLE t (k int, v int)")
	exec(t, c, "INSERT INTO t SELECT 1, g FROM generate_series(1, 200) AS g")
	exec(t, c, "SET streaming_amplification_limit = 100")
	exec(t, c, "CREATE MATERIALIZED VIEW pairs AS SELECT a.v AS x, b.v AS y FROM t a JOIN t b ON a.k = b.k")
	mu.Lock()
	got := notices
	mu.Unlock()
	if len(got) != 1 || got[0].Severity != "WARNING" || got[0].Code != string(sqlerr.Warning) ||
		!strings.Contains(got[0].Message, "pairs") || !strings.Contains(got[0].Message, "key 1 ") {
		t.Fatalf("notices before CREATE returned: %+v", got)
	}
	if n := queryStrings(t, c, "SELECT count(*)::varchar FROM pairs"); n[0] != "40000" {
		t.Fatalf("pairs has %s rows, want 40000", n[0])
	}
	for _, bad := range []string{"SET streaming_amplification_limit = -1", "SET streaming_amplification_action = 'drop'"} {
		if _, err := c.Exec(context.Background(), bad); err == nil || !strings.Contains(err.Error(), "22023") {
			t.Errorf("%s: %v, want 22023", bad, err)
		}
	}
}
