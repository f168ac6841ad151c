package expr

import (
	"time"

	"github.com/cockroachdb/apd/v3"
	"github.com/sluice-db/sluice/internal/sqlerr"
	"github.com/sluice-db/sluice/internal/types"
)

// dateFields are the units extract accepts for a date (Postgres 14+'s
// extract_date): the calendar ones. A time-of-day unit is 0A000 there,
// and epoch is a whole number of seconds rather than one with six
// decimals, which is why date has its own extract instead of going
// through timestamp.
var dateFields = map[string]bool{
	"year": true, "quarter": true, "month": true, "week": true, "day": true,
	"epoch": true, "dow": true, "isodow": true, "doy": true, "decade": true,
	"century": true, "millennium": true, "isoyear": true,
}

func extractDateBuild(args []Expr, ret types.Type) (Expr, error) {
	field, err := constField(args[0])
	if err != nil {
		return nil, err
	}
	field = normalizeField(field)
	if !dateFields[field] {
		return nil, sqlerr.Errorf(sqlerr.FeatureNotSupported, "unit %q not supported for type date", field)
	}
	return &naryExpr{args: args[1:], typ: ret, strict: true, fn: func(_ *Context, a []types.Datum) (types.Datum, error) {
		d := a[0].(types.DDate)
		if s := dateInfSign(d); s != 0 {
			return extractInfinite(field, s, false), nil
		}
		if field == "epoch" {
			return apd.New(int64(d)*types.MicrosPerDay/types.MicrosPerSecond, 0), nil
		}
		// Through YMD, not micros: dates reach far past the timestamps.
		y, m, day := d.YMD()
		fv := extractTime(field, time.Date(y, time.Month(m), day, 0, 0, 0, 0, time.UTC), 0)
		return apd.New(fv.v, -fv.scale), nil
	}}, nil
}
