package engine

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/sluice-db/sluice/internal/catalog"
	"github.com/sluice-db/sluice/internal/compute"
	"github.com/sluice-db/sluice/internal/sqlerr"
	"github.com/sluice-db/sluice/internal/stream"
	"github.com/sluice-db/sluice/internal/types"
)

// The relations of schema sluice_catalog: the engine's live state (jobs,
// fragments, actors, barriers, join amplification) as rows, which the
// planner binds like tables (a "system scan") and the batch executor
// reads at execution time. They come from the same reads as the dashboard
// (dashboard.go) and the metrics, taken when asked; none waits for a
// barrier, so they answer while one is stuck.

// SystemSchema is the schema the system relations live in.
const SystemSchema = "sluice_catalog"

// SystemRelation describes one relation of sluice_catalog.
type SystemRelation struct {
	Name    string
	Columns []catalog.Column
	// Key lists the columns that identify a row (the plan's stream key).
	Key []int
	// rows produces the relation's rows at now, from one read of the
	// actors' counters.
	rows func(e *Engine, r systemRead) []types.Row
}

// systemRead is what one system scan reads once: the time, the actors
// and their counters.
type systemRead struct {
	now    time.Time
	actors []compute.ActorStat
}

func col(name string, t types.Type) catalog.Column { return catalog.Column{Name: name, Type: t} }

// systemRelations lists the relations, by name.
func systemRelations() []SystemRelation {
	i64, f64, text, b, ts := types.TInt64, types.TFloat64, types.TVarchar, types.TBool, types.TTimestamptz
	return []SystemRelation{
		{Name: "actors", Key: []int{0}, rows: (*Engine).actorRows, Columns: []catalog.Column{
			col("actor_id", i64), col("job_id", i64), col("fragment_id", i64), col("rows_in", i64), col("rows_out", i64),
			col("input_blocked_seconds", f64), col("output_blocked_seconds", f64), col("behind_seconds", f64)}},
		{Name: "barriers", Key: []int{0}, rows: (*Engine).barrierRows, Columns: []catalog.Column{
			col("epoch", i64), col("checkpoint", b), col("injected", ts), col("collected", ts), col("committed", ts),
			col("latency_seconds", f64), col("collect_seconds", f64), col("commit_seconds", f64)}},
		{Name: "fragments", Key: []int{0, 1}, rows: (*Engine).fragmentRows, Columns: []catalog.Column{
			col("job_id", i64), col("fragment_id", i64), col("executors", text), col("parallelism", i64),
			col("rows_in", i64), col("rows_out", i64), col("input_blocked_seconds", f64), col("output_blocked_seconds", f64)}},
		{Name: "jobs", Key: []int{0}, rows: (*Engine).jobRows, Columns: []catalog.Column{
			col("id", i64), col("name", text), col("kind", text), col("definition", text), col("status", text),
			col("progress", f64), col("freshness_seconds", f64), col("rate_limit", i64), col("paused", b),
			col("amplification_limit", i64), col("amplification_action", text), col("rows_out", i64)}},
		{Name: "join_amplification", Key: []int{0, 2}, rows: (*Engine).joinRows, Columns: []catalog.Column{
			col("job_id", i64), col("name", text), col("fragment_id", i64), col("probe_rows", i64),
			col("matched_rows", i64), col("p50", f64), col("p99", f64), col("max", f64), col("heavy_keys", text)}},
	}
}

// SystemRelations lists the relations of sluice_catalog, by name.
func SystemRelations() []SystemRelation { return systemRelations() }

// LookupSystemRelation finds sluice_catalog.name.
func LookupSystemRelation(name string) (SystemRelation, bool) {
	for _, r := range systemRelations() {
		if r.Name == name {
			return r, true
		}
	}
	return SystemRelation{}, false
}

