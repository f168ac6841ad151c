package pgwire

import (
	"encoding/binary"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"
)

// rawClient speaks the protocol message by message, to check exact
// message sequences that drivers hide.
type rawClient struct {
	t  *testing.T
	nc net.Conn
	fe *pgproto3.Frontend
}

func dialRaw(t *testing.T, addr string) *rawClient {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	_ = nc.SetDeadline(time.Now().Add(10 * time.Second))
	return &rawClient{t: t, nc: nc, fe: pgproto3.NewFrontend(nc, nc)}
}

// startup sends a 3.0 startup message and reads up to ReadyForQuery.
func (c *rawClient) startup() *rawClient {
	c.t.Helper()
	c.send(&pgproto3.StartupMessage{ProtocolVersion: pgproto3.ProtocolVersion30,
		Parameters: map[string]string{"user": "root", "database": "dev"}})
	c.expect("AuthenticationOk")
	for {
		if trace := c.recvName(); trace == "ReadyForQuery(I)" {
			return c
		}
	}
}

func (c *rawClient) send(msgs ...pgproto3.FrontendMessage) {
	c.t.Helper()
	for _, m := range msgs {
		c.fe.Send(m)
	}
	if err := c.fe.Flush(); err != nil {
		c.t.Fatal(err)
	}
}

// recvName reads one message and names it, with the detail tests match.
func (c *rawClient) recvName() string {
	c.t.Helper()
	msg, err := c.fe.Receive()
	if err != nil {
		c.t.Fatalf("receive: %v", err)
	}
	return msgName(msg)
}

func msgName(msg pgproto3.BackendMessage) string {
	switch m := msg.(type) {
	case *pgproto3.ReadyForQuery:
		return fmt.Sprintf("ReadyForQuery(%c)", m.TxStatus)
	case *pgproto3.ErrorResponse:
		return fmt.Sprintf("Error(%s %s)", m.Severity, m.Code)
	case *pgproto3.DataRow:
		vals := make([]string, len(m.Values))
		for i, v := range m.Values {
			vals[i] = string(v)
		}
		return "DataRow(" + strings.Join(vals, ",") + ")"
	case *pgproto3.CommandComplete:
		return "CommandComplete(" + string(m.CommandTag) + ")"
	case *pgproto3.ParameterDescription:
		return fmt.Sprintf("ParameterDescription%v", m.ParameterOIDs)
	case *pgproto3.RowDescription:
		parts := make([]string, len(m.Fields))
		for i, f := range m.Fields {
			parts[i] = fmt.Sprintf("%s:%d/%d", f.Name, f.DataTypeOID, f.Format)
		}
		return "RowDescription(" + strings.Join(parts, ",") + ")"
	case *pgproto3.NegotiateProtocolVersion:
		return fmt.Sprintf("NegotiateProtocolVersion(%d)", m.NewestMinorProtocol)
	}
	return strings.TrimPrefix(fmt.Sprintf("%T", msg), "*pgproto3.")
}

// expect reads messages and checks their names in order.
func (c *rawClient) expect(names ...string) {
	c.t.Helper()
	for _, want := range names {
		if got := c.recvName(); got != want {
			c.t.Fatalf("got %s, want %s", got, want)
		}
	}
}

