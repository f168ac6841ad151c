package pgwire

import (
	"testing"

	"github.com/jackc/pgx/v5/pgproto3"
)

// TestPortalStreamsRows: a portal executed with a row limit runs only as
// far as the client has fetched (it used to run the whole query at the
// first Execute and keep every row), keeps its place across Syncs inside
// a transaction block, and stops when closed.
func TestPortalStreamsRows(t *testing.T) {
	h := &fakeHandler{}
	ts := startServer(t, h, Config{})
	c := dialRaw(t, ts.addr).startup()
	c.send(&pgproto3.Query{String: "begin"})
	c.expect("CommandComplete(BEGIN)", "ReadyForQuery(T)")
	c.send(&pgproto3.Parse{Name: "s", Query: "rows 1000000"},
		&pgproto3.Bind{PreparedStatement: "s", DestinationPortal: "cur"},
		&pgproto3.Execute{Portal: "cur", MaxRows: 3}, &pgproto3.Sync{})
	c.expect("ParseComplete", "BindComplete", "DataRow(1)", "DataRow(2)", "DataRow(3)", "PortalSuspended", "ReadyForQuery(T)")
	if n := h.produced.Load(); n > 4 {
		t.Fatalf("%d rows produced for 3 fetched", n)
	}
	c.send(&pgproto3.Execute{Portal: "cur", MaxRows: 2}, &pgproto3.Sync{})
	c.expect("DataRow(4)", "DataRow(5)", "PortalSuspended", "ReadyForQuery(T)")
	c.send(&pgproto3.Close{ObjectType: 'P', Name: "cur"}, &pgproto3.Sync{})
	c.expect("CloseComplete", "ReadyForQuery(T)")
	if n := h.produced.Load(); n > 6 {
		t.Fatalf("%d rows produced for 5 fetched and a close", n)
	}
	c.send(&pgproto3.Execute{Portal: "cur"}, &pgproto3.Sync{})
	c.expect("Error(ERROR 34000)", "ReadyForQuery(T)")
	c.send(&pgproto3.Query{String: "commit"})
	c.expect("CommandComplete(COMMIT)", "ReadyForQuery(I)")
}

// TestPortalSettledByOtherStatements: before the session runs anything
// else, a parked portal is run to its end and its rows kept, so the
// session serves one statement at a time and the portal still returns
// every row in order.
func TestPortalSettledByOtherStatements(t *testing.T) {
	ts := startServer(t, &fakeHandler{}, Config{})
	c := dialRaw(t, ts.addr).startup()
	c.send(&pgproto3.Query{String: "begin"})
	c.expect("CommandComplete(BEGIN)", "ReadyForQuery(T)")
	c.send(&pgproto3.Parse{Name: "t", Query: "rows 6"},
		&pgproto3.Bind{PreparedStatement: "t", DestinationPortal: "small"},
		&pgproto3.Execute{Portal: "small", MaxRows: 2}, &pgproto3.Sync{})
	c.expect("ParseComplete", "BindComplete", "DataRow(1)", "DataRow(2)", "PortalSuspended", "ReadyForQuery(T)")
	c.send(&pgproto3.Query{String: "rows 1"})
	c.expect("RowDescription(n:20/0)", "DataRow(1)", "CommandComplete(SELECT 1)", "ReadyForQuery(T)")
	c.send(&pgproto3.Execute{Portal: "small", MaxRows: 3}, &pgproto3.Execute{Portal: "small"}, &pgproto3.Sync{})
	c.expect("DataRow(3)", "DataRow(4)", "DataRow(5)", "PortalSuspended", "DataRow(6)", "CommandComplete(SELECT 6)", "ReadyForQuery(T)")
	// Two portals fetched in turn, each parked while the other runs.
	c.send(&pgproto3.Bind{PreparedStatement: "t", DestinationPortal: "a"},
		&pgproto3.Bind{PreparedStatement: "t", DestinationPortal: "b"},
		&pgproto3.Execute{Portal: "a", MaxRows: 4}, &pgproto3.Execute{Portal: "b", MaxRows: 1},
		&pgproto3.Execute{Portal: "a", MaxRows: 4}, &pgproto3.Sync{})
	c.expect("BindComplete", "BindComplete", "DataRow(1)", "DataRow(2)", "DataRow(3)", "DataRow(4)", "PortalSuspended",
		"DataRow(1)", "PortalSuspended", "DataRow(5)", "DataRow(6)", "CommandComplete(SELECT 6)", "ReadyForQuery(T)")
}
