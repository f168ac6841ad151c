package pgwire

import (
	"encoding/binary"
	"io"
	"math/rand/v2"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgproto3"
)

// feedAfterStartup sends data on a fresh, started connection, half-closes
// it and reads until the server hangs up. The server must neither hang
// nor panic, whatever data holds.
func feedAfterStartup(t testing.TB, addr string, data []byte) {
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	_ = nc.SetDeadline(time.Now().Add(10 * time.Second))
	fe := pgproto3.NewFrontend(nc, nc)
	fe.Send(&pgproto3.StartupMessage{ProtocolVersion: pgproto3.ProtocolVersion30,
		Parameters: map[string]string{"user": "root"}})
	if err := fe.Flush(); err != nil {
		t.Fatal(err)
	}
	for {
		msg, err := fe.Receive()
		if err != nil {
			t.Fatalf("startup: %v", err)
		}
		if _, ok := msg.(*pgproto3.ReadyForQuery); ok {
			break
		}
	}
	if _, err := nc.Write(data); err != nil {
		return // the server already gave up on us: fine
	}
	_ = nc.(*net.TCPConn).CloseWrite()
	if _, err := io.Copy(io.Discard, nc); err != nil && !strings.Contains(err.Error(), "reset") {
		t.Fatalf("server did not close the connection: %v", err)
	}
}

// randomMessages builds a stream of frames with real message types and
// random bodies, sometimes with a lying length, after a valid Parse so
// that Bind and Execute find something to work on.
func randomMessages(r *rand.Rand) []byte {
	out, _ := (&pgproto3.Parse{Name: "s", Query: "echo int4, numeric, bytea"}).Encode(nil)
	const types = "BCDEFHPQSXdcfp"
	for n := r.IntN(8) + 1; n > 0; n-- {
		body := make([]byte, r.IntN(48))
		for i := range body {
			body[i] = byte(r.IntN(256))
			if r.IntN(4) == 0 {
				body[i] = byte(r.IntN(3)) // zeros and small counts parse further
			}
		}
		msg := frame(types[r.IntN(len(types))], body)
		if r.IntN(10) == 0 {
			binary.BigEndian.PutUint32(msg[1:], r.Uint32())
		}
		out = append(out, msg...)
	}
	if r.IntN(3) == 0 {
		junk := make([]byte, r.IntN(32))
		for i := range junk {
			junk[i] = byte(r.IntN(256))
		}
		out = append(out, junk...)
	}
	return out
}

func TestMessageLoopRandomBytes(t *testing.T) {
	ts := startServer(t, &fakeHandler{}, Config{MaxMessageSize: 1 << 20})
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 300; i++ {
		feedAfterStartup(t, ts.addr, randomMessages(r))
	}
	if log := ts.log.String(); strings.Contains(log, "panic") {
		t.Fatalf("the message loop panicked:\n%s", log)
	}
	conn := ts.connect(t, pgx.QueryExecModeCacheStatement)
	var n int32
	if err := conn.QueryRow(testCtx(t), "select 9").Scan(&n); err != nil || n != 9 {
		t.Fatalf("server unusable after fuzzing: %v", err)
	}
}

// FuzzMessageLoop runs its seeds with go test; run it for longer with
// go test -fuzz FuzzMessageLoop ./internal/pgwire/.
func FuzzMessageLoop(f *testing.F) {
	r := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < 8; i++ {
		f.Add(randomMessages(r))
	}
	bind, _ := (&pgproto3.Bind{PreparedStatement: "s", ParameterFormatCodes: []int16{1},
		Parameters: [][]byte{{0, 0, 0, 1}, {0, 1, 0, 0, 0x40, 0, 0, 2, 0, 5}, nil}}).Encode(nil)
	exec, _ := (&pgproto3.Execute{}).Encode(nil)
	f.Add(append(bind, exec...))
	f.Fuzz(func(t *testing.T, data []byte) {
		ts := startServer(t, &fakeHandler{}, Config{MaxMessageSize: 1 << 20})
		parse, _ := (&pgproto3.Parse{Name: "s", Query: "echo int4, numeric, bytea"}).Encode(nil)
		feedAfterStartup(t, ts.addr, append(parse, data...))
		if strings.Contains(ts.log.String(), "panic") {
			t.Fatalf("panic:\n%s", ts.log.String())
		}
	})
}
