package engine

import (
	"fmt"
	"maps"
	"sort"
	"strconv"
	"strings"
)

// The crash workload's model: what every acknowledged statement did to t
// and u, exactly, so the checker knows each table's expected contents.
// Each writer owns the keys k with k mod crashWriters == its id, in both
// tables, and only ever touches its own keys: a writer's rows are then a
// function of its own statements alone, and its one statement in flight at
// a kill can be resolved on its own, as fully applied or not at all.

const crashWriters = 4

// wop is one row change of a statement: an insert, a delete or an update
// (v → v2) of key k. rid is t's hidden row id (0 for u, keyed by k).
type wop struct {
	kind     byte // 'i', 'd' or 'u'
	k, v, v2 int64
	rid      int64
	hasRowID bool
}

// stmt is one statement: one Write of one chunk to one table, or, with
// also, a transaction: both parts committed together (Engine.Commit).
type stmt struct {
	writer int
	seq    int64
	table  string // "t" or "u"
	ops    []wop
	also   *stmt // the transaction's part on the other table
	// bulk: inserts written as a bulk statement's pieces (engine.Prepare,
	// each in a log segment of its own) in one Commit, as COPY and INSERT …
	// SELECT write them. The parent does not need to know.
	bulk bool
}

// encode writes the statement as one line for the parent: "B w seq table
// op…", each op "i:k:v", "d:k:v[:rid]" or "u:k:v:v2[:rid]".
func (s stmt) encode() string {
	var b strings.Builder
	fmt.Fprintf(&b, "B %d %d %s", s.writer, s.seq, s.table)
	s.encodeOps(&b)
	if s.also != nil {
		fmt.Fprintf(&b, " + %s", s.also.table)
		s.also.encodeOps(&b)
	}
	return b.String()
}

func (s stmt) encodeOps(b *strings.Builder) {
	for _, o := range s.ops {
		switch o.kind {
		case 'i':
			fmt.Fprintf(b, " i:%d:%d", o.k, o.v)
		case 'd':
			fmt.Fprintf(b, " d:%d:%d", o.k, o.v)
		case 'u':
			fmt.Fprintf(b, " u:%d:%d:%d", o.k, o.v, o.v2)
		}
		if o.hasRowID {
			fmt.Fprintf(b, ":%d", o.rid)
		}
	}
}

func parseStmt(line string) (stmt, error) {
	f := strings.Fields(line)
	if len(f) < 4 || f[0] != "B" {
		return stmt{}, fmt.Errorf("bad statement line %q", line)
	}
	w, err1 := strconv.Atoi(f[1])
	seq, err2 := strconv.ParseInt(f[2], 10, 64)
	if err1 != nil || err2 != nil {
		return stmt{}, fmt.Errorf("bad statement line %q", line)
	}
	s := stmt{writer: w, seq: seq, table: f[3]}
	cur := &s
	for i := 4; i < len(f); i++ {
		tok := f[i]
		if tok == "+" && i+1 < len(f) && cur == &s {
			cur = &stmt{writer: w, seq: seq, table: f[i+1]}
			s.also = cur
			i++
			continue
		}
		o, err := parseOp(tok)
		if err != nil {
			return stmt{}, fmt.Errorf("%q: %w", line, err)
		}
		cur.ops = append(cur.ops, o)
	}
	return s, nil
}

func parseOp(tok string) (wop, error) {
	p := strings.Split(tok, ":")
	n := make([]int64, len(p)-1)
	for i, x := range p[1:] {
		v, err := strconv.ParseInt(x, 10, 64)
		if err != nil {
			return wop{}, fmt.Errorf("bad op %q", tok)
		}
		n[i] = v
	}
	o := wop{kind: p[0][0]}
	want := map[byte]int{'i': 2, 'd': 2, 'u': 3}[o.kind]
	if want == 0 || (len(n) != want && len(n) != want+1) {
		return wop{}, fmt.Errorf("bad op %q", tok)
	}
	o.k, o.v = n[0], n[1]
	if o.kind == 'u' {
		o.v2 = n[2]
	}
	if len(n) == want+1 {
		o.rid, o.hasRowID = n[want], true
	}
	return o, nil
}

// tRow is a row of t in the model; rid 0 means not yet seen in a scan
// (the engine assigns row ids, so the model learns them from the table).
type tRow struct{ v, rid int64 }

