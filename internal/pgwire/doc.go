// Package pgwire serves the PostgreSQL wire protocol (version 3.0) over a
// net.Listener and hands every statement to the SQL layer through three
// small interfaces: Handler (one Session per connection), Session (simple
// Query, extended Prepare) and Statement (Execute with bound parameters).
// Results come back through a ResultWriter as typed columns and
// types.Row datums; pgwire owns every byte on the wire.
//
// Message flow, step by step:
//
//  1. Server.Serve accepts connections and runs each in a goroutine of a
//     task.Group. A panic in a connection is logged and ends only that
//     connection. When Serve's ctx is done, every connection's context is
//     cancelled with a "shutdown" cause, reads are unblocked by moving the
//     read deadline to now, clients get FATAL 57P01, and Serve returns once
//     all connection goroutines have.
//  2. Startup (startup.go): SSLRequest and GSSEncRequest are answered 'N'
//     and the client continues in plain text. A CancelRequest (a new
//     connection carrying the pid and secret key of another) cancels that
//     connection's running call and closes. A StartupMessage for protocol
//     3.2 gets NegotiateProtocolVersion (3.0). Authentication is trust, or
//     SCRAM-SHA-256 (scram.go) when Config.Users is set. Then the Handler
//     creates the Session, and the client receives AuthenticationOk,
//     ParameterStatus (server_version, encodings, DateStyle, TimeZone, ...),
//     BackendKeyData and ReadyForQuery.
//  3. Simple protocol: Query → Session.Query, which for each statement
//     calls Describe (RowDescription), WriteRow (DataRow, text format) and
//     Complete (CommandComplete), or EmptyQuery. An error becomes an
//     ErrorResponse with the SQLSTATE of the *sqlerr.Error in its chain
//     (XX000 otherwise); ReadyForQuery follows either way, carrying the
//     session's transaction status (TxStatusReporter).
//  4. Extended protocol (extended.go): Parse → Session.Prepare (parameter
//     types declared by OID, 0 = infer); Bind decodes every parameter (text
//     with types.ParseDatum, binary per Postgres's send formats, encode.go
//     and numeric.go) and picks per-column result formats; Describe sends
//     ParameterDescription / RowDescription / NoData; Execute runs the
//     statement, and with a row limit sends that many rows then
//     PortalSuspended, keeping the rest in the portal for the next Execute;
//     Sync ends the implicit transaction (portals are dropped) with
//     ReadyForQuery; Flush flushes; Close drops a statement or portal.
//     After an error every message is skipped until Sync, as in Postgres.
//  5. Cancellation: each Session call gets a context that a CancelRequest
//     for the connection cancels (cause: cancel request). The session
//     returns (WriteRow checks ctx, so streaming results stop by
//     themselves), and pgwire reports 57014 query_canceled.
//  6. COPY FROM STDIN: the session calls ResultWriter.CopyIn, which sends
//     CopyInResponse and returns an io.Reader over the CopyData payloads
//     (EOF at CopyDone, 57014 at CopyFail). CopyTextDecoder splits the text
//     format into fields. If the session fails mid-COPY, the client's
//     remaining CopyData is ignored by the message loop, as Postgres does.
//  7. Output is buffered and flushed at ReadyForQuery, Flush, a notice, a
//     CopyInResponse, or every flushThreshold bytes of rows, so a large
//     result streams with bounded memory. A malformed or oversized
//     (Config.MaxMessageSize) message ends the connection with FATAL 08P01.
//
// Sluice's timestamps count from 2000 as the binary format does and are
// sent as they are (binary input outside the range is 22008); its dates
// count from 1970 and are converted (infinities keep their sentinels).
// Text output is
// types.FormatDatumAppend: DateStyle ISO, TimeZone UTC, IntervalStyle
// postgres.
package pgwire
