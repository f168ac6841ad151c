package session

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// TestDeepStatementKeepsServerUp: a statement too deep to parse safely
// (30 000 terms of 1+1+…, which overflowed the C parser's stack and killed
// the server) gets 54001, and the connection and server go on serving.
func TestDeepStatementKeepsServerUp(t *testing.T) {
	p := startPlayground(t)
	c := connect(t, p)
	deep := "SELECT " + strings.Repeat("1+", 29999) + "1"
	pe := wantCode(t, c, deep, "54001")
	if pe.Position != 1 {
		t.Errorf("position %d, want 1", pe.Position)
	}
	wantCode(t, c, "SELECT "+strings.Repeat("(", 20000)+"1"+strings.Repeat(")", 20000), "54001")
	if got := queryStrings(t, c, "SELECT 1 + 1"); !slices.Equal(got, []string{"2"}) {
		t.Fatalf("after the deep statement: %q", got)
	}
	// A long but shallow chain still runs: 2 000 UNION ALL operands.
	union := strings.Repeat("SELECT 1 UNION ALL ", 1999) + "SELECT 1"
	if got := queryStrings(t, connect(t, p), "SELECT count(*) FROM ("+union+") u"); !slices.Equal(got, []string{"2000"}) {
		t.Fatalf("union of 2000: %q", got)
	}
}

// TestLongMultiStatementCancels: a Query of 200 000 statements is parsed a
// batch at a time and run one statement at a time, and a cancel request
// stops it there (a cancel used to wait for the whole text to be parsed,
// which was quadratic: 40 000 statements took 52 s).
func TestLongMultiStatementCancels(t *testing.T) {
	p := startPlayground(t)
	c := connect(t, p)
	ctx := context.Background()
	done := make(chan error, 1)
	go func() {
		_, err := c.Exec(ctx, strings.Repeat("select 1::int;", 200000))
		done <- err
	}()
	time.Sleep(100 * time.Millisecond)
	if err := c.PgConn().CancelRequest(ctx); err != nil {
		t.Fatal(err)
	}
	err := <-done
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != "57014" {
		t.Fatalf("got %v, want 57014", err)
	}
	if got := queryStrings(t, c, "SELECT 2"); !slices.Equal(got, []string{"2"}) {
		t.Fatalf("after the cancel: %q", got)
	}
}

// TestConnectionLimitsShown: SHOW reports the server's connection limits,
// which a session cannot change.
func TestConnectionLimitsShown(t *testing.T) {
	p := startPlayground(t)
	c := connect(t, p)
	if got := queryStrings(t, c, "SHOW max_connections"); !slices.Equal(got, []string{"100"}) {
		t.Errorf("max_connections = %q", got)
	}
	if got := queryStrings(t, c, "SHOW superuser_reserved_connections"); !slices.Equal(got, []string{"3"}) {
		t.Errorf("superuser_reserved_connections = %q", got)
	}
	wantCode(t, c, "SET max_connections = 5", "55P02")
}
