package engine

import (
	"fmt"
	"strconv"
	"strings"
)

// tracker is the parent's side of the crash workload: it reads the
// child's lines, applies each acknowledged statement to its writer's
// model, and after a kill resolves each writer's statement in flight
// against what recovery shows: it must be fully applied or not at all.
type tracker struct {
	w        []model
	inflight []*stmt
	stmts    int            // acknowledged statements
	rows     int            // row changes of acknowledged statements
	byKind   map[string]int // acknowledged row changes by table and kind
	// resolved counts in-flight statements by outcome: "applied",
	// "not applied", or "either" (a statement whose two outcomes are the
	// same rows, e.g. deleting an absent key of u).
	resolved map[string]int
}

func newTracker() *tracker {
	tr := &tracker{w: make([]model, crashWriters), inflight: make([]*stmt, crashWriters), resolved: map[string]int{}, byKind: map[string]int{}}
	for i := range tr.w {
		tr.w[i] = newModel()
	}
	return tr
}

// line takes one line of the child's output.
func (tr *tracker) line(l string) error {
	switch {
	case strings.HasPrefix(l, "B "):
		s, err := parseStmt(l)
		if err != nil {
			return err
		}
		if s.writer < 0 || s.writer >= crashWriters || tr.inflight[s.writer] != nil {
			return fmt.Errorf("statement %q while writer has one in flight", l)
		}
		tr.inflight[s.writer] = &s
	case strings.HasPrefix(l, "A "):
		f := strings.Fields(l)
		w, _ := strconv.Atoi(f[1])
		seq, _ := strconv.ParseInt(f[2], 10, 64)
		if w < 0 || w >= crashWriters || tr.inflight[w] == nil || tr.inflight[w].seq != seq {
			return fmt.Errorf("ack %q of no statement in flight", l)
		}
		s := tr.inflight[w]
		tr.inflight[w] = nil
		tr.stmts++
		tr.rows += len(s.ops)
		for _, o := range s.ops {
			tr.byKind[fmt.Sprintf("%s %c", s.table, o.kind)]++
		}
		return tr.w[w].apply(*s)
	case strings.HasPrefix(l, "ERR "):
		return fmt.Errorf("child: %s", l)
	}
	return nil
}

// resolve checks the recovered tables against the model, writer by
// writer. A writer with no statement in flight must match exactly; one
// with a statement in flight must match either the model without it or
// the model with all of it. It returns a description of each resolution.
func (tr *tracker) resolve(ob observed) ([]string, error) {
	if len(ob.dups) > 0 {
		return nil, fmt.Errorf("duplicated: %v", head(ob.dups))
	}
	var notes []string
	for w := range tr.w {
		outcome, err := tr.resolveWriter(w, ob.t[w])
		if err != nil {
			return notes, err
		}
		if outcome != "" {
			s := tr.inflight[w]
			what := fmt.Sprintf("%s %d-row %s", s.table, len(s.ops), kinds(s))
			if s.also != nil {
				what = fmt.Sprintf("transaction (%s + %s %d-row %s)", what, s.also.table, len(s.also.ops), kinds(s.also))
			}
			notes = append(notes, fmt.Sprintf("w%d %s: %s", w, what, outcome))
			tr.resolved[outcome]++
			tr.inflight[w] = nil
		}
		tr.w[w].learnRowIDs(ob.t[w])
	}
	return notes, nil
}

func (tr *tracker) resolveWriter(w int, got model) (string, error) {
	want := tr.w[w]
	lost, extra := diff(want, got)
	s := tr.inflight[w]
	if s == nil {
		if len(lost)+len(extra) > 0 {
			return "", fmt.Errorf("writer %d (nothing in flight): lost %d %v, duplicated or phantom %d %v",
				w, len(lost), head(lost), len(extra), head(extra))
		}
		return "", nil
	}
	with := want.clone()
	if err := with.apply(*s); err != nil {
		return "", err
	}
	lost2, extra2 := diff(with, got)
	without, applied := len(lost)+len(extra) == 0, len(lost2)+len(extra2) == 0
	switch {
	case without && applied:
		return "either", nil
	case without:
		return "not applied", nil
	case applied:
		tr.w[w] = with
		return "applied", nil
	}
	return "", fmt.Errorf("writer %d, statement in flight %s: neither outcome matches\n"+
		" without it: lost %d %v, extra %d %v\n with it: lost %d %v, extra %d %v",
		w, s.encode()[:min(200, len(s.encode()))], len(lost), head(lost), len(extra), head(extra),
		len(lost2), head(lost2), len(extra2), head(extra2))
}

// total is the union of the writers' models.
func (tr *tracker) total() model {
	m := newModel()
	for _, w := range tr.w {
		for k, r := range w.t {
			m.t[k] = r
		}
		for k, v := range w.u {
			m.u[k] = v
		}
	}
	return m
}

func (tr *tracker) hasInflight() bool {
	for _, s := range tr.inflight {
		if s != nil {
			return true
		}
	}
	return false
}

func kinds(s *stmt) string {
	seen := map[byte]bool{}
	var b []byte
	for _, o := range s.ops {
		if !seen[o.kind] {
			seen[o.kind] = true
			b = append(b, o.kind)
		}
	}
	names := map[byte]string{'i': "insert", 'd': "delete", 'u': "update"}
	var out []string
	for _, k := range b {
		out = append(out, names[k])
	}
	return strings.Join(out, "+")
}
