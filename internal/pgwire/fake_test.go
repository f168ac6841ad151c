package pgwire

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/sluice-db/sluice/internal/sqlerr"
	"github.com/sluice-db/sluice/internal/types"
)

// fakeHandler is a stand-in for the SQL layer. Its sessions understand a
// tiny language, one statement per ';':
//
//	select <int>        one int4 row
//	rows <n>            n int8 rows 1..n
//	types               typesTable: one column per type
//	echo <t1>,<t2>,...  (extended) a statement with those parameter
//	                    types that returns its parameters as one row
//	bad                 a 42601 error with detail, hint and position
//	sleep               blocks until its ctx is cancelled
//	notice              a NOTICE, then tag DO
//	copy                COPY FROM STDIN (text), rows kept in copied
//	copied              the copied rows, as varchar
//	begin / commit      transaction status T / I
//	set <name> <value>  a ParameterStatus
//	panic               panics
//	internal            an error without a SQLSTATE
type fakeHandler struct {
	sleeping chan struct{} // receives when a sleep starts, if non-nil
	woke     chan error    // receives why a sleep ended, if non-nil
	produced atomic.Int64  // rows the rows statement has produced
	mu       sync.Mutex
	copied   [][]string // "NULL" for NULL
	params   [][]types.Datum
	sessions int
}

func (h *fakeHandler) NewSession(ctx context.Context, p StartupParams) (Session, error) {
	if p.Database == "nodb" {
		return nil, sqlerr.Errorf("3D000", "database \"%s\" does not exist", p.Database)
	}
	h.mu.Lock()
	h.sessions++
	h.mu.Unlock()
	return &fakeSession{h: h, startup: p}, nil
}

type fakeSession struct {
	h       *fakeHandler
	startup StartupParams
	inTx    bool
}

func (s *fakeSession) Close() {}

func (s *fakeSession) TxStatus() TxStatus {
	if s.inTx {
		return TxInBlock
	}
	return TxIdle
}

func (s *fakeSession) Query(ctx context.Context, sql string, w ResultWriter) error {
	ran := false
	for _, stmt := range strings.Split(sql, ";") {
		stmt = strings.TrimSpace(stmt)
		if stmt == "" {
			continue
		}
		ran = true
		if err := s.run(ctx, stmt, nil, w, true); err != nil {
			return err
		}
	}
	if !ran {
		return w.EmptyQuery()
	}
	return nil
}

func (s *fakeSession) Prepare(ctx context.Context, sql string, declared []types.Type) (Statement, error) {
	sql = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(sql), ";"))
	st := &fakeStmt{s: s, sql: sql}
	word, rest, _ := strings.Cut(sql, " ")
	switch strings.ToLower(word) {
	case "":
	case "echo":
		for i, name := range strings.Split(rest, ",") {
			t, ok := types.ParseTypeName(strings.TrimSpace(name))
			if strings.TrimSpace(name) == "unknown" {
				t, ok = types.TUnknown, true
			}
			if !ok {
				return nil, sqlerr.Errorf(sqlerr.UndefinedObject, "type \"%s\" does not exist", name)
			}
			if i < len(declared) && declared[i] != types.TUnknown && declared[i] != t {
				return nil, sqlerr.Errorf(sqlerr.DatatypeMismatch, "parameter $%d declared %s, used as %s", i+1, declared[i], t)
			}
			st.params = append(st.params, t)
			st.cols = append(st.cols, Column{Name: fmt.Sprintf("c%d", i+1), Type: t})
		}
	case "bad":
		return nil, s.run(ctx, sql, nil, nil, false)
	default:
		cols, err := columnsOf(sql)
		if err != nil {
			return nil, err
		}
		st.cols = cols
	}
	return st, nil
}

type fakeStmt struct {
	s      *fakeSession
	sql    string
	params []types.Type
	cols   []Column
}

func (st *fakeStmt) ParamTypes() []types.Type { return st.params }
func (st *fakeStmt) Columns() []Column        { return st.cols }

func (st *fakeStmt) Execute(ctx context.Context, params []types.Datum, w ResultWriter) error {
	if st.sql == "" {
		return w.EmptyQuery()
	}
	return st.s.run(ctx, st.sql, params, w, false)
}

// columnsOf describes the result of a row-returning statement; nil for
// commands.
func columnsOf(stmt string) ([]Column, error) {
	word, _, _ := strings.Cut(stmt, " ")
	switch strings.ToLower(word) {
	case "select":
		return []Column{{Name: "?column?", Type: types.TInt32}}, nil
	case "rows":
		return []Column{{Name: "n", Type: types.TInt64}}, nil
	case "types":
		return typesColumns(), nil
	case "copied":
		return []Column{{Name: "a", Type: types.TVarchar}, {Name: "b", Type: types.TVarchar}}, nil
	}
	return nil, nil
}

