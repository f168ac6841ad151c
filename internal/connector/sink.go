package connector

import (
	"context"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/sluice-db/sluice/internal/sqlerr"
	"github.com/sluice-db/sluice/internal/types"
)

// SinkSpec is a sink as declared: what OpenSink validates, and what a plan
// carries so that every actor of the sink opens the same one.
type SinkSpec struct {
	Connector string
	// Options are the WITH options other than connector, by name as
	// written (names are matched case-insensitively).
	Options map[string]string `json:",omitempty"`
	Columns []Column
	// AppendOnly says the sink's input only inserts (the planner's
	// append-only property); it decides whether type = 'append-only' is
	// allowed without force_append_only.
	AppendOnly bool `json:",omitempty"`
}

// Sink is a validated sink: each actor of its job writes through a
// writer of its own.
type Sink interface {
	// ForceAppendOnly says the sink drops deletes (and update pairs' old
	// rows) and writes only inserts: type = 'append-only' with
	// force_append_only = 'true'.
	ForceAppendOnly() bool
	// NewWriter returns the writer of the index-th of parallelism actors.
	NewWriter(index, parallelism int) (SinkWriter, error)
}

// SinkWriter writes one actor's share of a sink's rows, epoch by epoch.
// It is used by one goroutine at a time.
//
// Write is called with every chunk of an epoch, then Barrier once the
// epoch's last chunk is written, before the actor reports the barrier:
// the epoch's checkpoint does not complete until Barrier has returned,
// so a writer that must not lose rows flushes them there. A writer that
// writes exactly once (a transactional producer) will also need the
// epoch's commit; it is not part of this interface yet because no
// connector needs it.
type SinkWriter interface {
	Write(ctx context.Context, c *types.Chunk) error
	Barrier(ctx context.Context, epoch uint64, checkpoint bool) error
	// Close releases the writer; the actor calls it once, however it
	// ended.
	Close() error
}

// sinkOpener validates the options (those every sink takes, type and
// force_append_only, are consumed already) for one sink connector.
type sinkOpener func(o *options, spec SinkSpec) (Sink, error)

var (
	sinkMu         sync.RWMutex
	sinkConnectors = map[string]sinkOpener{
		"blackhole": openBlackhole,
	}
)

// plannedSinks are sink connectors RisingWave users will name that Sluice
// does not have yet.
var plannedSinks = []string{"kafka", "jdbc", "postgres", "iceberg", "s3", "file", "redis", "clickhouse", "elasticsearch"}

// OpenSink validates spec and returns its sink.
func OpenSink(spec SinkSpec) (Sink, error) {
	name := strings.ToLower(spec.Connector)
	sinkMu.RLock()
	open, ok := sinkConnectors[name]
	sinkMu.RUnlock()
	if !ok {
		if spec.Connector == "" {
			return nil, sqlerr.New(sqlerr.InvalidParameterValue, "a sink needs WITH (connector = …); the sink connectors are "+
				strings.Join(SinkNames(), ", "))
		}
		code := sqlerr.InvalidParameterValue
		what := "unknown sink connector %q; the sink connectors are %s"
		if slices.Contains(plannedSinks, name) {
			code, what = sqlerr.FeatureNotSupported, "sink connector %q is not supported yet; the sink connectors are %s"
		}
		return nil, sqlerr.Errorf(code, what, spec.Connector, strings.Join(SinkNames(), ", "))
	}
	o := newOptions(name, spec.Options)
	force, err := sinkType(o, spec.AppendOnly)
	if err != nil {
		return nil, err
	}
	s, err := open(o, spec)
	if err != nil {
		return nil, err
	}
	if err := o.unused(); err != nil {
		return nil, err
	}
	if force {
		return forcedAppendOnly{s}, nil
	}
	return s, nil
}

// sinkType reads type and force_append_only, which every sink takes as
// RisingWave's do: type is 'append-only' (only inserts are written) or
// 'upsert' (changes are written as they come); an append-only sink over
// an input that updates or deletes needs force_append_only = 'true',
// which drops the deletes. It reports whether deletes are dropped.
func sinkType(o *options, appendOnlyInput bool) (force bool, err error) {
	typ, hasType := o.str("type")
	forceText, hasForce := o.str("force_append_only")
	if hasForce {
		switch strings.ToLower(strings.TrimSpace(forceText)) {
		case "true":
			force = true
		case "false":
		default:
			return false, o.invalid("force_append_only", forceText, "'true' or 'false'")
		}
	}
	if !hasType {
		if force {
			return false, sqlerr.New(sqlerr.InvalidParameterValue, "option \"force_append_only\" needs type = 'append-only'")
		}
		return false, nil
	}
	switch strings.ToLower(strings.TrimSpace(typ)) {
	case "append-only":
		if !appendOnlyInput && !force {
			e := sqlerr.New(sqlerr.InvalidParameterValue, "the sink cannot be append-only: its query updates or deletes rows")
			e.Hint = "Add force_append_only = 'true' to the WITH options to write only the inserts, or use type = 'upsert'."
			return false, e
		}
		return force && !appendOnlyInput, nil
	case "upsert":
		if force {
			return false, sqlerr.New(sqlerr.InvalidParameterValue, "option \"force_append_only\" needs type = 'append-only', not 'upsert'")
		}
		return false, nil
	}
	return false, o.invalid("type", typ, "'append-only' or 'upsert'")
}

// forcedAppendOnly marks a sink whose writers get inserts only.
type forcedAppendOnly struct{ Sink }

func (forcedAppendOnly) ForceAppendOnly() bool { return true }

// SinkNames lists the sink connectors, sorted.
func SinkNames() []string {
	sinkMu.RLock()
	defer sinkMu.RUnlock()
	out := make([]string, 0, len(sinkConnectors))
	for n := range sinkConnectors {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// RegisterSink adds a sink connector taking the given options (any
// value, all optional) besides type and force_append_only: newWriter
// makes each actor's writer. Tests use it to collect what a sink writes;
// it panics when name is taken.
func RegisterSink(name string, takes []string, newWriter func(spec SinkSpec, index, parallelism int) (SinkWriter, error)) {
	sinkMu.Lock()
	defer sinkMu.Unlock()
	if _, ok := sinkConnectors[name]; ok {
		panic("connector: sink " + name + " registered twice")
	}
	sinkConnectors[name] = func(o *options, spec SinkSpec) (Sink, error) {
		for _, t := range takes {
			o.str(t)
		}
		return funcSink{spec: spec, newWriter: newWriter}, nil
	}
}

type funcSink struct {
	spec      SinkSpec
	newWriter func(spec SinkSpec, index, parallelism int) (SinkWriter, error)
}

func (funcSink) ForceAppendOnly() bool { return false }

func (s funcSink) NewWriter(index, parallelism int) (SinkWriter, error) {
	return s.newWriter(s.spec, index, parallelism)
}

// blackhole is RisingWave's blackhole sink: it takes every row and keeps
// none. It measures a query without the cost of writing its output
// anywhere (Nexmark's published figures are measured into one).
type blackhole struct{}

func openBlackhole(*options, SinkSpec) (Sink, error) { return blackhole{}, nil }

func (blackhole) ForceAppendOnly() bool { return false }

func (blackhole) NewWriter(int, int) (SinkWriter, error) { return blackholeWriter{}, nil }

type blackholeWriter struct{}

func (blackholeWriter) Write(context.Context, *types.Chunk) error   { return nil }
func (blackholeWriter) Barrier(context.Context, uint64, bool) error { return nil }
func (blackholeWriter) Close() error                                { return nil }
