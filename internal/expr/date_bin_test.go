package expr

import (
	"testing"

	"github.com/sluice-db/sluice/internal/types"
)

// TestDateBinColumns: date_bin over columns, every argument varying by
// row (TUMBLE's are constant; a stride or origin from a column must work
// the same), with NULLs, infinity and both timestamp types.
func TestDateBinColumns(t *testing.T) {
	tstz := types.TTimestamptz
	three := []types.Type{ivl, ts, ts}
	rows := "+ '15 minutes' '2020-02-11 15:44:17' '2001-01-01'\n" +
		"+ '1 hour' '2020-02-11 15:44:17' '2001-01-01 00:30'\n" +
		"+ NULL '2020-02-11 15:44:17' '2001-01-01'\n" +
		"+ '1 day' NULL '2001-01-01'\n" +
		"+ '1 day' '2020-02-11 15:44:17' NULL\n" +
		"+ '1 month' infinity '2001-01-01'\n" +
		"+ '10 seconds' '1999-12-31 23:59:55' '2000-01-01'\n"
	args := Func("date_bin", Input(0, ivl), Input(1, ts), Input(2, ts))
	runCases(t, []evalCase{
		{"by row", three, rows, args, "'2020-02-11 15:30:00' '2020-02-11 15:30:00' NULL NULL NULL infinity '1999-12-31 23:59:50'"},
		{"months refused", three, "+ '1 month' '2020-02-11' '2001-01-01'", args, "error 0A000"},
		{"zero stride refused", three, "+ '0 seconds' '2020-02-11' '2001-01-01'", args, "error 22023"},
		{"with time zone", []types.Type{ivl, tstz, tstz}, "+ '1 hour' '2020-02-11 15:44:17+00' '2001-01-01 00:00+00'",
			Func("date_bin", Input(0, ivl), Input(1, tstz), Input(2, tstz)), "'2020-02-11 15:00:00+00'"},
	})
}
