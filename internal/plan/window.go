package plan

import "github.com/sluice-db/sluice/internal/types"

// WindowKind names a window function.
type WindowKind string

// Window functions: the ranking and offset functions of Postgres, and
// every aggregate of AggKind computed over a frame (WindowAgg).
const (
	WindowRowNumber   WindowKind = "row_number"
	WindowRank        WindowKind = "rank"
	WindowDenseRank   WindowKind = "dense_rank"
	WindowPercentRank WindowKind = "percent_rank"
	WindowCumeDist    WindowKind = "cume_dist"
	WindowNtile       WindowKind = "ntile"
	WindowLag         WindowKind = "lag"
	WindowLead        WindowKind = "lead"
	WindowFirstValue  WindowKind = "first_value"
	WindowLastValue   WindowKind = "last_value"
	WindowNthValue    WindowKind = "nth_value"
	WindowAgg         WindowKind = "agg"
)

// BoundKind is where one end of a window frame lies.
type BoundKind uint8

// Frame bounds, in the order they lie relative to the current row.
const (
	UnboundedPreceding BoundKind = iota
	OffsetPreceding
	CurrentRow
	OffsetFollowing
	UnboundedFollowing
)

// FrameBound is one end of a frame; Offset counts rows for the Offset
// kinds.
type FrameBound struct {
	Kind   BoundKind
	Offset int64 `json:",omitempty"`
}

// Frame is the rows of the partition a call sees for one row. In ROWS
// mode bounds count rows; in RANGE mode (offsets are not supported) a
// CURRENT ROW bound takes in the row's peers, the rows equal to it on
// every ORDER BY column. Without ORDER BY every row is a peer.
type Frame struct {
	Rows  bool
	Start FrameBound
	End   FrameBound
}

// DefaultFrame is RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW.
var DefaultFrame = Frame{Start: FrameBound{Kind: UnboundedPreceding}, End: FrameBound{Kind: CurrentRow}}

// WindowCall is one window function call.
type WindowCall struct {
	Kind WindowKind
	// Agg is the aggregate of a WindowAgg call.
	Agg AggKind `json:",omitempty"`
	// Args are input columns: the value (lag, lead, *_value, aggregates),
	// then lag's and lead's default.
	Args []int `json:",omitempty"`
	// Offset is lag's and lead's row offset, nth_value's position and
	// ntile's bucket count.
	Offset int64 `json:",omitempty"`
	// Filter is a boolean input column an aggregate's rows must be true
	// in (FILTER (WHERE …)); -1 or absent: none.
	Filter *int `json:",omitempty"`
	Frame  Frame
	Type   types.Type
}

// OverWindow appends one column per call to each input row: the calls'
// values over the row's partition (rows equal on PartitionBy), ordered by
// OrderBy. Table keeps the input rows keyed by the partition, the order
// and the input's stream key, spread by the partition.
type OverWindow struct {
	PartitionBy []int `json:",omitempty"`
	OrderBy     []ColumnOrder
	Calls       []WindowCall
	Table       Table
}
