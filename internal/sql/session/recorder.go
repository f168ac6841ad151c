package session

import (
	"context"
	"io"
	"sort"

	"github.com/sluice-db/sluice/internal/catalog"
	"github.com/sluice-db/sluice/internal/pgwire"
	"github.com/sluice-db/sluice/internal/sqlerr"
	"github.com/sluice-db/sluice/internal/types"
)

// recorder is a ResultWriter that keeps the columns and rows of a
// side-effect-free statement: Prepare uses it to describe SHOW and catalog
// queries, and tests use it to run statements without a connection.
type recorder struct {
	cols []pgwire.Column
	rows []types.Row
	tags []string
}

func (r *recorder) Describe(cols []pgwire.Column) error { r.cols = cols; return nil }
func (r *recorder) WriteRow(ctx context.Context, row types.Row) error {
	r.rows = append(r.rows, row)
	return ctx.Err()
}
func (r *recorder) Complete(tag string) error            { r.tags = append(r.tags, tag); return nil }
func (r *recorder) EmptyQuery() error                    { return nil }
func (r *recorder) Notice(pgwire.Notice) error           { return nil }
func (r *recorder) ParameterStatus(string, string) error { return nil }
func (r *recorder) CopyIn(context.Context, pgwire.CopyFormat, int) (io.Reader, error) {
	return nil, sqlerr.New(sqlerr.FeatureNotSupported, "COPY cannot be prepared")
}

func sortRelations(rs []*catalog.Relation) {
	sort.Slice(rs, func(i, j int) bool { return rs[i].Name < rs[j].Name })
}

func errNoRelation(name string) error {
	return sqlerr.Errorf(sqlerr.UndefinedTable, "relation %q does not exist", name)
}
