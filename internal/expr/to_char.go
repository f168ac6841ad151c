package expr

import (
	"strconv"
	"strings"
	"time"

	"github.com/sluice-db/sluice/internal/sqlerr"
	"github.com/sluice-db/sluice/internal/types"
)

// to_char(timestamp|timestamptz, text) formats by a Postgres template:
// the patterns below, case-sensitive where Postgres is (Mon, MON, mon),
// an FM prefix that drops padding, "double-quoted" text and \-escapes
// copied as written, and every other character copied. timestamptz is
// formatted in the session's time zone; infinite values give NULL, as in
// Postgres.

func registerToChar(r registry) {
	r.add("to_char", sig(tTs, types.TVarchar), types.TVarchar, toCharBuild(func(_ *Context, d types.Datum) (time.Time, bool, error) {
		ts := d.(types.DTimestamp)
		return ts.Time(), ts.IsFinite(), nil
	}))
	r.add("to_char", sig(tTstz, types.TVarchar), types.TVarchar, toCharBuild(func(c *Context, d types.Datum) (time.Time, bool, error) {
		ts := d.(types.DTimestamptz)
		if ts == types.TimestamptzInfinity || ts == types.TimestamptzNegInfinity {
			return time.Time{}, false, nil
		}
		w, err := wallFromTz(ts, c.loc())
		return types.DTimestamp(w).Time(), true, err
	}))
}

// toCharBuild builds to_char over a time read by wall (false: infinite,
// giving NULL). A constant template is compiled once, when the
// expression is built (a view's template errors at CREATE); any other is
// compiled per row.
func toCharBuild(wall func(*Context, types.Datum) (time.Time, bool, error)) buildFn {
	return func(args []Expr, ret types.Type) (Expr, error) {
		var prog []tcItem
		if lit, ok := args[1].(*literalExpr); ok {
			if s, ok := lit.val.(string); ok {
				var err error
				if prog, err = compileTemplate(s); err != nil {
					return nil, err
				}
			}
		}
		return &naryExpr{args: args, typ: ret, strict: true, fn: func(c *Context, a []types.Datum) (types.Datum, error) {
			t, finite, err := wall(c, a[0])
			if err != nil || !finite || a[1].(string) == "" {
				return nil, err // an empty template gives NULL, as in Postgres
			}
			items := prog
			if items == nil {
				if items, err = compileTemplate(a[1].(string)); err != nil {
					return nil, err
				}
			}
			return runTemplate(t, items), nil
		}}, nil
	}
}

// tcPattern is one template pattern: what it writes for t; fm drops the
// padding of numbers and names.
type tcPattern struct {
	name string
	fmt  func(t time.Time, fm bool) string
}

