package mview

import "github.com/sluice-db/sluice/internal/types"

// The kinds of stream inconsistency a view's materialize reports. Each is a
// change that cannot happen if the view's input is a consistent change
// stream of its stream key; it is applied tolerantly all the same (see
// doc.go), so the view keeps the newest row, but a count above zero means an
// operator upstream lost or reordered changes.
const (
	// InconsistentDeleteAbsent: a Delete or UpdateDelete of a key the view
	// does not hold.
	InconsistentDeleteAbsent = "delete of absent key"
	// InconsistentDeleteMismatch: a Delete or UpdateDelete whose row
	// differs from the stored row of its key.
	InconsistentDeleteMismatch = "delete of different row"
	// InconsistentInsertPresent: an Insert or UpdateInsert of a key the
	// view already holds.
	InconsistentInsertPresent = "insert of present key"
)

// consistency reports inconsistent changes of one view's materialize, or a
// table's whose writers check keys (plan.Materialize.CheckedWrites). A nil
// report (another table's materialize, or no listener) checks nothing. The
// checks only compare the input with the stored row the materialize reads
// anyway, so they add no state access.
type consistency struct {
	table  uint32
	report func(table uint32, kind string, key types.Row)
}

func (c consistency) enabled() bool { return c.report != nil }

// deleted checks a delete of row's key: want is the row the input retracts,
// stored the row held (ok=false: none).
func (c consistency) deleted(pk, want, stored types.Row, ok bool) {
	switch {
	case !c.enabled():
	case !ok:
		c.report(c.table, InconsistentDeleteAbsent, pk)
	case !sameRow(want, stored):
		c.report(c.table, InconsistentDeleteMismatch, pk)
	}
}

// inserted checks an insert of a key that must not be held.
func (c consistency) inserted(pk types.Row, held bool) {
	if c.enabled() && held {
		c.report(c.table, InconsistentInsertPresent, pk)
	}
}

// sameRow compares by SQL value (numeric 1.0 = 1.00), with NULL equal to
// NULL: a retraction must carry the row that was inserted, and value
// equality is what the view's readers can see.
func sameRow(a, b types.Row) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if (a[i] == nil) != (b[i] == nil) || types.Compare(a[i], b[i]) != 0 {
			return false
		}
	}
	return true
}
