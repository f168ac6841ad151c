package session

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/sluice-db/sluice/internal/catalog"
	"github.com/sluice-db/sluice/internal/pgwire"
	"github.com/sluice-db/sluice/internal/sql/parser"
	"github.com/sluice-db/sluice/internal/sqlerr"
	"github.com/sluice-db/sluice/internal/types"
)

// alterControl runs ALTER MATERIALIZED VIEW | TABLE name SET RATE_LIMIT
// (or SOURCE_RATE_LIMIT / BACKFILL_RATE_LIMIT) = N | DEFAULT, and ALTER …
// PAUSE / RESUME, and ALTER … SET (amplification_limit = N,
// amplification_action = '…') (guard.go). All three spellings of the limit act on every actor of
// the relation's job: sources of a table, backfill of a view. They reach
// the actors through their control inbox, so they never wait for a
// barrier.
func (s *Session) alterControl(ctx context.Context, st *parser.Statement, w pgwire.ResultWriter) error {
	rel, ok := s.e.Catalog().ByName(st.Name)
	if !ok {
		return sqlerr.Errorf(sqlerr.UndefinedTable, "relation %q does not exist", st.Name)
	}
	kind := rel.Kind
	if st.Object != "" {
		kind = objectKind(st.Object)
		if rel.Kind != kind {
			e := sqlerr.Errorf(sqlerr.WrongObjectType, "%q is not a %s", st.Name, kind)
			e.Hint = fmt.Sprintf("Use ALTER %s.", upper(string(rel.Kind)))
			return e
		}
	}
	var err error
	switch st.Kind {
	case parser.KindAlterRateLimit:
		err = s.e.SetRateLimit(ctx, rel.Name, st.Limit)
	case parser.KindAlterPause:
		err = s.e.SetPaused(ctx, rel.Name, true)
	case parser.KindAlterResume:
		err = s.e.SetPaused(ctx, rel.Name, false)
	case parser.KindAlterAmplification:
		limit, action := rel.Job.Control.AmpLimit, rel.Job.Control.AmpAction
		if st.AmpLimit != nil {
			limit = *st.AmpLimit
		}
		if st.AmpAction != "" {
			action = st.AmpAction
		}
		err = s.e.SetAmplification(ctx, rel.Name, limit, action)
	}
	if err != nil {
		return err
	}
	return w.Complete("ALTER " + upper(string(kind)))
}

func objectKind(o parser.ObjectKind) catalog.Kind {
	switch o {
	case parser.ObjectTable:
		return catalog.KindTable
	case parser.ObjectSink:
		return catalog.KindSink
	}
	return catalog.KindMaterializedView
}

// showJobs answers SHOW JOBS: the jobs still being created, with their
// backfill's progress as a percentage of the upstream rows, formatted as
// RisingWave does ("42.17%"). It reads what sluice_catalog.jobs reads
// (engine.JobSummaries).
func (s *Session) showJobs(ctx context.Context, w pgwire.ResultWriter) error {
	cols := []pgwire.Column{{Name: "Id", Type: types.TInt64}, {Name: "Name", Type: types.TVarchar},
		{Name: "Definition", Type: types.TVarchar}, {Name: "Status", Type: types.TVarchar},
		{Name: "Progress", Type: types.TVarchar}}
	var rows []types.Row
	for _, j := range s.e.JobSummaries() {
		if j.Status != "creating" {
			continue
		}
		progress := strconv.FormatFloat(j.Progress, 'f', 2, 64) + "%"
		rows = append(rows, types.Row{int64(j.ID), j.Name, j.Definition, strings.ToUpper(j.Status), progress})
	}
	return writeRows(ctx, w, cols, rows)
}

// cancelJobs answers CANCEL JOBS id[, id]: each job still being created is
// dropped at once.
func (s *Session) cancelJobs(ctx context.Context, st *parser.Statement, w pgwire.ResultWriter) error {
	if err := s.e.CancelJobs(ctx, st.JobIDs); err != nil {
		return err
	}
	return w.Complete("CANCEL JOBS")
}

// viewRateLimit is the backfill_rate_limit setting for a new view: nil
// for "default".
func (s *Session) viewRateLimit() (*int64, error) {
	_, val, err := s.vars.get("backfill_rate_limit")
	if err != nil || val == "default" {
		return nil, err
	}
	n, err := strconv.ParseInt(val, 10, 64)
	if err != nil {
		return nil, sqlerr.Errorf(sqlerr.InvalidParameterValue, "invalid backfill_rate_limit %q", val)
	}
	return &n, nil
}

// checkRateLimit validates backfill_rate_limit: DEFAULT or rows/second ≥ 0.
func checkRateLimit(v string) (string, error) {
	v = strings.TrimSpace(v)
	if strings.EqualFold(v, "default") || v == "-1" {
		return "default", nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return "", sqlerr.Errorf(sqlerr.InvalidParameterValue, "invalid value for backfill_rate_limit: %q", v)
	}
	return strconv.FormatInt(n, 10), nil
}