// tcPatterns, longest first where one is a prefix of another (HH24
// before HH, YYYY before YY, Month before Mon, DDD before DD before D).
var tcPatterns = []tcPattern{
	{"HH24", func(t time.Time, fm bool) string { return pad(t.Hour(), 2, fm) }},
	{"HH12", func(t time.Time, fm bool) string { return pad(hour12(t), 2, fm) }},
	{"HH", func(t time.Time, fm bool) string { return pad(hour12(t), 2, fm) }},
	{"MI", func(t time.Time, fm bool) string { return pad(t.Minute(), 2, fm) }},
	{"SS", func(t time.Time, fm bool) string { return pad(t.Second(), 2, fm) }},
	{"MS", func(t time.Time, fm bool) string { return pad(t.Nanosecond()/1e6, 3, fm) }},
	{"US", func(t time.Time, fm bool) string { return pad(t.Nanosecond()/1e3, 6, fm) }},
	{"AM", func(t time.Time, _ bool) string { return meridiem(t, "AM", "PM") }},
	{"PM", func(t time.Time, _ bool) string { return meridiem(t, "AM", "PM") }},
	{"am", func(t time.Time, _ bool) string { return meridiem(t, "am", "pm") }},
	{"pm", func(t time.Time, _ bool) string { return meridiem(t, "am", "pm") }},
	{"A.M.", func(t time.Time, _ bool) string { return meridiem(t, "A.M.", "P.M.") }},
	{"P.M.", func(t time.Time, _ bool) string { return meridiem(t, "A.M.", "P.M.") }},
	{"a.m.", func(t time.Time, _ bool) string { return meridiem(t, "a.m.", "p.m.") }},
	{"p.m.", func(t time.Time, _ bool) string { return meridiem(t, "a.m.", "p.m.") }},
	{"YYYY", func(t time.Time, fm bool) string { return pad(t.Year(), 4, fm) }},
	{"YYY", func(t time.Time, fm bool) string { return pad(t.Year()%1000, 3, fm) }},
	{"YY", func(t time.Time, fm bool) string { return pad(t.Year()%100, 2, fm) }},
	{"Y", func(t time.Time, _ bool) string { return strconv.Itoa(t.Year() % 10) }},
	{"MONTH", func(t time.Time, fm bool) string { return name(strings.ToUpper(t.Month().String()), fm) }},
	{"Month", func(t time.Time, fm bool) string { return name(t.Month().String(), fm) }},
	{"month", func(t time.Time, fm bool) string { return name(strings.ToLower(t.Month().String()), fm) }},
	{"MON", func(t time.Time, _ bool) string { return strings.ToUpper(t.Month().String()[:3]) }},
	{"Mon", func(t time.Time, _ bool) string { return t.Month().String()[:3] }},
	{"mon", func(t time.Time, _ bool) string { return strings.ToLower(t.Month().String()[:3]) }},
	{"MM", func(t time.Time, fm bool) string { return pad(int(t.Month()), 2, fm) }},
	{"DAY", func(t time.Time, fm bool) string { return name(strings.ToUpper(t.Weekday().String()), fm) }},
	{"Day", func(t time.Time, fm bool) string { return name(t.Weekday().String(), fm) }},
	{"day", func(t time.Time, fm bool) string { return name(strings.ToLower(t.Weekday().String()), fm) }},
	{"DY", func(t time.Time, _ bool) string { return strings.ToUpper(t.Weekday().String()[:3]) }},
	{"Dy", func(t time.Time, _ bool) string { return t.Weekday().String()[:3] }},
	{"dy", func(t time.Time, _ bool) string { return strings.ToLower(t.Weekday().String()[:3]) }},
	{"DDD", func(t time.Time, fm bool) string { return pad(t.YearDay(), 3, fm) }},
	{"DD", func(t time.Time, fm bool) string { return pad(t.Day(), 2, fm) }},
	{"D", func(t time.Time, _ bool) string { return strconv.Itoa(int(t.Weekday()) + 1) }},
	{"Q", func(t time.Time, _ bool) string { return strconv.Itoa((int(t.Month())-1)/3 + 1) }},
}

// tcLower are the patterns Postgres also takes in lower case (the numeric
// ones, whose case cannot show in what they write).
var tcLower = map[string]bool{"HH24": true, "HH12": true, "HH": true, "MI": true, "SS": true, "MS": true, "US": true,
	"YYYY": true, "YYY": true, "YY": true, "Y": true, "MM": true, "DDD": true, "DD": true, "D": true, "Q": true}

// tcUnsupported are Postgres's other patterns and modifiers, longest
// first, compared ignoring case. Postgres would write a value for each,
// so copying one as text would be a wrong answer: it is an error.
var tcUnsupported = []string{"Y,YYY", "SSSSS", "SSSS", "IDDD", "IYYY", "IYY", "A.D.", "B.C.", "FF1", "FF2", "FF3", "FF4",
	"FF5", "FF6", "TZH", "TZM", "IY", "ID", "IW", "WW", "CC", "AD", "BC", "FX", "OF", "RM", "TZ", "TM", "TH", "SP", "I", "J", "W"}