// model is the expected contents of t and u (of one writer, or of all).
type model struct {
	t map[int64]tRow
	u map[int64]int64
}

func newModel() model { return model{t: map[int64]tRow{}, u: map[int64]int64{}} }

func (m model) clone() model { return model{t: maps.Clone(m.t), u: maps.Clone(m.u)} }

// apply applies an acknowledged statement. On t every op names a row the
// writer knows to be there (or, for an insert, a fresh key); an op that
// does not is a bug of the workload, not of the engine. On u, which has a
// primary key, an insert overwrites and a delete of an absent key is a
// no-op, as the engine documents.
func (m model) apply(s stmt) error {
	for _, o := range s.ops {
		if err := m.applyOp(s.table, o); err != nil {
			return fmt.Errorf("writer %d statement %d: %w", s.writer, s.seq, err)
		}
	}
	if s.also != nil {
		return m.apply(*s.also)
	}
	return nil
}

func (m model) applyOp(table string, o wop) error {
	if table == "u" {
		switch o.kind {
		case 'i':
			m.u[o.k] = o.v
		case 'd':
			delete(m.u, o.k)
		case 'u':
			m.u[o.k] = o.v2
		}
		return nil
	}
	cur, ok := m.t[o.k]
	switch {
	case o.kind == 'i' && ok:
		return fmt.Errorf("insert of key %d, which t already has", o.k)
	case o.kind == 'i':
		m.t[o.k] = tRow{v: o.v}
	case !ok || cur.v != o.v || (cur.rid != 0 && cur.rid != o.rid):
		return fmt.Errorf("%c of t row %d %d rid %d, model has %v (present %v)", o.kind, o.k, o.v, o.rid, cur, ok)
	case o.kind == 'd':
		delete(m.t, o.k)
	default:
		m.t[o.k] = tRow{v: o.v2, rid: o.rid}
	}
	return nil
}

// observed is what a scan found, split by owning writer.
type observed struct {
	t    []model // per writer; t rows with rid from the scan
	dups []string
}

// observe splits the scanned rows of t (k, v, rid) and u (k, w) by writer
// and reports every key of t seen twice.
func observe(tRows, uRows [][3]int64) observed {
	ob := observed{t: make([]model, crashWriters)}
	for i := range ob.t {
		ob.t[i] = newModel()
	}
	for _, r := range tRows {
		m := ob.t[owner(r[0])]
		if prev, ok := m.t[r[0]]; ok {
			ob.dups = append(ob.dups, fmt.Sprintf("t key %d twice: %v and %v", r[0], prev, r))
		}
		m.t[r[0]] = tRow{v: r[1], rid: r[2]}
	}
	for _, r := range uRows {
		ob.t[owner(r[0])].u[r[0]] = r[1]
	}
	return ob
}

func owner(k int64) int { return int(((k % crashWriters) + crashWriters) % crashWriters) }

// diff compares a writer's expected rows with the observed ones: lost are
// expected rows missing or with another value, extra are rows the model
// does not have (duplicates, resurrected deletes, phantom writes). Row ids
// the model has not learned yet match any.
func diff(want, got model) (lost, extra []string) {
	for k, w := range want.t {
		g, ok := got.t[k]
		if !ok || g.v != w.v || (w.rid != 0 && g.rid != w.rid) {
			lost = append(lost, fmt.Sprintf("t %d=%v (have %v %v)", k, w, g, ok))
		}
	}
	for k, g := range got.t {
		if _, ok := want.t[k]; !ok {
			extra = append(extra, fmt.Sprintf("t %d=%v", k, g))
		}
	}
	for k, w := range want.u {
		if g, ok := got.u[k]; !ok || g != w {
			lost = append(lost, fmt.Sprintf("u %d=%d (have %d %v)", k, w, g, ok))
		}
	}
	for k, g := range got.u {
		if _, ok := want.u[k]; !ok {
			extra = append(extra, fmt.Sprintf("u %d=%d", k, g))
		}
	}
	sort.Strings(lost)
	sort.Strings(extra)
	return lost, extra
}

// learnRowIDs records the row ids of rows the model has not seen scanned
// yet; from then on they are part of what must survive.
func (m model) learnRowIDs(got model) {
	for k, r := range m.t {
		if g, ok := got.t[k]; ok && r.rid == 0 {
			m.t[k] = tRow{v: r.v, rid: g.rid}
		}
	}
}
