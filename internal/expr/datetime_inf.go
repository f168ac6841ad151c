package expr

import (
	"math"

	"github.com/cockroachdb/apd/v3"
	"github.com/sluice-db/sluice/internal/sqlerr"
	"github.com/sluice-db/sluice/internal/types"
)

// Dates and timestamps have ±infinity (stored as the extreme integers, see
// types/datetime.go). Calendar code must never see them: their micros are
// no real instant, and converting them gives garbage years. So every
// datetime function here decides the infinities first, the way Postgres
// does: arithmetic keeps them (infinity + 1 day is infinity), casts carry
// them across types, subtracting them is an error, date_trunc keeps them,
// and extract gives ±Infinity for the fields that grow with time and NULL
// for the others.

// infSign returns +1 or -1 for a timestamp-like int64 at an infinity, else 0.
func infSign(x int64) int {
	switch x {
	case math.MaxInt64:
		return 1
	case math.MinInt64:
		return -1
	}
	return 0
}

// dateInfSign is infSign for a date.
func dateInfSign(d types.DDate) int {
	switch d {
	case types.DateInfinity:
		return 1
	case types.DateNegInfinity:
		return -1
	}
	return 0
}

// tsOfInf returns the timestamp micros of infinity with sign s.
func tsOfInf(s int) int64 {
	if s > 0 {
		return math.MaxInt64
	}
	return math.MinInt64
}

// dateOfInf returns the date infinity with sign s.
func dateOfInf(s int) types.DDate {
	if s > 0 {
		return types.DateInfinity
	}
	return types.DateNegInfinity
}

// Timestamps stop at 294277-01-01 (exclusive); a date past that has no
// timestamp (types/datetime.go).
const maxTimestampDate = 106762940

// dateToTimestamp is date → timestamp micros: infinities carry over, a date
// beyond the timestamp range is 22008, as in Postgres's date2timestamp.
func dateToTimestamp(d types.DDate) (int64, error) {
	if s := dateInfSign(d); s != 0 {
		return tsOfInf(s), nil
	}
	if int64(d) >= maxTimestampDate {
		return 0, sqlerr.New(sqlerr.DatetimeFieldOverflow, "date out of range for timestamp")
	}
	return dateToWall(d), nil
}

func errSubtractInfinite(what string) error {
	return sqlerr.New(sqlerr.DatetimeFieldOverflow, "cannot subtract infinite "+what)
}

// monotonicFields are the extract fields Postgres answers with ±Infinity
// for an infinite timestamp; every other field is NULL there.
var monotonicFields = map[string]bool{
	"year": true, "decade": true, "century": true, "millennium": true,
	"julian": true, "isoyear": true, "epoch": true,
}

// extractInfinite is extract(field from ±infinity).
func extractInfinite(field string, sign int, double bool) types.Datum {
	if !monotonicFields[field] {
		return nil
	}
	if double {
		return math.Inf(sign)
	}
	return &apd.Decimal{Form: apd.Infinite, Negative: sign < 0}
}
