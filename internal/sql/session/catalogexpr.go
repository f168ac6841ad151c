package session

import (
	"regexp"
	"slices"
	"strconv"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/sluice-db/sluice/internal/types"
)

// env is the row an expression of a catalog query is evaluated against:
// the current row of a frame, the enclosing query's row for correlated
// subqueries, and the group (aggregates) or all rows (window functions).
type env struct {
	c       *catEval
	cols    []qcol
	row     []any
	outer   *env
	group   [][]any
	grouped bool
	all     [][]any
	idx     int
	// unbound, when set, records a column reference nothing binds (see
	// fromWhere); it is inherited by subqueries through outer.
	unbound *bool
}

// lookup resolves a column reference; an unknown column reads as NULL.
func (e *env) lookup(fields []string) any {
	name := fields[len(fields)-1]
	qual := ""
	if len(fields) > 1 {
		qual = fields[len(fields)-2]
	}
	for x := e; x != nil; x = x.outer {
		if i := e.c.colIndex(x.cols, qual, name); i >= 0 && i < len(x.row) {
			return x.row[i]
		}
	}
	for x := e; x != nil; x = x.outer {
		if x.unbound != nil {
			*x.unbound = true
			break
		}
	}
	return nil
}

// colKey identifies a name lookup in one frame's column list.
type colKey struct {
	cols       *qcol
	n          int
	qual, name string
}

// colIndex finds the column qual.name (any qualifier when qual is empty)
// in cols, -1 if absent; lookups repeat for every row, so they are
// memoised per column list.
func (c *catEval) colIndex(cols []qcol, qual, name string) int {
	if len(cols) == 0 {
		return -1
	}
	k := colKey{cols: &cols[0], n: len(cols), qual: qual, name: name}
	if i, ok := c.colIdx[k]; ok {
		return i
	}
	i := slices.IndexFunc(cols, func(q qcol) bool {
		return strings.EqualFold(q.name, name) && (qual == "" || strings.EqualFold(q.qual, qual))
	})
	c.colIdx[k] = i
	return i
}

func (e *env) with(row []any) *env {
	return &env{c: e.c, cols: e.cols, row: row, outer: e.outer}
}

func (e *env) eval(n *pg_query.Node) any {
	if n == nil {
		return nil
	}
	switch x := n.Node.(type) {
	case *pg_query.Node_ColumnRef:
		var fields []string
		for _, f := range x.ColumnRef.Fields {
			fields = append(fields, f.GetString_().GetSval())
		}
		return e.lookup(fields)
	case *pg_query.Node_AConst:
		return constValue(x.AConst)
	case *pg_query.Node_TypeCast:
		return e.cast(e.eval(x.TypeCast.Arg), x.TypeCast.TypeName)
	case *pg_query.Node_AExpr:
		return e.aexpr(x.AExpr)
	case *pg_query.Node_BoolExpr:
		return e.boolExpr(x.BoolExpr)
	case *pg_query.Node_NullTest:
		isNull := e.eval(x.NullTest.Arg) == nil
		return isNull == (x.NullTest.Nulltesttype == pg_query.NullTestType_IS_NULL)
	case *pg_query.Node_BooleanTest:
		return e.boolTest(x.BooleanTest)
	case *pg_query.Node_CaseExpr:
		return e.caseExpr(x.CaseExpr)
	case *pg_query.Node_CoalesceExpr:
		for _, a := range x.CoalesceExpr.Args {
			if v := e.eval(a); v != nil {
				return v
			}
		}
		return nil
	case *pg_query.Node_FuncCall:
		return e.funcCall(x.FuncCall)
	case *pg_query.Node_SqlvalueFunction:
		_, v := e.c.s.sessionValue(n)
		return v
	case *pg_query.Node_SubLink:
		return e.subLink(x.SubLink)
	case *pg_query.Node_AArrayExpr:
		return e.list(x.AArrayExpr.Elements)
	case *pg_query.Node_RowExpr:
		return e.list(x.RowExpr.Args)
	case *pg_query.Node_List:
		return e.list(x.List.Items)
	case *pg_query.Node_CollateClause:
		return e.eval(x.CollateClause.Arg)
	}
	return nil
}

