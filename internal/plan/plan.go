package plan

import (
	"github.com/sluice-db/sluice/internal/connector"
	"github.com/sluice-db/sluice/internal/expr"
	"github.com/sluice-db/sluice/internal/types"
	"github.com/sluice-db/sluice/internal/types/codec"
)

// Kind names a stream node.
type Kind string

// The stream node kinds.
const (
	KindTableSource Kind = "table_source" // reads a table's durable DML log
	// KindConnectorSource reads a connector's splits (nexmark, datagen).
	KindConnectorSource Kind = "connector_source"
	KindValues          Kind = "values" // constant rows, emitted once
	KindProject         Kind = "project"
	KindFilter          Kind = "filter"
	KindHashJoin        Kind = "hash_join"
	KindHashAgg         Kind = "hash_agg"
	KindSimpleAgg       Kind = "simple_agg" // global aggregation, no GROUP BY
	// KindLocalAgg pre-aggregates each chunk before the exchange to a
	// hash aggregation (SplitLocalAggs); it keeps no state.
	KindLocalAgg Kind = "local_agg"
	KindTopN     Kind = "top_n"
	KindUnion    Kind = "union"
	// KindHopWindow repeats each row once per hopping window holding it.
	KindHopWindow Kind = "hop_window"
	// KindWatermarkFilter drops late rows and emits watermarks.
	KindWatermarkFilter Kind = "watermark_filter"
	// KindTemporalFilter compares a column with a bound that moves with
	// the barriers' time (now()).
	KindTemporalFilter Kind = "temporal_filter"
	KindDistinct       Kind = "distinct"
	// KindOverWindow computes window functions (OVER) per partition.
	KindOverWindow  Kind = "over_window"
	KindMaterialize Kind = "materialize"
	// KindSink writes its input to a sink connector (CREATE SINK); it is
	// a job's root, as a materialize is, and stores nothing.
	KindSink     Kind = "sink"
	KindBackfill Kind = "backfill" // snapshot of an upstream table, then its changes
	KindMerge    Kind = "merge"    // receives from an upstream fragment
	// KindSystemScan reads a system relation (sluice_catalog.*): rows
	// the engine produces when a batch query runs. Never streamed.
	KindSystemScan Kind = "system_scan"
	// KindApply runs Inputs[1], a correlated subquery whose expressions
	// read the outer row (expr.KindOuter), once for each row of
	// Inputs[0], and appends what it returned (Apply.Mode). Batch plans
	// only.
	KindApply Kind = "apply"
	// KindFunctionScan produces the rows of a set-returning function in
	// FROM (generate_series, unnest) whose arguments are known only when
	// the query runs (they read the outer row of an apply). Batch plans
	// only.
	KindFunctionScan Kind = "function_scan"
)

// Node is one executor in a fragment's tree. Exactly the field matching
// Kind is set.
type Node struct {
	Kind   Kind
	Inputs []*Node
	// Schema is the output column types.
	Schema []types.Type
	// StreamKey lists the output columns that identify a row uniquely in
	// the stream (what a Delete refers to).
	StreamKey []int
	// Watermarks lists the output columns that carry watermarks (set by
	// DeriveStreamProps): no row below the latest one will follow.
	Watermarks []int `json:",omitempty"`
	// AppendOnly: the node emits only inserts (EMIT ON WINDOW CLOSE).
	AppendOnly bool `json:",omitempty"`

	TableSource     *TableSource     `json:",omitempty"`
	Connector       *ConnectorSource `json:",omitempty"`
	HopWindow       *HopWindow       `json:",omitempty"`
	WatermarkFilter *WatermarkFilter `json:",omitempty"`
	TemporalFilter  *TemporalFilter  `json:",omitempty"`
	Values          *Values          `json:",omitempty"`
	Project         *Project         `json:",omitempty"`
	Filter          *Filter          `json:",omitempty"`
	HashJoin        *HashJoin        `json:",omitempty"`
	Agg             *Agg             `json:",omitempty"` // hash_agg and simple_agg
	LocalAgg        *Agg             `json:",omitempty"` // local_agg: group keys and calls, no tables
	TopN            *TopN            `json:",omitempty"`
	OverWindow      *OverWindow      `json:",omitempty"`
	Distinct        *Distinct        `json:",omitempty"`
	Materialize     *Materialize     `json:",omitempty"`
	Sink            *Sink            `json:",omitempty"`
	Backfill        *Backfill        `json:",omitempty"`
	Merge           *Merge           `json:",omitempty"`
	SystemScan      *SystemScan      `json:",omitempty"`
	Apply           *Apply           `json:",omitempty"`
	FunctionScan    *FunctionScan    `json:",omitempty"`

	// dist is set on Merge nodes made by Fragmentize: what the exchange
	// delivers.
	dist *Dist
}

