package pgwire

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// TestLoginLimiter: ten failures within the window lock an address out
// until a window has passed since the last one; other addresses and a
// success are unaffected.
func TestLoginLimiter(t *testing.T) {
	now := time.Unix(1000, 0)
	l := &loginLimiter{now: func() time.Time { return now }}
	for i := range loginMaxFailures {
		if err := l.check("10.0.0.1"); err != nil {
			t.Fatalf("locked out after %d failures: %v", i, err)
		}
		l.failed("10.0.0.1")
		now = now.Add(time.Second)
	}
	err := l.check("10.0.0.1")
	if err == nil || !strings.Contains(err.Error(), "try again in 60 s") {
		t.Fatalf("after %d failures: %v", loginMaxFailures, err)
	}
	if err := l.check("10.0.0.2"); err != nil {
		t.Fatalf("another address: %v", err)
	}
	now = now.Add(loginWindow)
	if err := l.check("10.0.0.1"); err != nil {
		t.Fatalf("after the window: %v", err)
	}
	l.failed("10.0.0.3")
	l.succeeded("10.0.0.3")
	if f := l.failures["10.0.0.3"]; f != nil {
		t.Fatalf("a success left %d failures counted", f.n)
	}
}

// TestLoginRateLimit: after ten wrong passwords from one address even the
// right one is refused for a while (28000), and each failure was answered
// only after the delay.
func TestLoginRateLimit(t *testing.T) {
	ts := startServer(t, &fakeHandler{}, Config{Users: map[string]string{"root": "right"}})
	ctx := context.Background()
	start := time.Now()
	for range loginMaxFailures {
		_, err := pgx.Connect(ctx, ts.url("root", "wrong"))
		wantPgError(t, err, "28P01")
	}
	if took := time.Since(start); took < loginMaxFailures*loginFailDelay {
		t.Errorf("%d failures answered in %v", loginMaxFailures, took)
	}
	_, err := pgx.Connect(ctx, ts.url("root", "right"))
	if pe := wantPgError(t, err, "28000"); !strings.Contains(pe.Message, "too many failed login attempts") {
		t.Errorf("message %q", pe.Message)
	}
}