func (e *env) list(items []*pg_query.Node) []any {
	out := []any{}
	for _, it := range items {
		out = append(out, e.eval(it))
	}
	return out
}

func constValue(c *pg_query.A_Const) any {
	switch v := c.Val.(type) {
	case *pg_query.A_Const_Ival:
		return int64(v.Ival.Ival)
	case *pg_query.A_Const_Sval:
		return v.Sval.Sval
	case *pg_query.A_Const_Fval:
		return v.Fval.Fval
	case *pg_query.A_Const_Boolval:
		return v.Boolval.Boolval
	}
	return nil
}

func typeNameOf(tn *pg_query.TypeName) string {
	if tn == nil || len(tn.Names) == 0 {
		return ""
	}
	name := tn.Names[len(tn.Names)-1].GetString_().GetSval()
	if len(tn.ArrayBounds) > 0 {
		return name + "[]"
	}
	return name
}

// cast converts v to a type; reg* casts of names resolve to OIDs.
func (e *env) cast(v any, tn *pg_query.TypeName) any {
	if v == nil {
		return nil
	}
	name := typeNameOf(tn)
	switch name {
	case "regclass":
		if s, ok := v.(string); ok {
			return e.c.s.relOID(s)
		}
		return toInt(v)
	case "regtype":
		if s, ok := v.(string); ok {
			if t, ok := typeByName(s); ok {
				return t.oid
			}
			return nil
		}
		return toInt(v)
	case "regnamespace":
		if s, ok := v.(string); ok {
			return map[string]any{"pg_catalog": int64(oidPgCatalog), "public": int64(oidPublic),
				"information_schema": int64(oidInfoSchema)}[s]
		}
		return toInt(v)
	}
	switch typeClass(name) {
	case types.Int64:
		return toInt(v)
	case types.Bool:
		return toBool(v)
	case types.Varchar:
		return toText(v)
	}
	return v
}

// typeClass maps a type name to the evaluator's three value kinds
// (Unknown for types passed through unchanged).
func typeClass(name string) types.ID {
	switch name {
	case "int2", "int4", "int8", "oid", "regclass", "regtype", "regproc", "regnamespace", "xid", "int", "integer", "bigint", "smallint":
		return types.Int64
	case "bool", "boolean":
		return types.Bool
	case "text", "varchar", "name", "char", "bpchar", "character varying":
		return types.Varchar
	}
	return types.Unknown
}

func (s *Session) relOID(name string) any {
	name = strings.Trim(strings.TrimPrefix(strings.TrimPrefix(name, "public."), `"public".`), `"`)
	if r, ok := s.e.Catalog().ByName(name); ok {
		return int64(r.ID)
	}
	// System catalogs get stable made-up OIDs so joins on them still work.
	return int64(1000000 + len(name))
}

func (e *env) boolExpr(b *pg_query.BoolExpr) any {
	switch b.Boolop {
	case pg_query.BoolExprType_NOT_EXPR:
		v := e.eval(b.Args[0])
		if v == nil {
			return nil
		}
		return !truthy(v)
	case pg_query.BoolExprType_AND_EXPR:
		var res any = true
		for _, a := range b.Args {
			v := e.eval(a)
			if v == nil {
				res = nil
			} else if !truthy(v) {
				return false
			}
		}
		return res
	default:
		var res any = false
		for _, a := range b.Args {
			v := e.eval(a)
			if v == nil {
				res = nil
			} else if truthy(v) {
				return true
			}
		}
		return res
	}
}

func (e *env) boolTest(b *pg_query.BooleanTest) any {
	v := e.eval(b.Arg)
	switch b.Booltesttype {
	case pg_query.BoolTestType_IS_TRUE:
		return v != nil && truthy(v)
	case pg_query.BoolTestType_IS_NOT_TRUE:
		return v == nil || !truthy(v)
	case pg_query.BoolTestType_IS_FALSE:
		return v != nil && !truthy(v)
	case pg_query.BoolTestType_IS_NOT_FALSE:
		return v == nil || truthy(v)
	case pg_query.BoolTestType_IS_UNKNOWN:
		return v == nil
	}
	return v != nil
}

