package parser

import (
	"sync/atomic"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	pgparser "github.com/pganalyze/pg_query_go/v6/parser"
	"google.golang.org/protobuf/proto"

	"github.com/sluice-db/sluice/internal/sqlerr"
)

// A statement's syntax tree can be as deep as the statement is long:
// Postgres's grammar builds a chain of left-associative operators
// (1+1+…+1, x::int::int…, a UNION b UNION …) iteratively, one level per
// operator. pg_query then serializes the tree recursively on the C stack,
// and 30 000 terms overflowed it (SIGSEGV: every session lost). Postgres
// itself stops such a statement with 54001 once its own recursion gets too
// deep. Nesting that uses the parser's own stack (parentheses, prefix
// operators, nested CASE) is bounded by the grammar: past about 10 000
// levels it fails with "memory exhausted", a syntax error.
//
// So before parsing, nestingBound bounds the tree's depth from the
// tokens, and a statement whose bound exceeds maxNesting is refused with
// 54001. The bound is the largest, over every path of nested parentheses
// or brackets, of the number of tokens on it that are not separated by a
// comma, AND or OR at the same level: a list's elements and the operands
// of AND and OR (which the grammar flattens into one node) nest side by
// side, every other token adds at most one level, and each parenthesised
// group one more. The operands of UNION, INTERSECT and EXCEPT are parts
// too, and each of those operators, and each JOIN, adds one level to them
// all. A million-item IN list or OR chain is shallow and passes; the bound
// never undercounts, so whatever passes is safe to serialize.

// maxNesting is the largest nesting bound parsed. Postgres (2 MB of stack)
// evaluates 1+1+…+1 up to about 4 000 terms, a bound of 8 000; the C
// serializer overflows past about 50 000 levels.
const maxNesting = 10000

// nestingBound returns an upper bound of the depth of the tree of the
// statement made of toks (see above).
func nestingBound(toks []*pg_query.ScanToken) int {
	stack := []nestLevel{{}}
	top := &stack[0]
	for _, t := range toks {
		switch t.Token {
		case pg_query.Token_ASCII_40, pg_query.Token_ASCII_91: // ( [
			stack = append(stack, nestLevel{})
			top = &stack[len(stack)-1]
		case pg_query.Token_ASCII_41, pg_query.Token_ASCII_93: // ) ]
			if len(stack) == 1 {
				continue // unbalanced: the parser will say so
			}
			depth := top.depth() + 1
			stack = stack[:len(stack)-1]
			top = &stack[len(stack)-1]
			top.deepest = max(top.deepest, depth)
		case pg_query.Token_ASCII_44, pg_query.Token_OR: // , OR
			top.endPart()
		case pg_query.Token_AND:
			if top.between {
				top.between = false
				top.part++
				continue
			}
			top.endPart()
		case pg_query.Token_UNION, pg_query.Token_INTERSECT, pg_query.Token_EXCEPT:
			top.endPart()
			top.chains++
		case pg_query.Token_JOIN:
			top.part++
			top.chains++
		case pg_query.Token_BETWEEN:
			top.between = true
			top.part++
		default:
			top.part++
		}
	}
	for len(stack) > 1 { // unbalanced: close what is open
		depth := top.depth() + 1
		stack = stack[:len(stack)-1]
		top = &stack[len(stack)-1]
		top.deepest = max(top.deepest, depth)
	}
	return top.depth()
}

// nestLevel is nestingBound's state for one level of parentheses.
type nestLevel struct {
	part    int  // tokens in the current part
	deepest int  // the deepest group nested in the current part
	best    int  // the deepest finished part
	between bool // a BETWEEN awaits its AND
	chains  int  // UNION, INTERSECT, EXCEPT and JOIN at this level
}

// endPart finishes the current part at a separator.
func (l *nestLevel) endPart() {
	l.best = max(l.best, l.part+l.deepest)
	l.part, l.deepest, l.between = 0, 0, false
}

// depth bounds the depth of the level's parts so far.
// A chain of set operations or joins nests one level per operator, over
// operands no deeper than its deepest part (a join's ON condition may hold
// AND, which ends a part but not the chain).
func (l *nestLevel) depth() int { return max(l.best, l.part+l.deepest) + l.chains }

// checkNesting refuses a statement whose tree may be too deep to handle.
func checkNesting(sql string, p piece) error {
	if len(p.toks) <= maxNesting {
		return nil // a tree is never deeper than its statement is long
	}
	if n := nestingBound(p.toks); n > maxNesting {
		e := sqlerr.Errorf(sqlerr.StatementTooComplex,
			"statement too complex: its expressions nest up to %d levels deep, more than the %d allowed", n, maxNesting)
		e.Hint = "Split long chains of operators (a + b + c …, x UNION y UNION z …) into smaller statements, or use a list (IN (…), VALUES) or an aggregate instead."
		e.Position = Position(sql, p.start)
		return e
	}
	return nil
}

// unmarshalTree decodes pg_query's protobuf tree. Its default recursion
// limit (10 000 messages, two per level of an expression) refused trees
// that Postgres and checkNesting accept.
var unmarshalTree = proto.UnmarshalOptions{RecursionLimit: 8 * maxNesting}

// treesParsed counts parseTree's calls (tests check that a text is
// parsed once).
var treesParsed atomic.Int64

// parseTree is pg_query.Parse with unmarshalTree.
func parseTree(sql string) (*pg_query.ParseResult, error) {
	treesParsed.Add(1)
	buf, err := pgparser.ParseToProtobuf(sql)
	if err != nil {
		return nil, err
	}
	tree := &pg_query.ParseResult{}
	if err := unmarshalTree.Unmarshal(buf, tree); err != nil {
		return nil, sqlerr.Errorf(sqlerr.StatementTooComplex, "statement too complex: %v", err)
	}
	return tree, nil
}
