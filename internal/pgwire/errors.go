package pgwire

import (
	"context"
	"errors"
	"strings"
	"unicode/utf8"

	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/sluice-db/sluice/internal/sqlerr"
)

// SQLSTATEs of the protocol layer that internal/sqlerr does not name.
const (
	codeProtocolViolation     sqlerr.Code = "08P01"
	codeInvalidAuthorization  sqlerr.Code = "28000"
	codeInvalidPassword       sqlerr.Code = "28P01"
	codeInvalidStatementName  sqlerr.Code = "26000"
	codeInvalidCursorName     sqlerr.Code = "34000"
	codeDuplicatePreparedStmt sqlerr.Code = "42P05"
	codeDuplicateCursor       sqlerr.Code = "42P03"
	codeFeatureNotSupported   sqlerr.Code = sqlerr.FeatureNotSupported
	severityError                         = "ERROR"
	severityFatal                         = "FATAL"
	msgCanceledByUser                     = "canceling statement due to user request"
	msgTerminatedByAdmin                  = "terminating connection due to administrator command"
)

// Causes attached to a statement's context when it is cancelled, so that
// the error sent to the client says why.
var (
	errCancelRequest = errors.New("pgwire: cancel request")
	errShutdown      = errors.New("pgwire: server shutting down")
)

// errorResponse turns err into an ErrorResponse: the *sqlerr.Error in its
// chain when there is one, else XX000 with err's text. A context error
// caused by a cancel request or a shutdown becomes 57014 or 57P01, as in
// Postgres, whatever the session wrapped it in.
func errorResponse(ctx context.Context, err error, severity string) *pgproto3.ErrorResponse {
	e, ok := sqlerr.As(err)
	if !ok {
		e = &sqlerr.Error{Code: sqlerr.Internal, Message: err.Error()}
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			switch context.Cause(ctx) {
			case errCancelRequest:
				e = sqlerr.New(sqlerr.QueryCanceled, msgCanceledByUser)
			case errClientGone:
				e = sqlerr.New(sqlerr.QueryCanceled, "canceling statement because the client closed the connection")
			case errShutdown, errTerminated:
				e = sqlerr.New(sqlerr.AdminShutdown, msgTerminatedByAdmin)
			}
		}
	}
	return &pgproto3.ErrorResponse{
		Severity:            severity,
		SeverityUnlocalized: severity,
		Code:                string(e.Code),
		Message:             e.Message,
		Detail:              e.Detail,
		Hint:                e.Hint,
		Position:            int32(e.Position),
	}
}

func noticeResponse(n Notice) *pgproto3.NoticeResponse {
	sev := n.Severity
	if sev == "" {
		sev = "NOTICE"
	}
	code := n.Code
	if code == "" {
		code = sqlerr.SuccessfulCompletion
	}
	return &pgproto3.NoticeResponse{
		Severity:            sev,
		SeverityUnlocalized: sev,
		Code:                string(code),
		Message:             n.Message,
		Detail:              n.Detail,
		Hint:                n.Hint,
	}
}

// checkText refuses what Postgres refuses in any text it is given (a COPY
// field, a bound parameter, a binary text value): bytes that are not
// UTF-8, and NUL, which no text value can hold.
func checkText(s string) error {
	if strings.IndexByte(s, 0) >= 0 {
		return sqlerr.New(codeCharacterNotInRepertoire, `invalid byte sequence for encoding "UTF8": 0x00`)
	}
	if !utf8.ValidString(s) {
		return sqlerr.New(codeCharacterNotInRepertoire, `invalid byte sequence for encoding "UTF8"`)
	}
	return nil
}