func (e *env) caseExpr(c *pg_query.CaseExpr) any {
	var arg any
	if c.Arg != nil {
		arg = e.eval(c.Arg)
	}
	for _, w := range c.Args {
		cw := w.GetCaseWhen()
		v := e.eval(cw.Expr)
		if c.Arg != nil {
			k, ok := compare(arg, v)
			v = ok && k == 0
		}
		if v != nil && truthy(v) {
			return e.eval(cw.Result)
		}
	}
	return e.eval(c.Defresult)
}

func (e *env) subLink(sl *pg_query.SubLink) any {
	f, err := e.c.selectStmt(sl.Subselect.GetSelectStmt(), e)
	if err != nil {
		return nil
	}
	switch sl.SubLinkType {
	case pg_query.SubLinkType_EXISTS_SUBLINK:
		return len(f.rows) > 0
	case pg_query.SubLinkType_ARRAY_SUBLINK:
		out := []any{}
		for _, r := range f.rows {
			out = append(out, r[0])
		}
		return out
	case pg_query.SubLinkType_ANY_SUBLINK, pg_query.SubLinkType_ALL_SUBLINK:
		op := "="
		if len(sl.OperName) > 0 {
			op = sl.OperName[len(sl.OperName)-1].GetString_().GetSval()
		}
		var vals []any
		for _, r := range f.rows {
			vals = append(vals, r[0])
		}
		return e.quantified(e.eval(sl.Testexpr), op, vals, sl.SubLinkType == pg_query.SubLinkType_ALL_SUBLINK)
	}
	if len(f.rows) == 0 || len(f.rows[0]) == 0 {
		return nil
	}
	return f.rows[0][0]
}

// quantified evaluates l op ANY/ALL (vals).
func (e *env) quantified(l any, op string, vals []any, all bool) any {
	if l == nil {
		return nil
	}
	sawNull := false
	for _, v := range vals {
		r := e.binop(op, l, v)
		if r == nil {
			sawNull = true
			continue
		}
		if truthy(r) != all {
			return !all
		}
	}
	if sawNull {
		return nil
	}
	return all
}

func (e *env) aexpr(a *pg_query.A_Expr) any {
	op := ""
	if len(a.Name) > 0 {
		op = a.Name[len(a.Name)-1].GetString_().GetSval()
	}
	switch a.Kind {
	case pg_query.A_Expr_Kind_AEXPR_IN:
		// x IN (…) is = ANY, x NOT IN (…) is <> ALL.
		return e.quantified(e.eval(a.Lexpr), op, toList(e.eval(a.Rexpr)), op == "<>")
	case pg_query.A_Expr_Kind_AEXPR_OP_ANY, pg_query.A_Expr_Kind_AEXPR_OP_ALL:
		return e.quantified(e.eval(a.Lexpr), op, toList(e.eval(a.Rexpr)), a.Kind == pg_query.A_Expr_Kind_AEXPR_OP_ALL)
	case pg_query.A_Expr_Kind_AEXPR_NULLIF:
		l := e.eval(a.Lexpr)
		if k, ok := compare(l, e.eval(a.Rexpr)); ok && k == 0 {
			return nil
		}
		return l
	case pg_query.A_Expr_Kind_AEXPR_DISTINCT, pg_query.A_Expr_Kind_AEXPR_NOT_DISTINCT:
		l, r := e.eval(a.Lexpr), e.eval(a.Rexpr)
		k, ok := compare(l, r)
		same := (l == nil && r == nil) || (ok && k == 0)
		return same == (a.Kind == pg_query.A_Expr_Kind_AEXPR_NOT_DISTINCT)
	case pg_query.A_Expr_Kind_AEXPR_BETWEEN, pg_query.A_Expr_Kind_AEXPR_NOT_BETWEEN:
		v, bounds := e.eval(a.Lexpr), toList(e.eval(a.Rexpr))
		if len(bounds) != 2 {
			return nil
		}
		lo, hi := e.binop(">=", v, bounds[0]), e.binop("<=", v, bounds[1])
		if lo == nil || hi == nil {
			return nil
		}
		return (truthy(lo) && truthy(hi)) == (a.Kind == pg_query.A_Expr_Kind_AEXPR_BETWEEN)
	}
	if a.Lexpr == nil {
		v := e.eval(a.Rexpr)
		if op == "-" {
			if i, ok := toInt(v).(int64); ok {
				return -i
			}
		}
		return v
	}
	return e.binop(op, e.eval(a.Lexpr), e.eval(a.Rexpr))
}