// TestExtendedErrorSkipsUntilSync: after an error, Postgres discards the
// rest of the pipelined batch until Sync, then serves the next one.
func TestExtendedErrorSkipsUntilSync(t *testing.T) {
	ts := startServer(t, &fakeHandler{}, Config{})
	c := dialRaw(t, ts.addr).startup()
	c.send(
		&pgproto3.Parse{Query: "bad"},
		&pgproto3.Bind{},
		&pgproto3.Describe{ObjectType: 'P'},
		&pgproto3.Execute{},
		&pgproto3.Parse{Name: "s1", Query: "select 1"}, // skipped, so s1 stays free
		&pgproto3.Sync{},
	)
	c.expect("Error(ERROR 42601)", "ReadyForQuery(I)")
	c.send(
		&pgproto3.Parse{Name: "s1", Query: "select 5"},
		&pgproto3.Bind{PreparedStatement: "s1", Parameters: [][]byte{[]byte("1")}}, // one too many
		&pgproto3.Execute{},
		&pgproto3.Sync{},
	)
	c.expect("ParseComplete", "Error(ERROR 08P01)", "ReadyForQuery(I)")
	c.send(
		&pgproto3.Bind{PreparedStatement: "s1"},
		&pgproto3.Execute{},
		&pgproto3.Bind{PreparedStatement: "nope"},
		&pgproto3.Execute{},
		&pgproto3.Sync{},
		&pgproto3.Bind{PreparedStatement: "s1"},
		&pgproto3.Execute{},
		&pgproto3.Sync{},
	)
	c.expect("BindComplete", "DataRow(5)", "CommandComplete(SELECT 1)", "Error(ERROR 26000)", "ReadyForQuery(I)",
		"BindComplete", "DataRow(5)", "CommandComplete(SELECT 1)", "ReadyForQuery(I)")
}

// TestPortalSuspension: Execute with a row limit sends that many rows and
// PortalSuspended; the next Execute resumes; the last one completes.
func TestPortalSuspension(t *testing.T) {
	ts := startServer(t, &fakeHandler{}, Config{})
	c := dialRaw(t, ts.addr).startup()
	c.send(
		&pgproto3.Parse{Query: "rows 5"},
		&pgproto3.Bind{DestinationPortal: "p"},
		&pgproto3.Execute{Portal: "p", MaxRows: 2},
		&pgproto3.Execute{Portal: "p", MaxRows: 2},
		&pgproto3.Execute{Portal: "p", MaxRows: 2},
		&pgproto3.Sync{},
	)
	c.expect("ParseComplete", "BindComplete",
		"DataRow(1)", "DataRow(2)", "PortalSuspended",
		"DataRow(3)", "DataRow(4)", "PortalSuspended",
		"DataRow(5)", "CommandComplete(SELECT 5)", "ReadyForQuery(I)")
	// Portals end with the implicit transaction at Sync.
	c.send(&pgproto3.Execute{Portal: "p"}, &pgproto3.Sync{})
	c.expect("Error(ERROR 34000)", "ReadyForQuery(I)")
	// An exact fit completes at once (the statement has finished); running
	// the finished portal again completes it again.
	c.send(
		&pgproto3.Bind{DestinationPortal: "q"},
		&pgproto3.Execute{Portal: "q", MaxRows: 5},
		&pgproto3.Execute{Portal: "q", MaxRows: 0},
		&pgproto3.Sync{},
	)
	c.expect("BindComplete", "DataRow(1)", "DataRow(2)", "DataRow(3)", "DataRow(4)", "DataRow(5)",
		"CommandComplete(SELECT 5)", "CommandComplete(SELECT 5)", "ReadyForQuery(I)")
}

func TestDescribe(t *testing.T) {
	ts := startServer(t, &fakeHandler{}, Config{})
	c := dialRaw(t, ts.addr).startup()
	c.send(
		&pgproto3.Parse{Name: "e", Query: "echo int2, text, numeric, unknown"},
		&pgproto3.Describe{ObjectType: 'S', Name: "e"},
		&pgproto3.Bind{PreparedStatement: "e", ResultFormatCodes: []int16{1},
			Parameters: [][]byte{[]byte("7"), []byte("x"), nil, []byte("u")}},
		&pgproto3.Describe{ObjectType: 'P'},
		&pgproto3.Execute{},
		&pgproto3.Parse{Name: "d", Query: "begin"},
		&pgproto3.Describe{ObjectType: 'S', Name: "d"},
		&pgproto3.Close{ObjectType: 'S', Name: "e"},
		&pgproto3.Describe{ObjectType: 'S', Name: "e"},
		&pgproto3.Sync{},
	)
	c.expect("ParseComplete",
		"ParameterDescription[21 1043 1700 25]", "RowDescription(c1:21/0,c2:1043/0,c3:1700/0,c4:705/0)",
		"BindComplete", "RowDescription(c1:21/1,c2:1043/1,c3:1700/1,c4:705/1)",
		"DataRow(\x00\x07,x,,u)", "CommandComplete(SELECT 1)",
		"ParseComplete", "ParameterDescription[]", "NoData",
		"CloseComplete", "Error(ERROR 26000)", "ReadyForQuery(I)")
}

