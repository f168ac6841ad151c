package session

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/sluice-db/sluice/internal/sqlerr"
)

// TestAmplificationGuardNoticesTheCreator: a foreground CREATE of a
// self-join over 200 rows of one key, under a limit of 100 rows per input
// row, gets the guard's WARNING (01000) naming the view and the key before
// it returns, and the view is still created and exact. The settings are
// checked.
func TestAmplificationGuardNoticesTheCreator(t *testing.T) {
	c, notices := guardedTable(t, 200)
	exec(t, c, "CREATE MATERIALIZED VIEW pairs AS SELECT a.v AS x, b.v AS y FROM t a JOIN t b ON a.k = b.k")
	got := notices()
	if len(got) != 1 || got[0].Severity != "WARNING" || got[0].Code != string(sqlerr.Warning) ||
		!strings.Contains(got[0].Message, "pairs") || !strings.Contains(got[0].Message, "key 1,") {
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

// TestAmplificationGuardNoticesLater: a background job's notice reaches
// its creator with the next statement, sent over the extended protocol
// (pgx's default) as over the simple one.
func TestAmplificationGuardNoticesLater(t *testing.T) {
	c, notices := guardedTable(t, 200)
	exec(t, c, "SET background_ddl = true")
	exec(t, c, "CREATE MATERIALIZED VIEW pairs AS SELECT a.v AS x, b.v AS y FROM t a JOIN t b ON a.k = b.k")
	deadline := time.Now().Add(20 * time.Second)
	for {
		var one int
		if err := c.QueryRow(context.Background(), "SELECT $1::int", 1).Scan(&one); err != nil {
			t.Fatal(err)
		}
		if len(notices()) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no notice with the statements after the background CREATE")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if got := notices(); !strings.Contains(got[0].Message, "pairs") {
		t.Fatalf("notice %+v", got[0])
	}
}

// TestAmplificationGuardPauseReleasesTheCreate: when the guard pauses a
// job whose foreground CREATE waits for its backfill, the CREATE returns
// with the WARNING instead of waiting for ever, and the job waits, paused,
// in SHOW JOBS. ALTER … SET (amplification_limit = 0) turns its guard off,
// and after RESUME it finishes, exact.
func TestAmplificationGuardPauseReleasesTheCreate(t *testing.T) {
	c, notices := guardedTable(t, 400)
	exec(t, c, "SET streaming_amplification_action = pause")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, err := c.Exec(ctx, "CREATE MATERIALIZED VIEW pairs AS SELECT a.v AS x, b.v AS y FROM t a JOIN t b ON a.k = b.k"); err != nil {
		t.Fatal(err)
	}
	got := notices()
	if len(got) != 1 || !strings.Contains(got[0].Detail, "paused") || !strings.Contains(got[0].Detail, "background") {
		t.Fatalf("notices: %+v", got)
	}
	if jobs := queryStrings(t, c, "SHOW JOBS"); len(jobs) != 1 || !strings.Contains(jobs[0], "pairs") {
		t.Fatalf("SHOW JOBS: %v", jobs)
	}
	// Turned off and resumed, the job finishes.
	exec(t, c, "ALTER MATERIALIZED VIEW pairs SET (amplification_limit = 0)")
	exec(t, c, "ALTER MATERIALIZED VIEW pairs RESUME")
	deadline := time.Now().Add(120 * time.Second)
	for len(queryStrings(t, c, "SHOW JOBS")) > 0 {
		if time.Now().After(deadline) {
			t.Fatal("pairs not created after RESUME")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if n := queryStrings(t, c, "SELECT count(*)::varchar FROM pairs"); n[0] != "160000" {
		t.Fatalf("pairs has %s rows, want 160000", n[0])
	}
	if _, err := c.Exec(context.Background(), "ALTER MATERIALIZED VIEW pairs SET (amplification_action = 'drop')"); err == nil ||
		!strings.Contains(err.Error(), "22023") {
		t.Errorf("a bad action: %v, want 22023", err)
	}
}

// guardedTable connects to a new playground, makes table t with rows
// (1, g) for g up to rows, and sets the session's amplification limit to
// 100; notices returns the notices the session received so far.
func guardedTable(t *testing.T, rows int) (c *pgx.Conn, notices func() []*pgconn.Notice) {
	t.Helper()
	var mu sync.Mutex
	var got []*pgconn.Notice
	c = connectWith(t, startPlayground(t), func(n *pgconn.Notice) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, n)
	})
	exec(t, c, "CREATE TABLE t (k int, v int)")
	exec(t, c, fmt.Sprintf("INSERT INTO t SELECT 1, g FROM generate_series(1, %d) AS g", rows))
	exec(t, c, "SET streaming_amplification_limit = 100")
	return c, func() []*pgconn.Notice {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(got)
	}
}
