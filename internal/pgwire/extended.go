package pgwire

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/sluice-db/sluice/internal/sqlerr"
	"github.com/sluice-db/sluice/internal/types"
)

// prepared is a named (or the unnamed) prepared statement.
type prepared struct {
	name       string
	stmt       Statement
	paramTypes []types.Type
	paramOIDs  []uint32
	cols       []Column
	oids       []uint32
}

// portal is a bound statement: parameters decoded, result formats chosen.
// Once executed it holds the rows that did not fit the row limit.
type portal struct {
	prep    *prepared
	params  []types.Datum
	formats []int16 // one per result column

	started bool
	sent    int         // rows sent by the current Execute
	pending []types.Row // rows produced but not yet sent
	tag     string      // command tag, sent with the last pending row
	run     *portalRun  // the statement, parked (portalrun.go); nil when not running
	err     error       // the statement's error, met while settling
}

func (c *conn) handleParse(ctx context.Context, m *pgproto3.Parse) error {
	if _, exists := c.stmts[m.Name]; exists && m.Name != "" {
		return c.extendedError(ctx, sqlerr.Errorf(codeDuplicatePreparedStmt,
			"prepared statement \"%s\" already exists", m.Name))
	}
	declared := make([]types.Type, len(m.ParameterOIDs))
	for i, oid := range m.ParameterOIDs {
		t, err := TypeOfOID(oid)
		if err != nil {
			return c.extendedError(ctx, err)
		}
		declared[i] = t
	}
	var stmt Statement
	callCtx, err := c.call(ctx, func(ctx context.Context) (err error) {
		stmt, err = c.sess.Prepare(ctx, m.Query, declared)
		return err
	})
	if ctx.Err() != nil {
		return c.shutdown(ctx)
	}
	if err != nil {
		return c.extendedError(callCtx, err)
	}
	p, err := newPrepared(m.Name, stmt)
	if err != nil {
		return c.extendedError(ctx, err)
	}
	c.stmts[m.Name] = p
	c.be.Send(&pgproto3.ParseComplete{})
	return nil
}

func newPrepared(name string, stmt Statement) (*prepared, error) {
	p := &prepared{name: name, stmt: stmt, paramTypes: stmt.ParamTypes(), cols: stmt.Columns()}
	p.paramOIDs = make([]uint32, len(p.paramTypes))
	for i, t := range p.paramTypes {
		// An untyped parameter is text to the client, as in Postgres.
		if p.paramOIDs[i] = OIDOf(t); t.ID == types.Unknown {
			p.paramOIDs[i] = OIDText
		}
	}
	var err error
	if p.oids, err = columnOIDs(p.cols); err != nil {
		return nil, err
	}
	return p, nil
}

func (c *conn) handleBind(ctx context.Context, m *pgproto3.Bind) error {
	p, ok := c.stmts[m.PreparedStatement]
	if !ok {
		return c.extendedError(ctx, errNoStatement(m.PreparedStatement))
	}
	if _, exists := c.portals[m.DestinationPortal]; exists && m.DestinationPortal != "" {
		return c.extendedError(ctx, sqlerr.Errorf(codeDuplicateCursor, "cursor \"%s\" already exists", m.DestinationPortal))
	}
	if len(m.Parameters) != len(p.paramTypes) {
		return c.extendedError(ctx, sqlerr.Errorf(codeProtocolViolation,
			"bind message supplies %d parameters, but prepared statement \"%s\" requires %d",
			len(m.Parameters), p.name, len(p.paramTypes)))
	}
	params, err := decodeParams(m, p.paramTypes)
	if err != nil {
		return c.extendedError(ctx, err)
	}
	formats, err := expandFormats(m.ResultFormatCodes, len(p.cols))
	if err != nil {
		return c.extendedError(ctx, err)
	}
	c.closePortal(c.portals[m.DestinationPortal]) // the unnamed portal is replaced
	c.portals[m.DestinationPortal] = &portal{prep: p, params: params, formats: formats}
	c.be.Send(&pgproto3.BindComplete{})
	return nil
}

// decodeParams decodes Bind's values now: they alias the read buffer.
func decodeParams(m *pgproto3.Bind, ts []types.Type) ([]types.Datum, error) {
	formats, err := expandFormats(m.ParameterFormatCodes, len(m.Parameters))
	if err != nil {
		return nil, err
	}
	params := make([]types.Datum, len(m.Parameters))
	for i, b := range m.Parameters {
		if b == nil {
			continue // NULL
		}
		d, err := decodeParam(b, ts[i], formats[i])
		if err != nil {
			if e, ok := sqlerr.As(err); ok && e.Detail == "" {
				e.Detail = fmt.Sprintf("in parameter $%d", i+1)
			}
			return nil, err
		}
		params[i] = d
	}
	return params, nil
}