func TestEncryptionRequestsDeclined(t *testing.T) {
	ts := startServer(t, &fakeHandler{}, Config{})
	c := dialRaw(t, ts.addr)
	for _, req := range []pgproto3.FrontendMessage{&pgproto3.SSLRequest{}, &pgproto3.GSSEncRequest{}} {
		c.send(req)
		b := make([]byte, 1)
		if _, err := c.nc.Read(b); err != nil || b[0] != 'N' {
			t.Fatalf("%T: got %q, %v", req, b, err)
		}
	}
	c.startup()
	c.send(&pgproto3.Query{String: "select 2"})
	c.expect("RowDescription(?column?:23/0)", "DataRow(2)", "CommandComplete(SELECT 1)", "ReadyForQuery(I)")
}

// TestProtocol32Negotiated: a client asking for 3.2 (Postgres 18) is told
// the server speaks 3.0 and carries on.
func TestProtocol32Negotiated(t *testing.T) {
	ts := startServer(t, &fakeHandler{}, Config{})
	c := dialRaw(t, ts.addr)
	c.send(&pgproto3.StartupMessage{ProtocolVersion: pgproto3.ProtocolVersion32,
		Parameters: map[string]string{"user": "root"}})
	c.expect("NegotiateProtocolVersion(0)", "AuthenticationOk")
}

func TestMaxMessageSize(t *testing.T) {
	ts := startServer(t, &fakeHandler{}, Config{MaxMessageSize: 1024})
	c := dialRaw(t, ts.addr).startup()
	c.send(&pgproto3.Query{String: "select 1 " + strings.Repeat(" ", 1000)})
	c.expect("RowDescription(?column?:23/0)", "DataRow(1)", "CommandComplete(SELECT 1)", "ReadyForQuery(I)")
	c.send(&pgproto3.Query{String: strings.Repeat("x", 2000)})
	c.expect("Error(FATAL 08P01)")
	if _, err := c.fe.Receive(); err == nil {
		t.Fatal("connection open after an oversized message")
	}
}

func TestNoUser(t *testing.T) {
	ts := startServer(t, &fakeHandler{}, Config{})
	c := dialRaw(t, ts.addr)
	c.send(&pgproto3.StartupMessage{ProtocolVersion: pgproto3.ProtocolVersion30, Parameters: map[string]string{"database": "dev"}})
	c.expect("Error(FATAL 28000)")
}

// TestSessionPanicEndsOnlyItsConnection: a bug in a session closes that
// connection; others, and the server, go on.
func TestSessionPanicEndsOnlyItsConnection(t *testing.T) {
	ts := startServer(t, &fakeHandler{}, Config{})
	other := dialRaw(t, ts.addr).startup()
	c := dialRaw(t, ts.addr).startup()
	c.send(&pgproto3.Query{String: "panic"})
	if msg, err := c.fe.Receive(); err == nil {
		t.Fatalf("got %s after a panic", msgName(msg))
	}
	other.send(&pgproto3.Query{String: "select 4"})
	other.expect("RowDescription(?column?:23/0)", "DataRow(4)", "CommandComplete(SELECT 1)", "ReadyForQuery(I)")
	if !strings.Contains(ts.log.String(), "fake session panic") {
		t.Fatalf("panic not logged: %s", ts.log.String())
	}
}

// frame builds a message with a type byte and a correct length.
func frame(typ byte, body []byte) []byte {
	b := []byte{typ, 0, 0, 0, 0}
	binary.BigEndian.PutUint32(b[1:], uint32(len(body)+4))
	return append(b, body...)
}