func (s *fakeSession) run(ctx context.Context, stmt string, params []types.Datum, w ResultWriter, describe bool) error {
	cols, err := columnsOf(stmt)
	if err != nil {
		return err
	}
	if cols != nil && describe {
		if err := w.Describe(cols); err != nil {
			return err
		}
	}
	word, rest, _ := strings.Cut(stmt, " ")
	switch strings.ToLower(word) {
	case "select":
		n, err := strconv.ParseInt(strings.TrimSpace(rest), 10, 32)
		if err != nil {
			return &sqlerr.Error{Code: sqlerr.SyntaxError, Message: "not an integer", Position: 8}
		}
		return writeRows(ctx, w, "SELECT 1", types.Row{n})
	case "rows":
		n, _ := strconv.Atoi(strings.TrimSpace(rest))
		for i := 1; i <= n; i++ {
			s.h.produced.Add(1)
			if err := w.WriteRow(ctx, types.Row{int64(i)}); err != nil {
				return err
			}
		}
		return w.Complete(fmt.Sprintf("SELECT %d", n))
	case "types":
		rows := typesRows()
		return writeRows(ctx, w, fmt.Sprintf("SELECT %d", len(rows)), rows...)
	case "echo":
		s.h.mu.Lock()
		s.h.params = append(s.h.params, params)
		s.h.mu.Unlock()
		return writeRows(ctx, w, "SELECT 1", types.Row(params))
	case "bad":
		return &sqlerr.Error{Code: sqlerr.SyntaxError, Message: "syntax error at or near \"bad\"",
			Detail: "the detail", Hint: "the hint", Position: 1}
	case "sleep":
		if s.h.sleeping != nil {
			select {
			case s.h.sleeping <- struct{}{}:
			case <-ctx.Done():
			}
		}
		<-ctx.Done()
		if s.h.woke != nil {
			s.h.woke <- context.Cause(ctx)
		}
		return fmt.Errorf("fake sleep: %w", ctx.Err())
	case "notice":
		if err := w.Notice(Notice{Code: "01000", Message: "hello from notice", Detail: "d"}); err != nil {
			return err
		}
		return w.Complete("DO")
	case "copy":
		return s.copyIn(ctx, w)
	case "copied":
		return s.writeCopied(ctx, w)
	case "begin":
		s.inTx = true
		return w.Complete("BEGIN")
	case "commit", "rollback":
		s.inTx = false
		return w.Complete(strings.ToUpper(word))
	case "set":
		name, value, _ := strings.Cut(strings.TrimSpace(rest), " ")
		if err := w.ParameterStatus(name, value); err != nil {
			return err
		}
		return w.Complete("SET")
	case "panic":
		panic("fake session panic")
	case "internal":
		return fmt.Errorf("fake: %w", errors.New("something broke"))
	}
	return sqlerr.Errorf(sqlerr.SyntaxError, "unknown statement %q", stmt)
}

func writeRows(ctx context.Context, w ResultWriter, tag string, rows ...types.Row) error {
	for _, r := range rows {
		if err := w.WriteRow(ctx, r); err != nil {
			return err
		}
	}
	return w.Complete(tag)
}

// copyIn reads two-column text COPY data.
func (s *fakeSession) copyIn(ctx context.Context, w ResultWriter) error {
	r, err := w.CopyIn(ctx, CopyText, 2)
	if err != nil {
		return err
	}
	dec := NewCopyTextDecoder(r)
	var got [][]string
	for {
		fields, nulls, err := dec.ReadRow()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		row := make([]string, len(fields))
		for i, f := range fields {
			row[i] = f
			if nulls[i] {
				row[i] = "NULL"
			}
		}
		if row[0] == "fail" {
			return sqlerr.Errorf(sqlerr.InvalidTextRepresentation, "bad row on line %d", dec.Line())
		}
		got = append(got, row)
	}
	s.h.mu.Lock()
	s.h.copied = append(s.h.copied, got...)
	s.h.mu.Unlock()
	return w.Complete(fmt.Sprintf("COPY %d", len(got)))
}

func (s *fakeSession) writeCopied(ctx context.Context, w ResultWriter) error {
	s.h.mu.Lock()
	rows := append([][]string(nil), s.h.copied...)
	s.h.mu.Unlock()
	for _, r := range rows {
		row := make(types.Row, 2)
		for i := range row {
			if r[i] != "NULL" {
				row[i] = r[i]
			}
		}
		if err := w.WriteRow(ctx, row); err != nil {
			return err
		}
	}
	return w.Complete(fmt.Sprintf("SELECT %d", len(rows)))
}