// SystemRows returns the current rows of sluice_catalog.name, in the
// column order of its SystemRelation. An unknown name is 42P01.
func (e *Engine) SystemRows(ctx context.Context, name string) ([]types.Row, error) {
	rel, ok := LookupSystemRelation(name)
	if !ok {
		return nil, sqlerr.Errorf(sqlerr.UndefinedTable, "relation \"%s.%s\" does not exist", SystemSchema, name)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return rel.rows(e, systemRead{now: time.Now(), actors: e.node.ActorStats()}), nil
}

// JobSummaries lists every streaming job (of a table, view or sink) by
// id, with its fragments' counters, as Overview does but without asking
// the coordinator: sluice_catalog.jobs and SHOW JOBS read it.
func (e *Engine) JobSummaries() []JobSummary {
	return e.jobSummaries(time.Now(), e.node.ActorStats())
}

func (e *Engine) jobSummaries(now time.Time, actors []compute.ActorStat) []JobSummary {
	fresh, age := e.ViewFreshness(now), e.committedAge(now)
	var out []JobSummary
	for _, r := range e.jobRelations() {
		out = append(out, e.jobSummary(r, fresh, age, actors))
	}
	return out
}

// jobRelations lists the relations with a streaming job, by id.
func (e *Engine) jobRelations() []*catalog.Relation {
	var out []*catalog.Relation
	for _, r := range e.catalog.All() {
		if r.Job.ID != 0 && r.Job.Plan != nil {
			out = append(out, r)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// jobRows are sluice_catalog.jobs: NULL progress unless creating, NULL
// freshness while creating, NULL guard settings without a guard.
func (e *Engine) jobRows(r systemRead) []types.Row {
	var rows []types.Row
	for _, j := range e.jobSummaries(r.now, r.actors) {
		var progress, fresh, rate, ampLimit, ampAction types.Datum
		if j.Status == "creating" {
			progress = j.Progress
		}
		if j.Freshness >= 0 {
			fresh = j.Freshness.Seconds()
		}
		if j.Control.RateLimit != nil {
			rate = *j.Control.RateLimit
		}
		if j.Control.AmpLimit > 0 {
			ampLimit, ampAction = j.Control.AmpLimit, orDefault(j.Control.AmpAction, AmpNotice)
		}
		rows = append(rows, types.Row{int64(j.ID), j.Name, string(j.Kind), j.Definition, j.Status, progress, fresh,
			rate, j.Control.Paused, ampLimit, ampAction, j.RowsOut})
	}
	return rows
}

// orDefault returns s, or def when s is empty.
func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// fragmentRows are sluice_catalog.fragments: each job's fragments with
// their executors (root first) and their actors' counters, summed.
func (e *Engine) fragmentRows(r systemRead) []types.Row {
	var rows []types.Row
	for _, rel := range e.jobRelations() {
		frags := make([]FragmentStats, 0, len(rel.Job.Plan.Fragments))
		for _, f := range rel.Job.Plan.Fragments {
			frags = append(frags, FragmentStats{ID: f.ID, Job: rel.Job.ID, Operators: operators(f.Root)})
		}
		addCounters(frags, r.actors)
		for _, f := range frags {
			par := int64(len(rel.Job.Actors[f.ID]))
			if par == 0 {
				par = int64(f.Actors)
			}
			rows = append(rows, types.Row{int64(f.Job), int64(f.ID), strings.Join(f.Operators, " ← "), par,
				f.RowsIn, f.RowsOut, f.InputBlocked.Seconds(), f.OutputBlocked.Seconds()})
		}
	}
	return rows
}

// actorRows are sluice_catalog.actors: every actor of this node. Its
// behind_seconds is how long ago the input a barrier overtook began to
// wait (stream.ActorStats.Behind), NULL when it holds none.
func (e *Engine) actorRows(r systemRead) []types.Row {
	actors := slices.Clone(r.actors)
	sort.Slice(actors, func(i, j int) bool { return actors[i].Actor < actors[j].Actor })
	rows := make([]types.Row, 0, len(actors))
	for _, a := range actors {
		var behind types.Datum
		if b := a.Stats.BehindSince(); b != 0 {
			behind = max(r.now.Sub(time.Unix(0, b)), 0).Seconds()
		}
		rows = append(rows, types.Row{int64(a.Actor), int64(a.Job), int64(a.Fragment), a.Stats.RowsIn.Load(),
			a.Stats.RowsOut.Load(), a.Stats.InputBlocked.Total().Seconds(), a.Stats.OutputBlocked.Total().Seconds(), behind})
	}
	return rows
}

// barrierRows are sluice_catalog.barriers: the recently committed
// epochs (RecentEpochs), oldest first, with their latencies: injection to
// commit, to collection, and collection to commit.
func (e *Engine) barrierRows(systemRead) []types.Row {
	epochs := e.RecentEpochs()
	rows := make([]types.Row, 0, len(epochs))
	for _, ep := range epochs {
		rows = append(rows, types.Row{int64(ep.Epoch), ep.Checkpoint, types.TimestamptzFromTime(ep.Injected),
			types.TimestamptzFromTime(ep.Collected), types.TimestamptzFromTime(ep.Committed),
			ep.Committed.Sub(ep.Injected).Seconds(), ep.Collected.Sub(ep.Injected).Seconds(),
			ep.Committed.Sub(ep.Collected).Seconds()})
	}
	return rows
}

// joinRows are sluice_catalog.join_amplification: each join fragment of
// each job with its matches per probe row (jobJoins).
func (e *Engine) joinRows(r systemRead) []types.Row {
	var rows []types.Row
	for _, rel := range e.jobRelations() {
		for _, j := range jobJoins(rel.Job.ID, r.actors) {
			a := j.Summary()
			rows = append(rows, types.Row{int64(rel.Job.ID), rel.Name, int64(j.Fragment), int64(a.Probes),
				int64(j.Matched), a.P50, a.P99, a.Max, heavyKeys(j.Heavy)})
		}
	}
	return rows
}

// heavyKeys formats heavy keys heaviest first: "1 (1000000), 7 (12)";
// NULL when there are none.
func heavyKeys(hs []stream.HeavyKey) types.Datum {
	if len(hs) == 0 {
		return nil
	}
	hs = slices.Clone(hs)
	sort.SliceStable(hs, func(i, j int) bool { return hs[i].Matches > hs[j].Matches })
	parts := make([]string, len(hs))
	for i, h := range hs {
		parts[i] = fmt.Sprintf("%s (%d)", h.Key, h.Matches)
	}
	return strings.Join(parts, ", ")
}
