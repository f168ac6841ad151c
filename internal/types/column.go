package types

import (
	"fmt"
	"slices"

	"github.com/cockroachdb/apd/v3"
)

// Column is a vector of values of one SQL type with a null bitmap. The
// concrete type is always *Vec[T] with T the Go type of the SQL type's
// Datum (see datum.go); kernels type-assert to it and loop over Vals.
type Column interface {
	Type() Type
	Len() int
	IsNull(i int) bool
	// Get returns row i as a Datum, nil when NULL.
	Get(i int) Datum
	// Append appends d, which must be nil or of the column's Go type.
	Append(d Datum)
	// AppendFrom appends row i of src, a column of the same type.
	AppendFrom(src Column, i int)
	// AppendRange appends rows [from, to) of src, a column of the same
	// type.
	AppendRange(src Column, from, to int)
	// Set overwrites row i with d, which must be nil or of the column's
	// Go type.
	Set(i int, d Datum)
	// Gather returns a new column holding the rows at idx, in that order.
	Gather(idx []int) Column
	// Reset empties the column, keeping its capacity.
	Reset()
}

// Vec is the one implementation of Column: a plain slice of values and a
// bitmap whose set bits mark NULL rows. A NULL row's slot in Vals holds the
// zero value.
type Vec[T any] struct {
	Typ   Type
	Vals  []T
	Nulls Bitmap
	// shared: Vals is another column's too (Head). Set copies it first
	// and Reset lets it go, so neither writes into the other column; an
	// append cannot, as Head leaves no capacity past the last row.
	shared bool
}

// Type returns the SQL type.
func (v *Vec[T]) Type() Type { return v.Typ }

// Len returns the number of rows.
func (v *Vec[T]) Len() int { return len(v.Vals) }

// IsNull reports whether row i is NULL.
func (v *Vec[T]) IsNull(i int) bool { return v.Nulls.Get(i) }

// Get returns row i, nil when NULL.
func (v *Vec[T]) Get(i int) Datum {
	if v.Nulls.Get(i) {
		return nil
	}
	return v.Vals[i]
}

// Append appends d. A d of the wrong Go type is a bug in the caller.
func (v *Vec[T]) Append(d Datum) {
	if d == nil {
		v.AppendNull()
		return
	}
	x, ok := d.(T)
	if !ok {
		panic(fmt.Sprintf("types: appending %T to a %s column", d, v.Typ))
	}
	v.Vals = append(v.Vals, x)
}

// Set overwrites row i; a nil d makes it NULL.
func (v *Vec[T]) Set(i int, d Datum) {
	if v.shared {
		v.Vals, v.shared = slices.Clone(v.Vals), false
	}
	if d == nil {
		var zero T
		v.Vals[i] = zero
		v.Nulls.Set(i)
		return
	}
	v.Vals[i] = d.(T)
	v.Nulls.Clear(i)
}

// AppendNull appends a NULL row.
func (v *Vec[T]) AppendNull() {
	var zero T
	v.Nulls.Set(len(v.Vals))
	v.Vals = append(v.Vals, zero)
}

// AppendValue appends a non-NULL value without boxing.
func (v *Vec[T]) AppendValue(x T) { v.Vals = append(v.Vals, x) }

// AppendFrom appends row i of src, which must be a *Vec[T].
func (v *Vec[T]) AppendFrom(src Column, i int) {
	s := src.(*Vec[T])
	if s.Nulls.Get(i) {
		v.AppendNull()
		return
	}
	v.Vals = append(v.Vals, s.Vals[i])
}

// AppendRange appends rows [from, to) of src, which must be a *Vec[T]: one
// copy of the values, then the NULL bits.
func (v *Vec[T]) AppendRange(src Column, from, to int) {
	s := src.(*Vec[T])
	base := len(v.Vals)
	v.Vals = append(v.Vals, s.Vals[from:to]...)
	for i := from; i < to; {
		w := i >> 6
		if w >= len(s.Nulls) {
			return
		}
		if s.Nulls[w] == 0 { // no NULL in this word: skip it
			i = (w + 1) << 6
			continue
		}
		if s.Nulls.Get(i) {
			v.Nulls.Set(base + i - from)
		}
		i++
	}
}

// Gather returns the rows at idx as a new column.
func (v *Vec[T]) Gather(idx []int) Column {
	out := &Vec[T]{Typ: v.Typ, Vals: make([]T, len(idx))}
	for j, i := range idx {
		if v.Nulls.Get(i) {
			out.Nulls.Set(j)
			continue
		}
		out.Vals[j] = v.Vals[i]
	}
	return out
}

