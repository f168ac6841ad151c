package pgwire

import (
	"context"
	"io"
	"net"
	"time"

	"github.com/sluice-db/sluice/internal/sqlerr"
	"github.com/sluice-db/sluice/internal/types"
)

// StartupParams is what a client said about itself in its startup message,
// after authentication succeeded.
type StartupParams struct {
	User            string
	Database        string // defaults to User, as in Postgres
	ApplicationName string
	// Settings holds every other startup parameter (client_encoding,
	// DateStyle, ...) plus the `-c name=value` / `--name=value` pairs of
	// the "options" parameter, keyed by lower-case name.
	Settings map[string]string
	// ProcessID is the pid reported to the client in BackendKeyData; it
	// identifies the connection in logs and in cancel requests.
	ProcessID uint32
	// RemoteAddr is the client's address.
	RemoteAddr net.Addr
}

// Handler creates a Session for each connection once startup and
// authentication succeed. It is called from the connection's goroutine; an
// error (a *sqlerr.Error, e.g. 3D000 for an unknown database) is sent to the
// client as a FATAL ErrorResponse and the connection is closed.
type Handler interface {
	NewSession(ctx context.Context, p StartupParams) (Session, error)
}

// Session is the SQL layer's side of one connection. pgwire calls it from
// one goroutine only, one call at a time, so it needs no locking. Every ctx
// passed in is cancelled when the client sends a CancelRequest for the
// running call (the session should then return an error; pgwire reports
// 57014 query_canceled) or when the server shuts down.
type Session interface {
	// Query runs a simple-protocol query string: zero or more statements
	// separated by ';'. For each statement, in order, the session calls
	// w.Describe (if it returns rows), w.WriteRow per row and w.Complete
	// with the command tag; a string with no statements gets one
	// w.EmptyQuery. Statements are bound and run one at a time, so a
	// statement can see what an earlier one created. The first error stops
	// the rest and is returned.
	Query(ctx context.Context, sql string, w ResultWriter) error

	// Prepare parses and binds one statement for the extended protocol.
	// paramTypes has the types the client declared for $1..$n (shorter
	// than n, or types.TUnknown entries, where it declared none); the
	// returned Statement reports the types it settled on. An empty sql is
	// valid and describes no rows; executing it calls w.EmptyQuery.
	Prepare(ctx context.Context, sql string, paramTypes []types.Type) (Statement, error)

	// Close releases the session when the connection ends.
	Close()
}

// Statement is a prepared statement, as the extended protocol needs it:
// described before execution, then executed any number of times with
// different parameters.
type Statement interface {
	// ParamTypes are the types of $1..$n. An Unknown entry is sent to the
	// client as text and its values arrive as string datums.
	ParamTypes() []types.Type
	// Columns describes the result rows; nil when the statement returns
	// none (DDL, DML without RETURNING).
	Columns() []Column
	// Execute runs the statement with params (one Datum per ParamTypes
	// entry, already decoded; nil is NULL) and writes its result to w: rows
	// with w.WriteRow (Describe is optional here, the columns are known),
	// then w.Complete.
	Execute(ctx context.Context, params []types.Datum, w ResultWriter) error
}

// Column describes one result column.
type Column struct {
	Name string
	Type types.Type
	// OID, when non-zero, is sent instead of the OID derived from Type, for
	// catalog columns that Postgres types differently: text (25), name
	// (19), bpchar (1042) or "char" (18) for a Varchar; oid (26) for an
	// integer (sent as 4 bytes in binary). See OIDOf.
	OID uint32
	// TableOID and ColumnAttr name the table column the result column
	// comes from, when it comes from one (zero otherwise).
	TableOID   uint32
	ColumnAttr uint16
}

// ResultWriter receives a statement's results. pgwire implements it; the
// SQL layer may implement it too in tests. Its methods return an error only
// when the client is gone or ctx is done, which the session should return.
type ResultWriter interface {
	// Describe announces the columns of the rows that follow. The simple
	// protocol sends it as RowDescription; the extended protocol already
	// described the statement and only checks the column count.
	Describe(cols []Column) error
	// WriteRow sends one row, in text or binary per the client's request.
	// It checks ctx first, so a long result stops promptly on cancel.
	WriteRow(ctx context.Context, row types.Row) error
	// Complete ends the statement with its command tag ("SELECT 3",
	// "INSERT 0 5", "CREATE TABLE"); pgwire sends it verbatim.
	Complete(tag string) error
	// EmptyQuery reports an empty statement (EmptyQueryResponse).
	EmptyQuery() error
	// Notice sends a NoticeResponse at once (it is flushed).
	Notice(n Notice) error
	// ParameterStatus tells the client that a reported setting changed
	// (application_name, TimeZone, ...), as Postgres does after SET.
	ParameterStatus(name, value string) error
	// CopyIn starts the COPY FROM STDIN sub-protocol: it sends
	// CopyInResponse (text or binary, for columns columns) and returns a
	// reader of the raw bytes the client sends in CopyData messages. The
	// reader returns io.EOF at CopyDone and an error with SQLSTATE 57014
	// at CopyFail. If the session stops reading early (a bad row), pgwire
	// discards the rest of the client's data after the session returns.
	CopyIn(ctx context.Context, format CopyFormat, columns int) (io.Reader, error)
}

// Notice is a NoticeResponse: an informational message that does not end
// the statement.
type Notice struct {
	Severity string // NOTICE when empty; also WARNING, INFO, DEBUG, LOG
	Code     sqlerr.Code
	Message  string
	Detail   string
	Hint     string
}

// CopyFormat is the overall format of COPY data on the wire. CSV is text
// at the protocol level.
type CopyFormat int8

// The COPY wire formats.
const (
	CopyText   CopyFormat = 0
	CopyBinary CopyFormat = 1
)

// TxStatus is the transaction state reported in ReadyForQuery.
type TxStatus byte

// The transaction states of ReadyForQuery.
const (
	TxIdle    TxStatus = 'I'
	TxInBlock TxStatus = 'T'
	TxFailed  TxStatus = 'E'
)

// TxStatusReporter is implemented by a Session that tracks transaction
// blocks; pgwire reports TxIdle for sessions that do not implement it.
type TxStatusReporter interface {
	TxStatus() TxStatus
}

// IdleInTransactionLimiter is implemented by a Session that bounds how
// long it may wait for the client's next message inside a transaction
// block (idle_in_transaction_session_timeout; 0: no bound). Past it the
// connection ends with FATAL 25P03.
type IdleInTransactionLimiter interface {
	IdleInTransactionTimeout() time.Duration
}
