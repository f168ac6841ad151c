package session

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/sluice-db/sluice/internal/engine"
)

// lockedBuffer collects a log written from many goroutines.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// validSessions are message streams a real client sends after startup:
// simple queries, the extended protocol, COPY, a transaction block.
func validSessions() [][]pgproto3.FrontendMessage {
	return [][]pgproto3.FrontendMessage{
		{&pgproto3.Query{String: "SELECT id, v FROM h WHERE id < 3 ORDER BY id; SELECT count(*) FROM hv"}},
		{&pgproto3.Parse{Name: "p", Query: "INSERT INTO h VALUES ($1, $2) ON CONFLICT (id) DO UPDATE SET v = excluded.v"},
			&pgproto3.Bind{PreparedStatement: "p", Parameters: [][]byte{[]byte("7"), []byte("seven")}},
			&pgproto3.Execute{}, &pgproto3.Sync{}},
		{&pgproto3.Parse{Query: "SELECT v FROM h WHERE id = $1", ParameterOIDs: []uint32{23}},
			&pgproto3.Bind{ParameterFormatCodes: []int16{1}, Parameters: [][]byte{{0, 0, 0, 1}}, ResultFormatCodes: []int16{1}},
			&pgproto3.Describe{ObjectType: 'P'}, &pgproto3.Execute{MaxRows: 1}, &pgproto3.Sync{}},
		{&pgproto3.Query{String: "COPY h FROM STDIN"}, &pgproto3.CopyData{Data: []byte("100\ta\n101\tb\n")},
			&pgproto3.CopyDone{}},
		{&pgproto3.Query{String: "BEGIN"}, &pgproto3.Query{String: "UPDATE h SET v = v || '!' WHERE id = 1"},
			&pgproto3.Query{String: "ROLLBACK"}},
		{&pgproto3.Query{String: "CREATE MATERIALIZED VIEW IF NOT EXISTS hv2 AS SELECT v, count(*) FROM h GROUP BY v; DROP MATERIALIZED VIEW hv2"}},
	}
}

// mutate damages an encoded session: flipped and random bytes, a cut, a
// repeated or dropped stretch, or a lying length.
func mutate(r *rand.Rand, b []byte) []byte {
	b = slices.Clone(b)
	for n := r.IntN(3) + 1; n > 0 && len(b) > 0; n-- {
		i := r.IntN(len(b))
		switch r.IntN(6) {
		case 0:
			b[i] ^= byte(1 << r.IntN(8))
		case 1:
			b[i] = byte(r.IntN(256))
		case 2:
			b = b[:i]
		case 3:
			j := min(len(b), i+r.IntN(16)+1)
			b = slices.Concat(b[:j], b[i:j], b[j:])
		case 4:
			j := min(len(b), i+r.IntN(16)+1)
			b = slices.Concat(b[:i], b[j:])
		case 5:
			if i+4 <= len(b) {
				copy(b[i:], []byte{0x7f, byte(r.IntN(256)), 0, 0})
			}
		}
	}
	return b
}

