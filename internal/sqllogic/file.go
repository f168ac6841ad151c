package sqllogic

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// fileRun is the state of one file's run: its sessions and the settings
// that control records change as the file goes on.
type fileRun struct {
	opts      *Options
	path      string
	labels    map[string]bool
	sess      *sessions
	res       *FileResult
	sortMode  SortMode
	valuewise bool
	threshold int
	subst     substitution
}

func newFileRun(opts *Options, path string, sess *sessions, res *FileResult) *fileRun {
	labels := map[string]bool{EngineLabel: true}
	for _, l := range opts.Labels {
		labels[l] = true
	}
	return &fileRun{opts: opts, path: path, labels: labels, sess: sess, res: res, sortMode: NoSort}
}

func (f *fileRun) close() {
	f.sess.close()
	f.subst.close()
}

// run executes records in order until the end, a halt, or cancellation.
func (f *fileRun) run(ctx context.Context, recs []Record) {
	for _, rec := range recs {
		if ctx.Err() != nil {
			f.fail(rec, "", fmt.Sprintf("run cancelled: %v", ctx.Err()))
			return
		}
		if f.skipped(rec) {
			f.res.Records.Skipped++
			continue
		}
		if rec.Kind == KindHalt {
			return
		}
		f.step(ctx, rec)
	}
}

func (f *fileRun) skipped(rec Record) bool {
	for _, c := range rec.Conditions {
		if c.skips(f.labels) {
			return true
		}
	}
	return false
}

// step runs one record and tallies it.
func (f *fileRun) step(ctx context.Context, rec Record) {
	switch rec.Kind {
	case KindStatement, KindQuery, KindSystem, KindLet:
		m, expected, actual := f.runWithRetry(ctx, rec)
		f.trace(rec, m)
		switch m {
		case Exact:
			f.res.Records.Passed++
		case Semantic:
			f.res.Records.Passed++
			f.res.Records.Semantic++
		default:
			f.fail(rec, expected, actual)
		}
	case KindSleep:
		t := time.NewTimer(rec.Duration)
		defer t.Stop()
		select {
		case <-ctx.Done():
		case <-t.C:
		}
	case KindSortMode:
		f.sortMode, _ = parseSortMode(rec.Arg)
	case KindResultMode:
		f.valuewise = rec.Arg == "valuewise"
	case KindSubstitution:
		f.subst.on = rec.Arg == "on"
	case KindHashThreshold:
		f.threshold = rec.Threshold
	case KindSubtest:
		// Informational only.
	}
}

func (f *fileRun) fail(rec Record, expected, actual string) {
	f.res.Records.Failed++
	f.res.Failures = append(f.res.Failures, Failure{Loc: rec.Loc, SQL: rec.SQL, Expected: expected, Actual: actual})
}

func (f *fileRun) trace(rec Record, m Match) {
	if f.opts.Trace == nil {
		return
	}
	verdict := map[Match]string{Exact: "ok", Semantic: "ok (semantic)", Mismatch: "FAIL"}[m]
	fmt.Fprintf(f.opts.Trace, "%s %s: %s\n", rec.Loc, rec.Kind, verdict)
}

// runWithRetry runs a record, and again up to Retry.Attempts times while
// it fails (for results that converge, e.g. after an async flush).
func (f *fileRun) runWithRetry(ctx context.Context, rec Record) (Match, string, string) {
	for attempt := 0; ; attempt++ {
		m, expected, actual := f.runOnce(ctx, rec)
		if m != Mismatch || attempt >= rec.Retry.Attempts {
			return m, expected, actual
		}
		t := time.NewTimer(rec.Retry.Backoff)
		select {
		case <-ctx.Done():
			t.Stop()
			return m, expected, actual
		case <-t.C:
		}
	}
}

// runOnce runs a record once; expected and actual describe a mismatch.
func (f *fileRun) runOnce(ctx context.Context, rec Record) (Match, string, string) {
	text, err := f.subst.expand(rec.SQL, f.path, f.database(ctx, rec.SQL))
	if err != nil {
		return Mismatch, "substitution to succeed", err.Error()
	}
	if rec.Kind == KindSystem {
		return f.runSystem(ctx, rec, text)
	}
	conn, err := f.sess.get(ctx, rec.Conn)
	if err != nil {
		return Mismatch, "a connection", err.Error()
	}
	if f.opts.RecordTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, f.opts.RecordTimeout)
		defer cancel()
	}
	out := execSimple(ctx, conn, text)
	switch {
	case rec.Err != nil:
		return checkError(rec.Err, out)
	case out.err != nil:
		return Mismatch, "success", out.errText
	case rec.Kind == KindStatement:
		return checkStatement(rec, out)
	case rec.Kind == KindLet:
		return f.bindLet(rec, out)
	}
	return f.checkQuery(rec, out)
}

// database names the default session's database for $__DATABASE__; it
// opens that session only when the text asks for it.
func (f *fileRun) database(ctx context.Context, text string) string {
	if !f.subst.on || !strings.Contains(text, "__DATABASE__") {
		return ""
	}
	c, err := f.sess.get(ctx, "")
	if err != nil {
		return ""
	}
	return c.Config().Database
}

func checkError(want *ExpectedError, out outcome) (Match, string, string) {
	if out.err == nil {
		return Mismatch, want.String(), "success"
	}
	if !want.matches(out.errText, out.sqlState) {
		return Mismatch, want.String(), fmt.Sprintf("%s (SQLSTATE %s)", out.errText, out.sqlState)
	}
	return Exact, "", ""
}

func checkStatement(rec Record, out outcome) (Match, string, string) {
	if rec.HasCount && out.count != rec.Count {
		return Mismatch, fmt.Sprintf("count %d", rec.Count), fmt.Sprintf("count %d", out.count)
	}
	return Exact, "", ""
}

func (f *fileRun) checkQuery(rec Record, out outcome) (Match, string, string) {
	mode := rec.Sort
	if mode == SortUnset {
		mode = f.sortMode
	}
	s := shapeRows(out.rows, mode, f.valuewise, f.threshold)
	m := compareRows(s, rec.Expected, mode, !f.opts.NoSemantic)
	if m != Mismatch {
		return m, "", ""
	}
	actual := strings.Join(s.lines(), "\n")
	if !out.hasRows() {
		actual = fmt.Sprintf("no rows (statement complete, %d affected)", out.count)
	}
	expected := strings.Join(rec.Expected, "\n")
	if len(rec.Expected) == 0 {
		expected = "no rows"
	}
	return Mismatch, expected, actual
}

// bindLet stores a one-row result in the let variables.
func (f *fileRun) bindLet(rec Record, out outcome) (Match, string, string) {
	want := fmt.Sprintf("one row of %d values", len(rec.Vars))
	if len(out.rows) != 1 || len(out.rows[0]) != len(rec.Vars) {
		return Mismatch, want, fmt.Sprintf("%d rows", len(out.rows))
	}
	for i, v := range rec.Vars {
		f.subst.bind(v, out.rows[0][i].text)
	}
	return Exact, "", ""
}