// tcItem is one step of a compiled template: a pattern (with FM) or
// literal text.
type tcItem struct {
	p   *tcPattern
	fm  bool
	lit string
}

// formatTemplate writes t by tmpl.
func formatTemplate(t time.Time, tmpl string) (types.Datum, error) {
	items, err := compileTemplate(tmpl)
	if err != nil {
		return nil, err
	}
	return runTemplate(t, items), nil
}

func runTemplate(t time.Time, items []tcItem) string {
	var b strings.Builder
	for _, it := range items {
		if it.p != nil {
			b.WriteString(it.p.fmt(t, it.fm))
		} else {
			b.WriteString(it.lit)
		}
	}
	return b.String()
}

// compileTemplate reads tmpl into steps (never nil: an empty template
// writes the empty string).
func compileTemplate(tmpl string) ([]tcItem, error) {
	items := []tcItem{}
	var lit strings.Builder
	flush := func() {
		if lit.Len() > 0 {
			items = append(items, tcItem{lit: lit.String()})
			lit.Reset()
		}
	}
	for i := 0; i < len(tmpl); {
		fm := false
		if strings.HasPrefix(tmpl[i:], "FM") || strings.HasPrefix(tmpl[i:], "fm") {
			fm, i = true, i+2
		}
		for _, u := range tcUnsupported {
			if len(tmpl)-i >= len(u) && strings.EqualFold(tmpl[i:i+len(u)], u) {
				return nil, sqlerr.Errorf(sqlerr.FeatureNotSupported, "to_char: the template pattern %q is not supported; quote it (\"%s\") to write it as text", tmpl[i:i+len(u)], tmpl[i:i+len(u)])
			}
		}
		if p, ok := matchPattern(tmpl[i:]); ok {
			flush()
			items = append(items, tcItem{p: p, fm: fm})
			i += len(p.name)
			continue
		}
		if fm {
			continue // FM before no pattern writes nothing
		}
		switch c := tmpl[i]; {
		case c == '"':
			i = quotedText(tmpl, i+1, &lit)
		case c == '\\' && i+1 < len(tmpl) && tmpl[i+1] == '"':
			lit.WriteByte('"')
			i += 2
		default:
			lit.WriteByte(c)
			i++
		}
	}
	flush()
	return items, nil
}

// quotedText copies the text of a double-quoted piece starting at i (just
// after the opening quote) into lit, a backslash escaping a quote, and
// returns the position after the closing quote (or the end).
func quotedText(tmpl string, i int, lit *strings.Builder) int {
	for ; i < len(tmpl); i++ {
		switch {
		case tmpl[i] == '\\' && i+1 < len(tmpl) && tmpl[i+1] == '"':
			lit.WriteByte('"')
			i++
		case tmpl[i] == '"':
			return i + 1
		default:
			lit.WriteByte(tmpl[i])
		}
	}
	return i
}

func matchPattern(s string) (*tcPattern, bool) {
	for i := range tcPatterns {
		p := &tcPatterns[i]
		if strings.HasPrefix(s, p.name) || tcLower[p.name] && strings.HasPrefix(s, strings.ToLower(p.name)) {
			return p, true
		}
	}
	return nil, false
}

func pad(v, width int, fm bool) string {
	s := strconv.Itoa(v)
	if fm || len(s) >= width {
		return s
	}
	return strings.Repeat("0", width-len(s)) + s
}

// name pads a month or day name to 9 characters, as Postgres does.
func name(s string, fm bool) string {
	if fm || len(s) >= 9 {
		return s
	}
	return s + strings.Repeat(" ", 9-len(s))
}

func hour12(t time.Time) int {
	if h := t.Hour() % 12; h != 0 {
		return h
	}
	return 12
}

func meridiem(t time.Time, am, pm string) string {
	if t.Hour() < 12 {
		return am
	}
	return pm
}
