package sqllogic

import (
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
)

// Rendering of special values, as the postgres engine of sqllogictest-rs
// prints them.
const (
	nullText  = "NULL"
	emptyText = "(empty)"
)

// cell is one result value in its sqllogictest spelling, with the column's
// type OID so semantic comparison knows which readings are legitimate.
type cell struct {
	text string
	oid  uint32
}

// renderValue turns a text-format wire value (nil = NULL) into its
// sqllogictest spelling.
func renderValue(v []byte) string {
	switch {
	case v == nil:
		return nullText
	case len(v) == 0:
		return emptyText
	}
	return string(v)
}

func compareCells(a, b []cell) int {
	return slices.CompareFunc(a, b, func(x, y cell) int { return strings.Compare(x.text, y.text) })
}

func isASCIISpace(r rune) bool {
	return r == ' ' || r == '\t' || r == '\n' || r == '\f' || r == '\r'
}

// normalize trims a value or line and collapses internal whitespace runs to
// one space (Rust's split_ascii_whitespace().join(" ")).
func normalize(s string) string {
	return strings.Join(strings.FieldsFunc(s, isASCIISpace), " ")
}

// shape is the comparison form of a result: the rows after sorting, result
// mode and hashing, one []string per expected line.
type shape struct {
	rows   [][]cell
	hashed bool
}

// shapeRows orders and reshapes actual rows exactly as the Rust runner does:
// rowsort sorts whole rows by their raw strings, valuesort sorts single
// values (one per line), valuewise prints one value per line, and results
// with more than threshold values become one "N values hashing to H" line.
func shapeRows(rows [][]cell, mode SortMode, valuewise bool, threshold int) shape {
	rows = slices.Clone(rows)
	switch mode {
	case RowSort:
		slices.SortFunc(rows, compareCells)
	case ValueSort:
		rows = flatten(rows)
		slices.SortFunc(rows, compareCells)
	}
	if valuewise {
		rows = flatten(rows)
	}
	n := 0
	for _, r := range rows {
		n += len(r)
	}
	if threshold > 0 && n > threshold {
		h := md5.New()
		for _, r := range rows {
			for _, v := range r {
				h.Write([]byte(v.text))
				h.Write([]byte{'\n'})
			}
		}
		line := fmt.Sprintf("%d values hashing to %s", n, hex.EncodeToString(h.Sum(nil)))
		return shape{rows: [][]cell{{{text: line}}}, hashed: true}
	}
	return shape{rows: rows}
}

func flatten(rows [][]cell) [][]cell {
	var out [][]cell
	for _, r := range rows {
		for _, v := range r {
			out = append(out, []cell{v})
		}
	}
	return out
}

// lines renders a shape as the normalised lines it is compared as.
func (s shape) lines() []string {
	out := make([]string, len(s.rows))
	for i, r := range s.rows {
		vals := make([]string, len(r))
		for j, v := range r {
			vals[j] = normalize(v.text)
		}
		out[i] = strings.Join(vals, " ")
	}
	return out
}

// Match is the outcome of comparing a result with the expected lines.
type Match int

// Match outcomes.
const (
	Mismatch Match = iota
	Exact
	// Semantic: equal only after comparing values as numbers, instants or
	// intervals (formatting differences only).
	Semantic
)

// compareRows checks actual rows against expected lines: first as
// sqllogictest-rs does (normalised strings), then, if allowed, value by
// value semantically.
func compareRows(s shape, expected []string, mode SortMode, semantic bool) Match {
	want := make([]string, len(expected))
	for i, e := range expected {
		want[i] = normalize(e)
	}
	if slices.Equal(s.lines(), want) {
		return Exact
	}
	if !semantic || s.hashed || len(s.rows) != len(want) {
		return Mismatch
	}
	if rowsMatchInOrder(s.rows, want) {
		return Semantic
	}
	// A value printed differently may also sort differently, so sorted
	// results are matched as multisets.
	if mode == RowSort || mode == ValueSort {
		if rowsMatchAsSet(s.rows, want) {
			return Semantic
		}
	}
	return Mismatch
}

func rowsMatchInOrder(rows [][]cell, want []string) bool {
	for i, r := range rows {
		if !rowMatches(r, want[i]) {
			return false
		}
	}
	return true
}

// rowsMatchAsSet pairs each expected line with an unused actual row. Greedy
// pairing suffices in practice: rows that match the same line are equal
// values, so which of them is taken first does not matter.
func rowsMatchAsSet(rows [][]cell, want []string) bool {
	used := make([]bool, len(rows))
	for _, w := range want {
		found := false
		for i, r := range rows {
			if !used[i] && rowMatches(r, w) {
				used[i], found = true, true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// rowMatches aligns a row's values with the whitespace-separated tokens of
// an expected line. A value may span several tokens (`1 day`,
// `2002-02-02 02:00:00`), and its other spelling may span a different
// number, so the alignment is searched, with memoised dead ends.
func rowMatches(values []cell, line string) bool {
	tokens := strings.FieldsFunc(line, isASCIISpace)
	dead := map[[2]int]bool{}
	var match func(i, j int) bool
	match = func(i, j int) bool {
		if i == len(values) {
			return j == len(tokens)
		}
		if dead[[2]int{i, j}] {
			return false
		}
		limit := max(maxValueTokens, len(strings.FieldsFunc(values[i].text, isASCIISpace)))
		for n := 1; j+n <= len(tokens) && n <= limit; n++ {
			if valuesEqual(values[i], strings.Join(tokens[j:j+n], " ")) && match(i+1, j+n) {
				return true
			}
		}
		dead[[2]int{i, j}] = true
		return false
	}
	return match(0, 0)
}

// maxValueTokens bounds how many expected tokens a value may take beyond
// its own token count; the longest scalar spelling we compare semantically
// (an interval with years, months, days and a time) has seven.
const maxValueTokens = 8

// valuesEqual reports whether an actual value and an expected text are the
// same value, possibly formatted differently.
func valuesEqual(actual cell, expected string) bool {
	a := normalize(actual.text)
	if a == expected {
		return true
	}
	return semanticEqual(a, expected, actual.oid)
}