// binop applies a binary operator; NULL in gives NULL out.
func (e *env) binop(op string, l, r any) any {
	if l == nil || r == nil {
		return nil
	}
	switch op {
	case "=", "<>", "!=", "<", ">", "<=", ">=":
		k, ok := compare(l, r)
		if !ok {
			return nil
		}
		return map[string]bool{"=": k == 0, "<>": k != 0, "!=": k != 0, "<": k < 0, ">": k > 0, "<=": k <= 0, ">=": k >= 0}[op]
	case "~", "!~", "~*", "!~*":
		return e.match(toText(l).(string), toText(r).(string), strings.HasSuffix(op, "*"), false, strings.HasPrefix(op, "!"))
	case "~~", "!~~", "~~*", "!~~*":
		return e.match(toText(l).(string), toText(r).(string), strings.HasSuffix(op, "*"), true, strings.HasPrefix(op, "!"))
	case "||":
		return toText(l).(string) + toText(r).(string)
	case "+", "-", "*":
		li, lok := toInt(l).(int64)
		ri, rok := toInt(r).(int64)
		if !lok || !rok {
			return nil
		}
		return map[string]int64{"+": li + ri, "-": li - ri, "*": li * ri}[op]
	}
	return nil
}

// match applies a regular expression (Postgres ARE, close enough to RE2
// for catalog patterns) or a LIKE pattern.
func (e *env) match(s, pattern string, fold, like, negate bool) any {
	if like {
		pattern = likeRegexp(pattern)
	}
	if fold {
		pattern = "(?i)" + pattern
	}
	re, ok := e.c.regexps[pattern]
	if !ok {
		re, _ = regexp.Compile(pattern) // nil (no match, NULL) when invalid
		e.c.regexps[pattern] = re
	}
	if re == nil {
		return nil
	}
	return re.MatchString(s) != negate
}

func likeRegexp(p string) string {
	var b strings.Builder
	b.WriteString("^(?s:")
	for i := 0; i < len(p); i++ {
		switch ch := p[i]; ch {
		case '%':
			b.WriteString(".*")
		case '_':
			b.WriteString(".")
		case '\\':
			if i+1 < len(p) {
				i++
				b.WriteString(regexp.QuoteMeta(p[i : i+1]))
			}
		default:
			b.WriteString(regexp.QuoteMeta(p[i : i+1]))
		}
	}
	b.WriteString(")$")
	return b.String()
}

// compare orders two non-NULL values, converting between the kinds when
// one side is a string literal.
func compare(a, b any) (int, bool) {
	if a == nil || b == nil {
		return 0, false
	}
	switch x := a.(type) {
	case int64:
		y, ok := toInt(b).(int64)
		if !ok {
			return strings.Compare(toText(a).(string), toText(b).(string)), true
		}
		return cmpInt(x, y), true
	case bool:
		y, ok := toBool(b).(bool)
		if !ok {
			return 0, false
		}
		return cmpInt(b2i(x), b2i(y)), true
	}
	if _, ok := b.(int64); ok {
		k, ok := compare(b, a)
		return -k, ok
	}
	if _, ok := b.(bool); ok {
		k, ok := compare(b, a)
		return -k, ok
	}
	return strings.Compare(toText(a).(string), toText(b).(string)), true
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

func truthy(v any) bool {
	b, _ := toBool(v).(bool)
	return b
}

func toInt(v any) any {
	switch x := v.(type) {
	case int64:
		return x
	case bool:
		return b2i(x)
	case string:
		i, err := strconv.ParseInt(strings.TrimSpace(x), 10, 64)
		if err != nil {
			return nil
		}
		return i
	}
	return nil
}

func toBool(v any) any {
	switch x := v.(type) {
	case bool:
		return x
	case int64:
		return x != 0
	case string:
		switch strings.ToLower(strings.TrimSpace(x)) {
		case "t", "true", "yes", "on", "1":
			return true
		case "f", "false", "no", "off", "0":
			return false
		}
	}
	return nil
}

func toText(v any) any {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case int64:
		return strconv.FormatInt(x, 10)
	case bool:
		if x {
			return "true"
		}
		return "false"
	case []any:
		parts := make([]string, len(x))
		for i, it := range x {
			if it == nil {
				parts[i] = "NULL"
			} else {
				parts[i] = toText(it).(string)
			}
		}
		return "{" + strings.Join(parts, ",") + "}"
	}
	return ""
}