// Reset empties the vector, keeping its capacity unless its values are
// shared.
func (v *Vec[T]) Reset() {
	if v.shared {
		v.Vals, v.shared = nil, false
	}
	v.Vals = v.Vals[:0]
	v.Nulls = v.Nulls[:0]
}

// NewColumn returns an empty column of type t with room for capacity rows.
// It returns an error for a type it does not know, so that a malformed plan
// cannot crash the process.
func NewColumn(t Type, capacity int) (Column, error) {
	switch t.ID {
	case Bool:
		return &Vec[bool]{Typ: t, Vals: make([]bool, 0, capacity)}, nil
	case Int16, Int32, Int64:
		return &Vec[int64]{Typ: t, Vals: make([]int64, 0, capacity)}, nil
	case Float32, Float64:
		return &Vec[float64]{Typ: t, Vals: make([]float64, 0, capacity)}, nil
	case Decimal:
		return &Vec[*apd.Decimal]{Typ: t, Vals: make([]*apd.Decimal, 0, capacity)}, nil
	case Varchar:
		return &Vec[string]{Typ: t, Vals: make([]string, 0, capacity)}, nil
	case Bytea:
		return &Vec[[]byte]{Typ: t, Vals: make([][]byte, 0, capacity)}, nil
	case Date:
		return &Vec[DDate]{Typ: t, Vals: make([]DDate, 0, capacity)}, nil
	case Time:
		return &Vec[DTime]{Typ: t, Vals: make([]DTime, 0, capacity)}, nil
	case Timestamp:
		return &Vec[DTimestamp]{Typ: t, Vals: make([]DTimestamp, 0, capacity)}, nil
	case Timestamptz:
		return &Vec[DTimestamptz]{Typ: t, Vals: make([]DTimestamptz, 0, capacity)}, nil
	case Interval:
		return &Vec[DInterval]{Typ: t, Vals: make([]DInterval, 0, capacity)}, nil
	case Array:
		if !t.Valid() {
			break
		}
		return &Vec[DArray]{Typ: t, Vals: make([]DArray, 0, capacity)}, nil
	case Unknown:
		// An untyped NULL column (SELECT NULL): carried as varchar NULLs.
		return &Vec[string]{Typ: t, Vals: make([]string, 0, capacity)}, nil
	}
	return nil, fmt.Errorf("types: no column for %s", t)
}

// NullColumn returns a column of type t (validated by the caller) holding
// n NULLs.
func NullColumn(t Type, n int) Column {
	c := MustColumn(t, n)
	c.(nullFiller).fillNulls(n)
	return c
}

// nullFiller is every *Vec: NullColumn fills one at once rather than
// row by row (a hop window's unread columns, five copies a row).
type nullFiller interface{ fillNulls(n int) }

// fillNulls makes an empty v hold n NULLs.
func (v *Vec[T]) fillNulls(n int) {
	v.Vals = v.Vals[:n] // capacity n, zeroed by make
	words := (n + 63) >> 6
	v.Nulls = make(Bitmap, words)
	for w := range v.Nulls {
		v.Nulls[w] = ^uint64(0)
	}
	if r := n & 63; r != 0 {
		v.Nulls[words-1] = 1<<uint(r) - 1
	}
}

// MustColumn is NewColumn for types already validated by the caller.
func MustColumn(t Type, capacity int) Column {
	c, err := NewColumn(t, capacity)
	if err != nil {
		panic(err)
	}
	return c
}

// ColumnOf builds a column of type t from datums.
func ColumnOf(t Type, ds ...Datum) Column {
	c := MustColumn(t, len(ds))
	for _, d := range ds {
		c.Append(d)
	}
	return c
}

// Head returns c's first n rows as a column sharing c's values, for a
// column made once and handed out many times (a constant, the NULLs of a
// column nobody reads: NullHeads). The head's Set and Reset copy or let
// go of the shared values, but c itself must not change while a head is
// used. The NULL bitmap is copied (when c has NULLs), so the head of a
// NULL-free column costs one header.
func Head(c Column, n int) Column { return c.(vec).head(n) }

// vec is every *Vec: what Head needs beyond Column.
type vec interface{ head(n int) Column }

func (v *Vec[T]) head(n int) Column {
	h := &Vec[T]{Typ: v.Typ, Vals: v.Vals[:n:n], shared: true}
	if v.Nulls.Any() {
		h.Nulls = make(Bitmap, (n+63)>>6)
		copy(h.Nulls, v.Nulls)
		if r := n & 63; r != 0 && len(h.Nulls) > 0 {
			h.Nulls[len(h.Nulls)-1] &= 1<<uint(r) - 1
		}
	}
	return h
}