func errNoStatement(name string) error {
	if name == "" {
		return sqlerr.New(codeInvalidStatementName, "unnamed prepared statement does not exist")
	}
	return sqlerr.Errorf(codeInvalidStatementName, "prepared statement \"%s\" does not exist", name)
}

func errNoPortal(name string) error {
	if name == "" {
		return sqlerr.New(codeInvalidCursorName, "unnamed portal does not exist")
	}
	return sqlerr.Errorf(codeInvalidCursorName, "portal \"%s\" does not exist", name)
}

func (c *conn) handleDescribe(ctx context.Context, m *pgproto3.Describe) error {
	var cols []Column
	var formats []int16
	switch m.ObjectType {
	case 'S':
		p, ok := c.stmts[m.Name]
		if !ok {
			return c.extendedError(ctx, errNoStatement(m.Name))
		}
		c.be.Send(&pgproto3.ParameterDescription{ParameterOIDs: p.paramOIDs})
		// Formats are not chosen until Bind: Postgres reports text.
		cols, formats = p.cols, make([]int16, len(p.cols))
	case 'P':
		pt, ok := c.portals[m.Name]
		if !ok {
			return c.extendedError(ctx, errNoPortal(m.Name))
		}
		cols, formats = pt.prep.cols, pt.formats
	default:
		return c.extendedError(ctx, sqlerr.Errorf(codeProtocolViolation, "invalid DESCRIBE message subtype %d", m.ObjectType))
	}
	if cols == nil {
		c.be.Send(&pgproto3.NoData{})
		return nil
	}
	fields, err := fieldDescriptions(cols, formats)
	if err != nil {
		return c.extendedError(ctx, err)
	}
	c.be.Send(&pgproto3.RowDescription{Fields: fields})
	return nil
}

func (c *conn) handleExecute(ctx context.Context, m *pgproto3.Execute) error {
	p, ok := c.portals[m.Portal]
	if !ok {
		return c.extendedError(ctx, errNoPortal(m.Portal))
	}
	maxRows := int(m.MaxRows)
	p.sent = 0
	if p.run != nil {
		return c.pumpPortal(ctx, p, maxRows)
	}
	if p.started {
		return c.resumePortal(ctx, p, maxRows)
	}
	p.started = true
	if maxRows > 0 && len(p.prep.cols) > 0 {
		return c.startRunner(ctx, p, maxRows)
	}
	c.w.beginExtended(p, maxRows)
	callCtx, err := c.call(ctx, func(ctx context.Context) error {
		return p.prep.stmt.Execute(ctx, p.params, &c.w)
	})
	if err == nil && !c.w.ended {
		err = fmt.Errorf("pgwire: statement ended without a command tag")
	}
	if err == nil {
		err = c.w.finishCopy()
	}
	if ctx.Err() != nil {
		return c.shutdown(ctx)
	}
	if err != nil {
		p.pending = nil
		return c.extendedError(callCtx, err)
	}
	if len(p.pending) > 0 {
		c.be.Send(&pgproto3.PortalSuspended{})
	}
	return nil
}

// resumePortal sends the next rows of a suspended portal, and the command
// tag once none are left. A finished portal completes again with its tag.
func (c *conn) resumePortal(ctx context.Context, p *portal, maxRows int) error {
	if p.err != nil {
		err := p.err
		p.err = nil
		return c.extendedError(ctx, err)
	}
	c.w.beginExtended(p, maxRows)
	n := len(p.pending)
	if maxRows > 0 && maxRows < n {
		n = maxRows
	}
	for _, row := range p.pending[:n] {
		if err := c.w.sendRow(row); err != nil {
			p.pending = nil
			return c.extendedError(ctx, err)
		}
	}
	p.pending = p.pending[n:]
	if len(p.pending) > 0 {
		c.be.Send(&pgproto3.PortalSuspended{})
		return nil
	}
	p.pending = nil
	c.be.Send(&pgproto3.CommandComplete{CommandTag: []byte(p.tag)})
	return nil
}

func (c *conn) handleSync() error {
	c.ignoreTillSync = false
	return c.readyForQuery()
}

func (c *conn) handleClose(m *pgproto3.Close) error {
	switch m.ObjectType {
	case 'S':
		delete(c.stmts, m.Name)
	case 'P':
		c.closePortal(c.portals[m.Name])
		delete(c.portals, m.Name)
	}
	// Closing something that does not exist is not an error.
	c.be.Send(&pgproto3.CloseComplete{})
	return nil
}
