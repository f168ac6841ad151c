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

	"github.com/sluice-db/sluice/internal/sqlerr"
	"github.com/sluice-db/sluice/internal/types"
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

// FuzzStartup: whatever a client sends before it is a session (startup
// packet, SSL and cancel requests, a SCRAM exchange), the server answers
// or hangs up, never panics or hangs; and it serves afterwards.
func FuzzStartup(f *testing.F) {
	startup, _ := (&pgproto3.StartupMessage{ProtocolVersion: pgproto3.ProtocolVersion30,
		Parameters: map[string]string{"user": "root", "database": "dev", "options": "-c search_path=x"}}).Encode(nil)
	ssl, _ := (&pgproto3.SSLRequest{}).Encode(nil)
	cancel, _ := (&pgproto3.CancelRequest{ProcessID: 1, SecretKey: []byte{1, 2, 3, 4}}).Encode(nil)
	f.Add(startup, false)
	f.Add(append(ssl, startup...), true)
	f.Add(cancel, false)
	f.Add([]byte{0, 0, 0, 8, 0, 3, 0, 0}, true)
	ts := startServer(f, &fakeHandler{}, Config{Users: map[string]string{"root": "pw"}})
	f.Fuzz(func(t *testing.T, data []byte, half bool) {
		nc, err := net.Dial("tcp", ts.addr)
		if err != nil {
			t.Fatal(err)
		}
		defer nc.Close()
		_ = nc.SetDeadline(time.Now().Add(10 * time.Second))
		if _, err := nc.Write(data); err != nil {
			return
		}
		if half {
			_ = nc.(*net.TCPConn).CloseWrite()
			if _, err := io.Copy(io.Discard, nc); err != nil && !strings.Contains(err.Error(), "reset") {
				t.Fatalf("server did not close the connection: %v", err)
			}
		}
		if strings.Contains(ts.log.String(), "panic") {
			t.Fatalf("panic:\n%s", ts.log.String())
		}
	})
}

// FuzzCopyText: COPY text input of any bytes decodes to rows or errors
// and ends, for columns of several types.
func FuzzCopyText(f *testing.F) {
	f.Add("1\tabc\t2.5\t2024-01-02\tt\n\\N\t\\\\N\t-0\t\\N\tf\n\\.\n")
	f.Add("1\ta\\tb\\x41\\102\t1e5\tinfinity\ton\r\n2\n")
	f.Add("\t\t\t\t\n9999999999\t\\0\tNaN\t0001-01-01 BC\tmaybe\n")
	ts := []types.Type{types.TInt32, types.TVarchar, types.TDecimal, types.TDate, types.TBool}
	f.Fuzz(func(t *testing.T, in string) {
		d := NewCopyTextDecoder(strings.NewReader(in))
		for range len(in) + 2 { // each row consumes at least a byte, or ends
			row, err := d.DecodeRow(ts)
			if err == io.EOF {
				return
			}
			if err == nil && len(row) != len(ts) {
				t.Fatalf("row of %d values for %d columns", len(row), len(ts))
			}
			if err != nil {
				if _, ok := sqlerr.As(err); !ok {
					t.Fatalf("error without SQLSTATE: %v", err)
				}
				return
			}
		}
		t.Fatalf("decoder did not end on %q", in)
	})
}
