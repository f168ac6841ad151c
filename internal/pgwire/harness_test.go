package pgwire

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// syncBuffer collects the server's log for assertions.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// newTestLogger logs everything, as text, to buf.
func newTestLogger(buf *syncBuffer) *slog.Logger {
	return slog.New(slog.NewTextHandler(buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

type testServer struct {
	addr string
	port int
	h    *fakeHandler
	log  *syncBuffer
	stop func() error // shuts the server down and returns Serve's error
}

// startServer runs a Server over h on a loopback port until the test ends.
// Unless the test expects one, a panic in a connection fails the test.
func startServer(t testing.TB, h *fakeHandler, cfg Config) *testServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	logBuf := &syncBuffer{}
	cfg.Logger = newTestLogger(logBuf)
	srv, err := NewServer(h, cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	var once sync.Once
	var serveErr error
	ts := &testServer{addr: ln.Addr().String(), port: ln.Addr().(*net.TCPAddr).Port, h: h, log: logBuf}
	ts.stop = func() error {
		once.Do(func() {
			cancel()
			select {
			case serveErr = <-done:
			case <-time.After(10 * time.Second):
				serveErr = errors.New("Serve did not return within 10s of cancel")
			}
		})
		return serveErr
	}
	t.Cleanup(func() {
		if err := ts.stop(); err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return ts
}

func (ts *testServer) url(user, password string) string {
	auth := user
	if password != "" {
		auth += ":" + password
	}
	return fmt.Sprintf("postgres://%s@%s/dev?sslmode=disable&connect_timeout=5", auth, ts.addr)
}

func (ts *testServer) connect(t *testing.T, mode pgx.QueryExecMode) *pgx.Conn {
	t.Helper()
	cfg, err := pgx.ParseConfig(ts.url("root", ""))
	if err != nil {
		t.Fatal(err)
	}
	cfg.DefaultQueryExecMode = mode
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// wantPgError checks that err is a server error with the given SQLSTATE.
func wantPgError(t *testing.T, err error, code string) *pgconn.PgError {
	t.Helper()
	var pe *pgconn.PgError
	if !errors.As(err, &pe) {
		t.Fatalf("want server error %s, got %v", code, err)
	}
	if pe.Code != code {
		t.Fatalf("want SQLSTATE %s, got %s (%s)", code, pe.Code, pe.Message)
	}
	return pe
}

// bothModes runs f with the extended protocol (pgx's default, binary
// results where pgx knows the type) and with the simple protocol (text).
func bothModes(t *testing.T, f func(t *testing.T, mode pgx.QueryExecMode)) {
	for _, mode := range []pgx.QueryExecMode{pgx.QueryExecModeCacheStatement, pgx.QueryExecModeSimpleProtocol} {
		t.Run(strings.ReplaceAll(mode.String(), " ", "_"), func(t *testing.T) { f(t, mode) })
	}
}