// Apply is a correlated subquery run for each outer row (KindApply).
type Apply struct {
	Mode ApplyMode
}

// FunctionScan calls set-returning function Name on Args (no input
// columns) when the query runs (KindFunctionScan). With Ordinality each
// row also gets its number, from 1, as a bigint.
type FunctionScan struct {
	Name       string
	Args       []expr.Desc
	Ordinality bool `json:",omitempty"`
}

// ApplyMode says what an apply appends to each outer row.
type ApplyMode string

// The apply modes. Each but ApplyJoin also appends a text column, the
// error ("SQLSTATE message") a run that failed on its data met, NULL
// when it did not (expr.KindSingleRow raises it where it is read).
const (
	// ApplyScalar appends the subquery's row count (bigint, counted up to
	// 2) and its first row's first column: a scalar subquery, whose
	// value is an error past one row (expr.KindSingleRow).
	ApplyScalar ApplyMode = "scalar"
	// ApplyExists appends whether the subquery returned a row.
	ApplyExists ApplyMode = "exists"
	// ApplyArray appends the first column's values as an array, in the
	// subquery's order: ARRAY(SELECT …).
	ApplyArray ApplyMode = "array"
	// ApplyJoin appends each of the subquery's rows, all its columns, to
	// a copy of the outer row; an outer row it returns nothing for is
	// dropped: a lateral join, and a set-returning function in a select
	// list.
	ApplyJoin ApplyMode = "join"
)

// Table describes a state table: its id, column types, primary key (with
// orders) and distribution key. Executors derive their state tables' shapes
// from their node; the ids are assigned by the catalog.
type Table struct {
	ID      uint32
	Types   []types.Type
	PK      []int
	Orders  []codec.Order `json:",omitempty"`
	DistKey []int
}

// TableSource reads the DML log of a table.
type TableSource struct {
	TableID uint32
	// OffsetTable stores the log position reached, committed with each
	// epoch, so recovery resumes from there.
	OffsetTable Table
	// FreshRows: records of plain inserts of new hidden row ids go out
	// still encoded (stream.FreshRows), for the table's materialize.
	FreshRows bool `json:",omitempty"`
}

// ConnectorSource reads a connector's splits. Split s goes to actor
// s mod parallelism of the fragment, whose parallelism is at most Splits.
type ConnectorSource struct {
	// Name is the source's (or table's) name, for messages.
	Name string
	Spec connector.Spec
	// Splits is the source's split count, fixed when the job is planned.
	Splits int
	// OffsetTable stores each split's offset, committed with each epoch,
	// so recovery resumes after the last committed row.
	OffsetTable Table
}

// HopWindow is HOP(rel, time, slide, size, offset): each row once per
// window [start, start+size) holding its time, the starts being
// Origin + k×Slide; window_start and window_end are appended. Size is a
// multiple of Slide, so every row is in Size/Slide windows. A row whose
// time is NULL is in none.
type HopWindow struct {
	TimeCol int
	// Slide, Size and Origin are micros; Origin is the Unix epoch plus
	// the offset, as a timestamp (or timestamptz) value.
	Slide, Size, Origin int64
}

// SystemScan reads the system relation Schema.Relation; its rows are
// produced by the engine at execution time, with the node's Schema.
type SystemScan struct {
	Schema, Relation string
}

// Values emits constant rows once, then only barriers.
type Values struct {
	Rows [][]expr.Desc
	// Table, when set, records that the rows were emitted (committed with
	// the epoch that carried them), so a rebuilt actor does not emit them
	// again after recovery. Its shape is stateless.ValuesTable's.
	Table *Table `json:",omitempty"`
}

// Project computes expressions over each row.
type Project struct {
	Exprs []expr.Desc
}

// Filter keeps rows whose condition is true.
type Filter struct {
	Cond expr.Desc
}

// JoinType is the kind of a join.
type JoinType string

// Join types.
const (
	InnerJoin JoinType = "inner"
	LeftJoin  JoinType = "left"
	RightJoin JoinType = "right"
	FullJoin  JoinType = "full"
)

