package pgwire

import (
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"
)

// TestClientGoneCancelsStatement: a client that closes its connection
// while a statement runs cancels it, although the statement neither reads
// nor writes (a long count over a join ran on for minutes).
func TestClientGoneCancelsStatement(t *testing.T) {
	h := &fakeHandler{sleeping: make(chan struct{}), woke: make(chan error, 1)}
	ts := startServer(t, h, Config{})
	c := dialRaw(t, ts.addr).startup()
	c.send(&pgproto3.Query{String: "sleep"})
	<-h.sleeping
	_ = c.nc.Close()
	select {
	case cause := <-h.woke:
		if !errors.Is(cause, errClientGone) {
			t.Errorf("statement cancelled by %v, want the client's leaving", cause)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the statement still runs 10 s after its client left")
	}
}

// TestWatchKeepsPipelinedMessages: a message a client sends while a
// statement runs is read by the watcher, does not cancel the statement,
// and is served in order after it.
func TestWatchKeepsPipelinedMessages(t *testing.T) {
	h := &fakeHandler{sleeping: make(chan struct{}), woke: make(chan error, 1)}
	ts := startServer(t, h, Config{})
	c := dialRaw(t, ts.addr)
	c.send(&pgproto3.StartupMessage{ProtocolVersion: pgproto3.ProtocolVersion30,
		Parameters: map[string]string{"user": "root", "database": "dev"}})
	var key *pgproto3.BackendKeyData
	for {
		msg, err := c.fe.Receive()
		if err != nil {
			t.Fatal(err)
		}
		if k, ok := msg.(*pgproto3.BackendKeyData); ok {
			key = &pgproto3.BackendKeyData{ProcessID: k.ProcessID, SecretKey: append([]byte{}, k.SecretKey...)}
		}
		if _, ok := msg.(*pgproto3.ReadyForQuery); ok {
			break
		}
	}
	c.send(&pgproto3.Query{String: "sleep"})
	<-h.sleeping
	c.send(&pgproto3.Query{String: "select 3"})
	time.Sleep(50 * time.Millisecond) // the watcher reads it meanwhile
	select {
	case cause := <-h.woke:
		t.Fatalf("a pipelined message cancelled the statement: %v", cause)
	default:
	}
	dialRaw(t, ts.addr).send(&pgproto3.CancelRequest{ProcessID: key.ProcessID, SecretKey: key.SecretKey})
	if cause := <-h.woke; !errors.Is(cause, errCancelRequest) {
		t.Fatalf("sleep ended by %v", cause)
	}
	for _, want := range []string{"Error(ERROR 57014)", "ReadyForQuery(I)", "RowDescription", "DataRow",
		"CommandComplete", "ReadyForQuery(I)"} {
		if got := c.recvName(); len(got) < len(want) || got[:len(want)] != want {
			t.Fatalf("got %s, want %s", got, want)
		}
	}
}
