package pgwire

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// connectAs opens a connection as user, returning the error.
func (ts *testServer) connectAs(t *testing.T, user string) (*pgx.Conn, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, ts.url(user, ""))
	if err == nil {
		t.Cleanup(func() { c.Close(context.Background()) })
	}
	return c, err
}

// TestMaxConnections: past max_connections a session is refused with
// 53300, and the reserved slots are kept for superusers; a slot freed by
// a closed connection can be taken again.
func TestMaxConnections(t *testing.T) {
	ts := startServer(t, &fakeHandler{}, Config{MaxConnections: 5, ReservedConnections: 2,
		Superuser: func(u string) bool { return u == "root" }})
	var alices []*pgx.Conn
	for range 3 {
		c, err := ts.connectAs(t, "alice")
		if err != nil {
			t.Fatal(err)
		}
		alices = append(alices, c)
	}
	_, err := ts.connectAs(t, "alice")
	if pe := wantPgError(t, err, "53300"); !strings.Contains(pe.Message, "reserved") {
		t.Errorf("message %q does not say the slots are reserved", pe.Message)
	}
	for range 2 {
		if _, err := ts.connectAs(t, "root"); err != nil {
			t.Fatalf("superuser in a reserved slot: %v", err)
		}
	}
	_, err = ts.connectAs(t, "root")
	if pe := wantPgError(t, err, "53300"); pe.Message != "sorry, too many clients already" {
		t.Errorf("message %q", pe.Message)
	}
	// Freeing a slot lets a superuser in again (once the server has seen
	// the close).
	alices[0].Close(context.Background())
	deadline := time.Now().Add(5 * time.Second)
	for {
		_, err := ts.connectAs(t, "root")
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("slot not freed: %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// emfileListener fails its first n Accepts as a listener out of file
// descriptors does.
type emfileListener struct {
	net.Listener
	n atomic.Int32
}

func (l *emfileListener) Accept() (net.Conn, error) {
	if l.n.Add(-1) >= 0 {
		return nil, &net.OpError{Op: "accept", Net: "tcp", Err: os.NewSyscallError("accept4", syscall.EMFILE)}
	}
	return l.Listener.Accept()
}

// TestAcceptSurvivesEMFILE: an Accept that fails (out of file descriptors)
// is retried after a back-off; the listener used to stop for good.
func TestAcceptSurvivesEMFILE(t *testing.T) {
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln := &emfileListener{Listener: inner}
	ln.n.Store(6)
	logBuf := &syncBuffer{}
	srv, err := NewServer(&fakeHandler{}, Config{Logger: newTestLogger(logBuf)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	ts := &testServer{addr: inner.Addr().String()}
	c, err := ts.connectAs(t, "root")
	if err != nil {
		t.Fatalf("connect after accept failures: %v", err)
	}
	var one int
	if err := c.QueryRow(context.Background(), "select 1").Scan(&one); err != nil {
		t.Fatal(err)
	}
	c.Close(context.Background())
	if got := strings.Count(logBuf.String(), "accept failed"); got != 6 {
		t.Errorf("%d accept failures logged, want 6:\n%s", got, logBuf)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Serve after cancel: %v", err)
	}
}

// TestServeReturnsWhenListenerCloses: a closed listener (not a transient
// failure) ends Serve with an error instead of a retry loop.
func TestServeReturnsWhenListenerCloses(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv, err := NewServer(&fakeHandler{}, Config{})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(context.Background(), ln) }()
	time.Sleep(10 * time.Millisecond)
	_ = ln.Close()
	select {
	case err := <-done:
		if !errors.Is(err, net.ErrClosed) {
			t.Errorf("Serve: %v, want the closed listener's error", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal(fmt.Errorf("Serve did not return after its listener closed"))
	}
}