// HashJoin joins its two inputs on equal keys plus an optional residual
// condition evaluated over the concatenated row (left columns then right).
type HashJoin struct {
	Type      JoinType
	LeftKeys  []int
	RightKeys []int
	// NullSafe[i] makes key i match NULL to NULL (IS NOT DISTINCT FROM).
	NullSafe []bool `json:",omitempty"`
	Residual *expr.Desc
	// Output picks columns of the concatenated row; -1 is a NULL of the
	// node's type there, for a column nothing reads whose input column
	// NullUnread dropped.
	Output []int
	// LeftTable and RightTable hold each side's rows keyed by (join key,
	// the side's stream key); DegreeTables, for outer joins, count each
	// row's matches.
	LeftTable, RightTable             Table
	LeftDegreeTable, RightDegreeTable *Table `json:",omitempty"`
	// PendingTable keeps the work a barrier overtook while the job was
	// paused or throttled (stream/join overtake.go). nil (older plans):
	// the join never lets a barrier overtake.
	PendingTable *Table `json:",omitempty"`
	// LeftExpiry and RightExpiry, on inner joins, delete a side's rows
	// that no future row of the other can match (DeriveJoinExpiry).
	LeftExpiry, RightExpiry *JoinExpiry `json:",omitempty"`
	// LeftAppendOnly and RightAppendOnly: the side's input only inserts
	// (MarkAppendOnlyInputs), so each row it stores is of a key its table
	// never held. False, the default of older plans, stores every row as
	// an update of whatever the key held.
	LeftAppendOnly, RightAppendOnly bool `json:",omitempty"`
}

// AggKind names an aggregate function.
type AggKind string

// Aggregate functions.
const (
	AggCount     AggKind = "count" // count(x); CountStar for count(*)
	AggCountStar AggKind = "count_star"
	AggSum       AggKind = "sum"
	AggAvg       AggKind = "avg"
	AggMin       AggKind = "min"
	AggMax       AggKind = "max"
	AggBoolAnd   AggKind = "bool_and"
	AggBoolOr    AggKind = "bool_or"
	AggStringAgg AggKind = "string_agg"
	// AggArrayAgg collects its input, NULLs included, into an array.
	AggArrayAgg AggKind = "array_agg"
	// AggSumCounts adds up counts a local aggregation computed (bigint,
	// never NULL): count and count(*) after SplitLocalAggs.
	AggSumCounts AggKind = "sum_counts"
)

// AggCall is one aggregate in an Agg node.
type AggCall struct {
	Kind AggKind
	// Args are input column indexes (string_agg: value, delimiter).
	Args     []int
	Distinct bool
	// Filter, if set, is a boolean expression over the input row.
	Filter *expr.Desc `json:",omitempty"`
	// OrderBy orders string_agg's and array_agg's inputs.
	OrderBy []ColumnOrder `json:",omitempty"`
	Type    types.Type
	// Table holds per-group state that cannot be kept as a running value
	// (min/max under deletes, distinct values, string_agg inputs).
	Table *Table `json:",omitempty"`
}

// Agg groups by GroupKeys (empty for simple_agg) and computes Calls. Output
// is the group keys then one column per call.
type Agg struct {
	GroupKeys []int
	Calls     []AggCall
	// ResultTable keeps each group's current output row and row count.
	ResultTable Table
	// EmitOnWindowClose emits each group once, as an insert, when a
	// watermark on the first group key passes it, instead of its changes
	// at every barrier.
	EmitOnWindowClose bool `json:",omitempty"`
	// AppendOnlyInput: the input only ever inserts (see
	// MarkAppendOnlyInputs), so min and max keep just their current
	// extreme, in the result row, and no value table.
	AppendOnlyInput bool `json:",omitempty"`
}

// ColumnOrder is one ORDER BY item.
type ColumnOrder struct {
	Column int
	Order  codec.Order
}

// TopN keeps the rows ranked Offset+1 … Offset+Limit by OrderBy within each
// group of GroupKeys. Limit < 0 means no limit.
type TopN struct {
	OrderBy   []ColumnOrder
	Limit     int64
	Offset    int64
	GroupKeys []int `json:",omitempty"`
	WithTies  bool  `json:",omitempty"`
	// Rank appends each output row's rank in its group (bigint, from
	// Offset+1: ROW_NUMBER's value) to the input's columns.
	Rank bool `json:",omitempty"`
	// AppendOnlyInput: the input only ever inserts (see
	// MarkAppendOnlyInputs), so a row ranked after the last one kept
	// (Offset+Limit, and its ties) can never come back: it is not stored.
	AppendOnlyInput bool `json:",omitempty"`
	Table           Table
}

// Distinct removes duplicate rows over Keys, counting duplicates in Table
// so that deletes are correct.
type Distinct struct {
	Keys  []int
	Table Table
}

// Sink is a sink's connector, as declared and validated by
// connector.OpenSink.
type Sink struct {
	Name string
	Spec connector.SinkSpec
}

// NewSink is the root of a sink's job: sink name writing input's rows,
// whose key is key, through spec's connector.
func NewSink(input *Node, name string, spec connector.SinkSpec, key []int) *Node {
	return &Node{Kind: KindSink, Inputs: []*Node{input}, Schema: input.Schema, StreamKey: key,
		Sink: &Sink{Name: name, Spec: spec}}
}

