package sqllogic

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// sessions opens the named connections of one file on first use.
type sessions struct {
	dsn     string
	connect func(ctx context.Context) (*pgx.Conn, error)
	conns   map[string]*pgx.Conn
}

func (s *sessions) get(ctx context.Context, name string) (*pgx.Conn, error) {
	if c, ok := s.conns[name]; ok {
		return c, nil
	}
	var c *pgx.Conn
	var err error
	switch {
	case s.connect != nil:
		c, err = s.connect(ctx)
	case s.dsn != "":
		c, err = connectSimple(ctx, s.dsn)
	default:
		err = errors.New("no DSN or Connect given")
	}
	if err != nil {
		return nil, fmt.Errorf("connect session %q: %w", sessionName(name), err)
	}
	if s.conns == nil {
		s.conns = map[string]*pgx.Conn{}
	}
	s.conns[name] = c
	return c, nil
}

func sessionName(name string) string {
	if name == "" {
		return "default"
	}
	return name
}

// connectSimple opens a connection that uses the simple query protocol,
// like the postgres engine of sqllogictest-rs.
func connectSimple(ctx context.Context, dsn string) (*pgx.Conn, error) {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("parse DSN: %w", err)
	}
	cfg.DefaultQueryExecMode = pgx.QueryExecModeSimpleProtocol
	return pgx.ConnectConfig(ctx, cfg)
}

// close closes every session; a fresh context so a cancelled run still
// says goodbye to the server.
func (s *sessions) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, c := range s.conns {
		_ = c.Close(ctx)
	}
	s.conns = nil
}

// outcome is what one SQL text produced. As in the Rust engine, only the
// first statement's result counts: its rows, or, if it returned none, its
// affected-row count ("statement complete").
type outcome struct {
	rows     [][]cell
	count    int64
	err      error
	errText  string
	sqlState string
}

// hasRows reports whether the result is rows rather than a completion.
func (o outcome) hasRows() bool { return len(o.rows) > 0 }

// execSimple runs sql over the simple query protocol, values in text form.
func execSimple(ctx context.Context, conn *pgx.Conn, sql string) outcome {
	results, err := conn.PgConn().Exec(ctx, sql).ReadAll()
	if err != nil {
		return failed(err)
	}
	if len(results) == 0 {
		return outcome{}
	}
	first := results[0]
	if first.Err != nil {
		return failed(first.Err)
	}
	o := outcome{count: first.CommandTag.RowsAffected()}
	for _, row := range first.Rows {
		r := make([]cell, len(row))
		for i, v := range row {
			var oid uint32
			if i < len(first.FieldDescriptions) {
				oid = first.FieldDescriptions[i].DataTypeOID
			}
			r[i] = cell{text: renderValue(v), oid: oid}
		}
		o.rows = append(o.rows, r)
	}
	return o
}

// failed renders an error as tokio-postgres displays it, since that is the
// text the files' error regexes were written against:
// "db error: ERROR: message" plus DETAIL and HINT lines.
func failed(err error) outcome {
	o := outcome{err: err, errText: err.Error()}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		var b strings.Builder
		fmt.Fprintf(&b, "db error: %s: %s", pgErr.Severity, pgErr.Message)
		if pgErr.Detail != "" {
			fmt.Fprintf(&b, "\nDETAIL: %s", pgErr.Detail)
		}
		if pgErr.Hint != "" {
			fmt.Fprintf(&b, "\nHINT: %s", pgErr.Hint)
		}
		o.errText, o.sqlState = b.String(), pgErr.Code
	}
	return o
}
