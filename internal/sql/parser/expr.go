package parser

import (
	"fmt"
	"strings"
	"sync"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/sluice-db/sluice/internal/sqlerr"
)

// DeparseExpr returns SQL text for one expression node, as Postgres would
// print it. The catalog keeps column defaults in this form: text survives
// a change of pg_query's AST encoding, a serialized node would not.
func DeparseExpr(n *pg_query.Node) (string, error) {
	sel := &pg_query.SelectStmt{TargetList: []*pg_query.Node{
		{Node: &pg_query.Node_ResTarget{ResTarget: &pg_query.ResTarget{Val: n}}},
	}}
	version, err := treeVersion()
	if err != nil {
		return "", fmt.Errorf("parser: deparse expression: %w", err)
	}
	out, err := pg_query.Deparse(&pg_query.ParseResult{Version: version, Stmts: []*pg_query.RawStmt{
		{Stmt: &pg_query.Node{Node: &pg_query.Node_SelectStmt{SelectStmt: sel}}},
	}})
	if err != nil {
		return "", fmt.Errorf("parser: deparse expression: %w", err)
	}
	text, ok := strings.CutPrefix(out, "SELECT ")
	if !ok {
		return "", fmt.Errorf("parser: deparse expression: unexpected %q", out)
	}
	return text, nil
}

// treeVersion is the AST version of the linked parser, which Deparse
// checks; read once from a parse, since pg_query exports no constant.
var treeVersion = sync.OnceValues(func() (int32, error) {
	tree, err := pg_query.Parse("SELECT 1")
	if err != nil {
		return 0, err
	}
	return tree.Version, nil
})

// ParseExpr parses the text of one expression (as DeparseExpr wrote it).
func ParseExpr(text string) (*pg_query.Node, error) {
	tree, err := pg_query.Parse("SELECT " + text)
	if err != nil {
		return nil, sqlerr.Errorf(sqlerr.SyntaxError, "invalid expression %q: %v", text, err)
	}
	if len(tree.Stmts) != 1 {
		return nil, sqlerr.Errorf(sqlerr.SyntaxError, "invalid expression %q", text)
	}
	sel := tree.Stmts[0].Stmt.GetSelectStmt()
	if sel == nil || len(sel.TargetList) != 1 || len(sel.FromClause) > 0 {
		return nil, sqlerr.Errorf(sqlerr.SyntaxError, "invalid expression %q", text)
	}
	return sel.TargetList[0].GetResTarget().Val, nil
}