// Materialize writes its input into a table keyed by PK; an insert on an
// existing key overwrites it (and emits the update downstream).
type Materialize struct {
	Table Table
	// View marks a materialized view's materialize, whose input is a
	// consistent change stream of its stream key: a delete of a key it does
	// not hold, a delete whose row differs from the stored one, or an
	// insert of a key it holds is then a bug upstream, still applied
	// tolerantly but reported (stream.Env.OnInconsistentOp). A table's
	// materialize overwrites on conflict by design. False, the default of
	// older plans, reports nothing.
	View bool `json:",omitempty"`
	// FreshInserts marks a table whose plain inserts always carry a key
	// never used before (its hidden row ids, handed out once each; the
	// engine refuses an insert that names one). Such an insert is stored
	// without looking the key up. False, the default of older plans, looks
	// every key up.
	FreshInserts bool `json:",omitempty"`
	// CheckedWrites marks a table keyed by its declared primary key whose
	// every writer is a session statement that read the key first: an
	// insert is of a key the table does not hold (else the statement
	// failed with 23505, or ON CONFLICT turned it into an update pair) and
	// an update pair carries the stored row. Its input is then as
	// consistent as a view's, and is stored without looking keys up
	// (unless stream.Env.CheckInserts, which checks it as a view's).
	// A connector that upserts must not set it. False, the default of
	// older plans, looks every inserted key up.
	CheckedWrites bool `json:",omitempty"`
}

// Backfill reads an upstream table's committed snapshot and merges it with
// the table's live changes (its input), with no gap and no duplicate.
type Backfill struct {
	Upstream Table
	// Columns picks the upstream columns this job reads.
	Columns []int
	// ProgressTable checkpoints the scan position per vnode.
	ProgressTable Table
	// GateTable, when set, puts a gate on the backfill's output that
	// queues it while the job is paused or throttled (stream/overtake).
	GateTable *Table `json:",omitempty"`
}

// Merge receives from the actors of an upstream fragment.
type Merge struct {
	UpstreamFragment uint32
	// Port tells apart several edges from one upstream fragment into one
	// fragment: a view reading one table twice (a UNION ALL of two
	// filters of it) backfills it twice, and a join of a shared subquery
	// with itself reads its fragment twice; each edge needs its own
	// channels. Zero for the first edge.
	Port uint32 `json:",omitempty"`
	// GateTable is Backfill.GateTable's for a merge not under a backfill.
	GateTable *Table `json:",omitempty"`
}

// DispatchKind says how a fragment's output is spread over the actors of a
// downstream fragment.
type DispatchKind string

// Dispatch kinds.
const (
	DispatchHash      DispatchKind = "hash"       // by DistKey over vnodes
	DispatchBroadcast DispatchKind = "broadcast"  // every row to every actor
	DispatchSimple    DispatchKind = "simple"     // to the single downstream actor
	DispatchNoShuffle DispatchKind = "no_shuffle" // actor i to actor i
)

// Dispatch describes one downstream edge of a fragment.
type Dispatch struct {
	Kind       DispatchKind
	DistKey    []int `json:",omitempty"`
	Downstream uint32
	// Port matches the Merge node that reads this edge, when a shared
	// node's fragment sends to one fragment more than once (a self-join
	// of a shared subquery).
	Port uint32 `json:",omitempty"`
}

// Fragment is a tree of nodes run by Parallelism actors.
type Fragment struct {
	ID          uint32
	Root        *Node
	Parallelism int
	// Singleton fragments (simple agg, top-N without groups) run one actor.
	Singleton bool
	Outputs   []Dispatch
}

// Job is a streaming job: the fragments of one table or materialized view.
type Job struct {
	ID        uint32
	Fragments []*Fragment
	// Upstreams are edges from fragments of other jobs (the materialize
	// fragment of a table or view this job reads) into this job.
	Upstreams []UpstreamEdge `json:",omitempty"`
}

// UpstreamEdge connects a fragment of another job to a fragment of this
// one. Backfill reads its upstream over a no-shuffle edge: upstream actor i
// sends to downstream actor i, which owns the same vnodes.
type UpstreamEdge struct {
	TableID          uint32
	UpstreamFragment uint32
	Downstream       uint32
	Kind             DispatchKind
	// Port matches the Merge node that reads this edge (see Merge.Port).
	Port uint32 `json:",omitempty"`
}

// Fragment returns the fragment with the given id, or nil.
func (j *Job) Fragment(id uint32) *Fragment {
	for _, f := range j.Fragments {
		if f.ID == id {
			return f
		}
	}
	return nil
}