// TestHostileSessions sends damaged versions of valid sessions to a real
// server over raw sockets. After every one the server must still answer a
// fresh SELECT 1, and no connection may have panicked.
func TestHostileSessions(t *testing.T) {
	log := &lockedBuffer{}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	p, err := StartPlayground(ctx, engine.Options{BarrierInterval: 5 * time.Millisecond, Parallelism: 2},
		Config{Logger: slog.New(slog.NewTextHandler(log, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	c := connect(t, p)
	exec(t, c, "CREATE TABLE h (id int PRIMARY KEY, v text)")
	exec(t, c, "INSERT INTO h VALUES (1, 'one'), (2, 'two')")
	exec(t, c, "CREATE MATERIALIZED VIEW hv AS SELECT v, count(*) FROM h GROUP BY v")
	var encoded [][]byte
	for _, msgs := range validSessions() {
		var b []byte
		for _, m := range msgs {
			if b, err = m.Encode(b); err != nil {
				t.Fatal(err)
			}
		}
		encoded = append(encoded, b)
	}
	terminate, _ := (&pgproto3.Terminate{}).Encode(nil)
	for i, b := range encoded { // undamaged, every session succeeds
		if errs := feedSession(t, p.Server.Addr(), slices.Concat(b, terminate), false); len(errs) > 0 {
			t.Fatalf("valid session %d failed: %q", i, errs)
		}
	}
	r := rand.New(rand.NewPCG(9, 9))
	for i := range 300 {
		feedSession(t, p.Server.Addr(), mutate(r, encoded[i%len(encoded)]), true)
		if i%10 == 9 {
			if got := queryStrings(t, connect(t, p), "SELECT 1"); !slices.Equal(got, []string{"1"}) {
				t.Fatalf("after case %d: SELECT 1 = %q", i, got)
			}
		}
	}
	if strings.Contains(log.String(), "panic") {
		t.Fatalf("a connection panicked:\n%s", log.String())
	}
}

// feedSession starts a session on a raw socket, sends data, half-closes
// if asked (the server takes that for a client gone and cancels what
// runs, as Postgres does when it checks the connection) and reads until
// the server hangs up (or 10 s pass: a hang fails). It returns the
// errors the server reported.
func feedSession(t *testing.T, addr string, data []byte, halfClose bool) (errs []string) {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	_ = nc.SetDeadline(time.Now().Add(10 * time.Second))
	fe := pgproto3.NewFrontend(nc, nc)
	fe.Send(&pgproto3.StartupMessage{ProtocolVersion: pgproto3.ProtocolVersion30,
		Parameters: map[string]string{"user": "root", "database": "dev"}})
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
		return nil
	}
	if halfClose {
		_ = nc.(*net.TCPConn).CloseWrite()
	}
	for {
		msg, err := fe.Receive()
		switch {
		case err != nil && (errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
			strings.Contains(err.Error(), "unexpected EOF") || strings.Contains(err.Error(), "reset")):
			return errs
		case err != nil && strings.Contains(err.Error(), "timeout"):
			t.Fatalf("the server neither answered nor hung up (sent %q)", data)
		case err != nil:
			return append(errs, err.Error()) // a frame the client cannot decode
		}
		if e, ok := msg.(*pgproto3.ErrorResponse); ok {
			errs = append(errs, e.Code+" "+e.Message)
		}
	}
}

// TestPortalFetchInBlock: a cursor-style fetch (Execute with a row limit
// inside a transaction block, as JDBC's fetchSize does) against the real
// session returns every row in order while other statements run between
// fetches (the parked portal is settled first, so the session serves one
// statement at a time).
func TestPortalFetchInBlock(t *testing.T) {
	p := startPlayground(t)
	c := connect(t, p)
	exec(t, c, "CREATE TABLE f (id int PRIMARY KEY)")
	exec(t, c, "INSERT INTO f SELECT g FROM generate_series(1, 5000) g")
	nc, err := net.Dial("tcp", p.Server.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	_ = nc.SetDeadline(time.Now().Add(30 * time.Second))
	fe := pgproto3.NewFrontend(nc, nc)
	recv := func() pgproto3.BackendMessage {
		t.Helper()
		msg, err := fe.Receive()
		if err != nil {
			t.Fatal(err)
		}
		if e, ok := msg.(*pgproto3.ErrorResponse); ok {
			t.Fatalf("server error %s: %s", e.Code, e.Message)
		}
		return msg
	}
	untilReady := func() (rows []string) {
		t.Helper()
		for {
			switch m := recv().(type) {
			case *pgproto3.DataRow:
				rows = append(rows, string(m.Values[0]))
			case *pgproto3.ReadyForQuery:
				return rows
			}
		}
	}
	send := func(msgs ...pgproto3.FrontendMessage) {
		for _, m := range msgs {
			fe.Send(m)
		}
		if err := fe.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	send(&pgproto3.StartupMessage{ProtocolVersion: pgproto3.ProtocolVersion30,
		Parameters: map[string]string{"user": "root", "database": "dev"}})
	untilReady()
	send(&pgproto3.Query{String: "BEGIN"})
	untilReady()
	send(&pgproto3.Parse{Name: "q", Query: "SELECT id FROM f"},
		&pgproto3.Bind{PreparedStatement: "q", DestinationPortal: "cur"})
	var got []string
	for i := 0; ; i++ {
		send(&pgproto3.Execute{Portal: "cur", MaxRows: 700}, &pgproto3.Sync{})
		rows := untilReady()
		got = append(got, rows...)
		if len(rows) < 700 {
			break
		}
		if i == 0 { // other sessions write while the portal is parked
			exec(t, c, "INSERT INTO f VALUES (10001)")
			exec(t, c, "DELETE FROM f WHERE id = 10001")
		}
		if i%2 == 0 { // another statement between fetches
			send(&pgproto3.Query{String: "SELECT count(*) FROM f WHERE id > 100"})
			if n := untilReady(); len(n) != 1 || n[0] != "4900" {
				t.Fatalf("count between fetches: %q", n)
			}
		}
	}
	if len(got) != 5000 {
		t.Fatalf("fetched %d rows, want 5000", len(got))
	}
	seen := map[string]bool{}
	for _, r := range got {
		if seen[r] {
			t.Fatalf("row %s fetched twice", r)
		}
		seen[r] = true
	}
	send(&pgproto3.Query{String: "COMMIT"})
	untilReady()
}
