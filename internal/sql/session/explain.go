package session

import (
	"context"
	"fmt"
	"strings"
	"time"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/sluice-db/sluice/internal/batch"
	"github.com/sluice-db/sluice/internal/engine"
	"github.com/sluice-db/sluice/internal/expr"
	"github.com/sluice-db/sluice/internal/pgwire"
	"github.com/sluice-db/sluice/internal/plan"
	"github.com/sluice-db/sluice/internal/sql/parser"
	"github.com/sluice-db/sluice/internal/sql/planner"
	"github.com/sluice-db/sluice/internal/sqlerr"
	"github.com/sluice-db/sluice/internal/types"
)

// explain prints a plan without running it: for CREATE MATERIALIZED VIEW
// the stream plan cut into fragments (each with its parallelism and how
// its output is dispatched), for a query the batch plan.
func (s *Session) explain(ctx context.Context, st *parser.Statement, ex *pg_query.ExplainStmt, w pgwire.ResultWriter) error {
	inner := *st
	inner.Node = ex.Query
	res, err := s.p.Plan(ctx, &inner)
	if err != nil {
		return err
	}
	var lines []string
	switch r := res.(type) {
	case *planner.CreateView:
		if lines, err = s.explainStream(r.Spec.Name, viewRoot(r.Spec)); err != nil {
			return err
		}
	case *planner.Query:
		lines = explainBatch(r)
	case *planner.Insert:
		lines = []string{"Insert { table: " + r.Table.Name + " }"}
		if r.Query != nil {
			lines = append(lines, indentLines(explainBatch(r.Query))...)
		}
	case *planner.Update:
		lines = append([]string{"Update { table: " + r.Table.Name + " }"}, indentLines(explainBatch(r.Query))...)
	case *planner.Delete:
		lines = append([]string{"Delete { table: " + r.Table.Name + " }"}, indentLines(explainBatch(r.Query))...)
	default:
		return sqlerr.Errorf(sqlerr.FeatureNotSupported, "EXPLAIN of %T is not supported", res)
	}
	return writePlan(ctx, w, lines)
}

func indentLines(ls []string) []string {
	out := make([]string, len(ls))
	for i, l := range ls {
		out[i] = "  " + l
	}
	return out
}

// viewRoot is the materialize a view's job puts over its plan.
func viewRoot(v engine.ViewSpec) *plan.Node {
	ts := make([]types.Type, len(v.Columns))
	for i, c := range v.Columns {
		ts[i] = c.Type
	}
	return &plan.Node{Kind: plan.KindMaterialize, Inputs: []*plan.Node{v.Plan}, Schema: ts,
		StreamKey: v.PK, Materialize: &plan.Materialize{Table: plan.Table{Types: ts, PK: v.PK, DistKey: v.PK}}}
}

// explainSink answers EXPLAIN CREATE SINK.
func (s *Session) explainSink(ctx context.Context, cs *planner.CreateSink, w pgwire.ResultWriter) error {
	lines, err := s.explainStream(cs.Spec.Name, plan.NewSink(cs.Spec.Plan, cs.Spec.Name, cs.Spec.Connector, cs.Spec.PK))
	if err != nil {
		return err
	}
	return writePlan(ctx, w, lines)
}

// writePlan writes an EXPLAIN's lines as its QUERY PLAN rows.
func writePlan(ctx context.Context, w pgwire.ResultWriter, lines []string) error {
	rows := make([]types.Row, len(lines))
	for i, l := range lines {
		rows[i] = types.Row{l}
	}
	return writeRows(ctx, w, textColumns("QUERY PLAN"), rows)
}

// explainStream fragments a job's plan (root: its materialize or sink)
// as CREATE would and prints each fragment.
func (s *Session) explainStream(name string, root *plan.Node) ([]string, error) {
	next := uint32(0)
	job, err := plan.Fragmentize(0, root, plan.FragmentOptions{
		Parallelism:    s.h.cfg.Parallelism,
		NextFragmentID: func() uint32 { next++; return next },
		Upstream:       s.upstreamFragment,
	})
	if err != nil {
		return nil, sqlerr.Errorf(sqlerr.FeatureNotSupported, "cannot plan %s: %v", name, err)
	}
	var lines []string
	for _, f := range job.Fragments {
		head := fmt.Sprintf("Fragment %d (parallelism %d", f.ID, f.Parallelism)
		if f.Singleton {
			head += ", singleton"
		}
		head += ")"
		for _, d := range f.Outputs {
			head += fmt.Sprintf(" dispatch %s%s to fragment %d", d.Kind, keyList(d.DistKey), d.Downstream)
		}
		lines = append(lines, head)
		lines = append(lines, nodeTree(f.Root, "  ")...)
	}
	for _, u := range job.Upstreams {
		name := s.tableName(u.TableID)
		lines = append(lines, fmt.Sprintf("Upstream %s: fragment %d → fragment %d (%s)", name, u.UpstreamFragment, u.Downstream, u.Kind))
	}
	return lines, nil
}