// toList reads an array value: a list, or its text form {a,b}.
func toList(v any) []any {
	switch x := v.(type) {
	case []any:
		return x
	case string:
		x = strings.TrimSuffix(strings.TrimPrefix(x, "{"), "}")
		if x == "" {
			return nil
		}
		var out []any
		for _, p := range strings.Split(x, ",") {
			out = append(out, strings.Trim(p, `"`))
		}
		return out
	}
	return nil
}

// convert gives a value the Go form of its result column's type.
func convert(v any, t types.Type) types.Datum {
	if v == nil {
		return nil
	}
	switch t.ID {
	case types.Int64:
		if i, ok := toInt(v).(int64); ok {
			return i
		}
		return nil
	case types.Bool:
		if b, ok := toBool(v).(bool); ok {
			return b
		}
		return nil
	}
	if b, ok := v.(bool); ok {
		return map[bool]string{true: "t", false: "f"}[b]
	}
	return toText(v)
}

// exprType is the result type of an expression, from its form alone.
func exprType(n *pg_query.Node, src []qcol) types.Type {
	switch x := n.Node.(type) {
	case *pg_query.Node_ColumnRef:
		f := x.ColumnRef.Fields
		name := f[len(f)-1].GetString_().GetSval()
		qual := ""
		if len(f) > 1 {
			qual = f[len(f)-2].GetString_().GetSval()
		}
		for _, q := range src {
			if strings.EqualFold(q.name, name) && (qual == "" || strings.EqualFold(q.qual, qual)) {
				return q.typ
			}
		}
	case *pg_query.Node_AConst:
		switch x.AConst.Val.(type) {
		case *pg_query.A_Const_Ival:
			return types.TInt64
		case *pg_query.A_Const_Boolval:
			return types.TBool
		}
	case *pg_query.Node_TypeCast:
		switch typeClass(typeNameOf(x.TypeCast.TypeName)) {
		case types.Int64:
			return types.TInt64
		case types.Bool:
			return types.TBool
		case types.Varchar:
			return types.TVarchar
		}
		return exprType(x.TypeCast.Arg, src)
	case *pg_query.Node_BoolExpr, *pg_query.Node_NullTest, *pg_query.Node_BooleanTest:
		return types.TBool
	case *pg_query.Node_AExpr:
		return aexprType(x.AExpr, src)
	case *pg_query.Node_SubLink:
		if x.SubLink.SubLinkType != pg_query.SubLinkType_EXPR_SUBLINK && x.SubLink.SubLinkType != pg_query.SubLinkType_ARRAY_SUBLINK {
			return types.TBool
		}
	case *pg_query.Node_CaseExpr:
		if len(x.CaseExpr.Args) > 0 {
			return exprType(x.CaseExpr.Args[0].GetCaseWhen().Result, src)
		}
	case *pg_query.Node_CoalesceExpr:
		return exprType(x.CoalesceExpr.Args[0], src)
	case *pg_query.Node_FuncCall:
		return funcType(x.FuncCall, src)
	}
	return types.TVarchar
}

func aexprType(a *pg_query.A_Expr, src []qcol) types.Type {
	if a.Kind == pg_query.A_Expr_Kind_AEXPR_NULLIF {
		return exprType(a.Lexpr, src)
	}
	op := ""
	if len(a.Name) > 0 {
		op = a.Name[len(a.Name)-1].GetString_().GetSval()
	}
	switch op {
	case "+", "-", "*":
		return types.TInt64
	case "||":
		return types.TVarchar
	}
	return types.TBool
}
