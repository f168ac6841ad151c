package session

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5/pgconn"
)

// TestStatActivityCancelTerminate: pg_stat_activity shows every session
// with its state and statement; pg_cancel_backend stops another session's
// statement (57014) and pg_terminate_backend ends another session, busy or
// idle in a transaction block; an unknown pid gives false.
func TestStatActivityCancelTerminate(t *testing.T) {
	p := startPlayground(t)
	admin, busy := connect(t, p), connect(t, p)
	ctx := context.Background()
	busyPid := queryStrings(t, busy, "SELECT pg_backend_pid()")[0]
	done := make(chan error, 1)
	go func() {
		_, err := busy.Exec(ctx, "SELECT count(*) FROM generate_series(1, 100000) a, generate_series(1, 100000) b")
		done <- err
	}()
	waitFor(t, func() bool {
		got := queryStrings(t, admin, "SELECT state, query FROM pg_stat_activity WHERE pid = "+busyPid)
		return len(got) == 1 && strings.HasPrefix(got[0], "active SELECT count(*)")
	})
	if got := queryStrings(t, admin, "SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE query LIKE '%generate_series%' AND pid <> pg_backend_pid()"); !slices.Equal(got, []string{"t"}) {
		t.Fatalf("pg_cancel_backend = %q", got)
	}
	var pe *pgconn.PgError
	if err := <-done; !errors.As(err, &pe) || pe.Code != "57014" {
		t.Fatalf("cancelled statement: %v", err)
	}

	exec(t, busy, "BEGIN")
	exec(t, busy, "SELECT 1")
	if got := queryStrings(t, admin, "SELECT state, xact_start IS NOT NULL FROM pg_stat_activity WHERE pid = "+busyPid); !slices.Equal(got, []string{"idle in transaction t"}) {
		t.Fatalf("block state = %q", got)
	}
	if got := queryStrings(t, admin, "SELECT pg_terminate_backend("+busyPid+"), pg_cancel_backend(7), pg_terminate_backend(7)"); !slices.Equal(got, []string{"t f f"}) {
		t.Fatalf("pg_terminate_backend = %q", got)
	}
	// The end is asynchronous, as in Postgres: a statement sent before
	// the session has seen it may still run (under -race on two cores it
	// did); the next one gets the FATAL.
	var err error
	waitFor(t, func() bool { _, err = busy.Exec(ctx, "SELECT 1"); return err != nil })
	if !errors.As(err, &pe) || pe.Code != "57P01" {
		t.Fatalf("a terminated session: %v, want FATAL 57P01", err)
	}
	waitFor(t, func() bool {
		return slices.Equal(queryStrings(t, admin, "SELECT count(*) FROM pg_stat_activity WHERE pid = "+busyPid), []string{"0"})
	})
}

// TestIdleInTransactionTimeout: a session idle inside a transaction block
// longer than idle_in_transaction_session_timeout is ended (25P03); idle
// outside one, it is not.
func TestIdleInTransactionTimeout(t *testing.T) {
	p := startPlayground(t)
	c := connect(t, p)
	exec(t, c, "SET idle_in_transaction_session_timeout = 50")
	time.Sleep(120 * time.Millisecond)
	exec(t, c, "BEGIN")
	time.Sleep(200 * time.Millisecond)
	var pe *pgconn.PgError
	if _, err := c.Exec(context.Background(), "SELECT 1"); !errors.As(err, &pe) || pe.Code != "25P03" {
		t.Fatalf("a session idle in a block past the timeout: %v, want FATAL 25P03", err)
	}
	if !c.IsClosed() {
		t.Error("the connection is still open")
	}
}

// waitFor polls cond for up to 10 s.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 10 s")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestActivityQueryBounded: pg_stat_activity keeps at most 1 KB of a
// statement's text, cut on a character boundary.
func TestActivityQueryBounded(t *testing.T) {
	act := &activity{}
	act.begin("SELECT '"+strings.Repeat("é", 2000)+"'", time.Now())
	if len(act.query) > activityQueryBytes || !utf8.ValidString(act.query) || !strings.HasPrefix(act.query, "SELECT 'é") {
		t.Fatalf("kept %d bytes, valid %v", len(act.query), utf8.ValidString(act.query))
	}
}