// upstreamFragment finds the materialize fragment of a table, as the
// engine does when it creates the job.
func (s *Session) upstreamFragment(tableID uint32) (plan.Upstream, error) {
	for _, r := range s.e.Catalog().All() {
		if r.Table.ID == tableID && r.Job.Plan != nil {
			if f := r.Job.Plan.Fragment(r.Job.MaterializeFragment); f != nil {
				return plan.Upstream{Fragment: f.ID, Parallelism: f.Parallelism}, nil
			}
		}
	}
	return plan.Upstream{}, sqlerr.Errorf(sqlerr.UndefinedTable, "upstream table %d does not exist", tableID)
}

func (s *Session) tableName(tableID uint32) string {
	for _, r := range s.e.Catalog().All() {
		if r.Table.ID == tableID {
			return r.Name
		}
	}
	return fmt.Sprintf("table %d", tableID)
}

func explainBatch(q *planner.Query) []string {
	head := "BatchQuery"
	var attrs []string
	if len(q.OrderBy) > 0 {
		attrs = append(attrs, "order: "+orderList(q.OrderBy))
	}
	if q.Limit >= 0 {
		attrs = append(attrs, fmt.Sprintf("limit: %d", q.Limit))
	}
	if q.Offset > 0 {
		attrs = append(attrs, fmt.Sprintf("offset: %d", q.Offset))
	}
	if len(attrs) > 0 {
		head += " { " + strings.Join(attrs, ", ") + " }"
	}
	return append([]string{head}, nodeTree(q.Plan, "  ")...)
}

// nodeTree prints n and its inputs, one node per line.
func nodeTree(n *plan.Node, indent string) []string {
	lines := []string{indent + nodeLine(n)}
	for _, in := range n.Inputs {
		lines = append(lines, nodeTree(in, indent+"  ")...)
	}
	return lines
}

func nodeLine(n *plan.Node) string {
	var info string
	switch n.Kind {
	case plan.KindBackfill:
		info = fmt.Sprintf("table: %d, columns: %s", n.Backfill.Upstream.ID, keyList(n.Backfill.Columns))
	case plan.KindProject:
		info = "exprs: " + descList(n.Project.Exprs)
	case plan.KindFilter:
		info = "predicate: " + descString(n.Filter.Cond)
		if lk := batch.DescribeLookup(n); lk != "" {
			info += ", " + lk
		}
	case plan.KindHashJoin:
		j := n.HashJoin
		info = fmt.Sprintf("type: %s, left keys: %s, right keys: %s", j.Type, keyList(j.LeftKeys), keyList(j.RightKeys))
		if j.Residual != nil {
			info += ", residual: " + descString(*j.Residual)
		}
		info += expiryString("left", "right", j.LeftExpiry) + expiryString("right", "left", j.RightExpiry)
		info += joinOutputString(j.Output)
	case plan.KindHashAgg, plan.KindSimpleAgg:
		info = aggInfo(n.Agg)
		if n.Agg.EmitOnWindowClose {
			info += ", emit on window close"
		}
	case plan.KindLocalAgg:
		info = aggInfo(n.LocalAgg)
	case plan.KindTopN:
		info = fmt.Sprintf("order: %s, limit: %d, offset: %d", orderList(n.TopN.OrderBy), n.TopN.Limit, n.TopN.Offset)
		if len(n.TopN.GroupKeys) > 0 {
			info += ", group keys: " + keyList(n.TopN.GroupKeys)
		}
	case plan.KindOverWindow:
		info = overWindowString(n.OverWindow)
	case plan.KindDistinct:
		info = "keys: " + keyList(n.Distinct.Keys)
	case plan.KindMaterialize:
		info = "pk: " + keyList(n.Materialize.Table.PK)
	case plan.KindSink:
		info = "sink: " + n.Sink.Name + ", connector: " + n.Sink.Spec.Connector
	case plan.KindMerge:
		info = fmt.Sprintf("from fragment %d", n.Merge.UpstreamFragment)
		if n.Merge.Port > 0 {
			info += fmt.Sprintf(" port %d", n.Merge.Port)
		}
	case plan.KindValues:
		info = fmt.Sprintf("rows: %d", len(n.Values.Rows))
	case plan.KindSystemScan:
		info = "relation: " + n.SystemScan.Schema + "." + n.SystemScan.Relation
	case plan.KindApply:
		info = "per outer row: " + string(n.Apply.Mode)
	case plan.KindTableSource:
		info = fmt.Sprintf("table: %d", n.TableSource.TableID)
	case plan.KindHopWindow:
		h := n.HopWindow
		info = fmt.Sprintf("time: $%d, slide: %v, size: %v", h.TimeCol, time.Duration(h.Slide)*time.Microsecond,
			time.Duration(h.Size)*time.Microsecond)
	case plan.KindConnectorSource:
		c := n.Connector
		info = fmt.Sprintf("source: %s, connector: %s, splits: %d, append only", c.Name, c.Spec.Connector, c.Splits)
	case plan.KindTemporalFilter:
		tf := n.TemporalFilter
		info = fmt.Sprintf("$%d %s %s", tf.Col, tf.Op, descString(tf.Bound))
	case plan.KindWatermarkFilter:
		w := n.WatermarkFilter
		info = fmt.Sprintf("column: $%d, watermark: %s", w.Col, descString(w.Expr))
	}
	if len(n.Watermarks) > 0 {
		info = joinInfo(info, "output watermarks: "+keyList(n.Watermarks))
	}
	if n.AppendOnly && n.Kind != plan.KindConnectorSource {
		info = joinInfo(info, "append only")
	}
	name := kindName(n.Kind)
	if info == "" {
		return name
	}
	return name + " { " + info + " }"
}

func joinInfo(a, b string) string {
	if a == "" {
		return b
	}
	return a + ", " + b
}

func kindName(k plan.Kind) string {
	parts := strings.Split(string(k), "_")
	for i, p := range parts {
		parts[i] = strings.ToUpper(p[:1]) + p[1:]
	}
	return strings.Join(parts, "")
}

// joinOutputString shows a join's output columns unless they are its
// inputs' columns in order: NULL where an input column was dropped
// (plan.NullUnread).
func joinOutputString(out []int) string {
	s := make([]string, len(out))
	identity := true
	for i, c := range out {
		identity = identity && c == i
		s[i] = fmt.Sprintf("$%d", c)
		if c < 0 {
			s[i] = "NULL"
		}
	}
	if identity {
		return ""
	}
	return ", output: [" + strings.Join(s, ", ") + "]"
}

func keyList(ks []int) string {
	s := make([]string, len(ks))
	for i, k := range ks {
		s[i] = fmt.Sprintf("$%d", k)
	}
	return "[" + strings.Join(s, ", ") + "]"
}

func orderList(os []plan.ColumnOrder) string {
	s := make([]string, len(os))
	for i, o := range os {
		s[i] = fmt.Sprintf("$%d", o.Column)
		if o.Order.Desc {
			s[i] += " DESC"
		}
	}
	return "[" + strings.Join(s, ", ") + "]"
}

func aggInfo(a *plan.Agg) string {
	var calls []string
	for _, c := range a.Calls {
		calls = append(calls, aggString(c))
	}
	return fmt.Sprintf("group keys: %s, aggs: [%s]", keyList(a.GroupKeys), strings.Join(calls, ", "))
}

func aggString(c plan.AggCall) string {
	args := keyList(c.Args)
	if c.Kind == plan.AggCountStar {
		args = "[*]"
	}
	s := string(c.Kind) + "(" + strings.Trim(args, "[]") + ")"
	if c.Distinct {
		s = string(c.Kind) + "(DISTINCT " + strings.Trim(args, "[]") + ")"
	}
	if c.Filter != nil {
		s += " FILTER (" + descString(*c.Filter) + ")"
	}
	return s
}

func descList(ds []expr.Desc) string {
	s := make([]string, len(ds))
	for i, d := range ds {
		s[i] = descString(d)
	}
	return "[" + strings.Join(s, ", ") + "]"
}

// descString renders an expression compactly: $i for inputs, literals as
// text, operators infix.
func descString(d expr.Desc) string {
	switch d.Kind {
	case expr.KindInput:
		return fmt.Sprintf("$%d", d.Index)
	case expr.KindOuter:
		return fmt.Sprintf("outer.$%d", d.Index)
	case expr.KindLiteral:
		if d.Value == nil {
			return "NULL"
		}
		if d.Type.ID == types.Varchar {
			return "'" + *d.Value + "'"
		}
		return *d.Value
	case expr.KindCast:
		return descString(d.Args[0]) + "::" + d.Type.String()
	case expr.KindFunc:
		if len(d.Args) == 2 && !isWord(d.Name) {
			return "(" + descString(d.Args[0]) + " " + d.Name + " " + descString(d.Args[1]) + ")"
		}
		return d.Name + "(" + strings.Trim(descList(d.Args), "[]") + ")"
	}
	return string(d.Kind) + "(" + strings.Trim(descList(d.Args), "[]") + ")"
}

func isWord(s string) bool {
	for _, r := range s {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return s != ""
}

// expiryString describes a join side's expiry: its rows go when their
// column is below the bound, $0 in it standing for the other side's
// watermark.
func expiryString(side, other string, e *plan.JoinExpiry) string {
	if e == nil {
		return ""
	}
	return fmt.Sprintf(", %s expires: $%d < %s with $0 = %s watermark on $%d", side, e.Col, descString(e.Bound), other, e.WatermarkCol)
}
