package connector

import (
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/sluice-db/sluice/internal/sqlerr"
)

// options are a source's WITH options as a connector consumes them: each
// lookup marks the option used, and whatever is left unused at the end is
// an error naming it.
type options struct {
	connector string
	vals      map[string]string // by lower-case name
	written   map[string]string // lower-case name → name as written
	used      map[string]bool
	known     []string // every name looked up, for suggestions
}

func newOptions(connector string, opts map[string]string) *options {
	o := &options{connector: connector, vals: map[string]string{}, written: map[string]string{}, used: map[string]bool{}}
	for k, v := range opts {
		lk := strings.ToLower(k)
		o.vals[lk], o.written[lk] = v, k
	}
	return o
}

// str returns option name's value, if set.
func (o *options) str(name string) (string, bool) {
	o.known = append(o.known, name)
	v, ok := o.vals[name]
	if ok {
		o.used[name] = true
	}
	return v, ok
}

// int returns option name as an integer in [lo, hi], or def when unset.
func (o *options) int(name string, def, lo, hi int64) (int64, error) {
	v, ok := o.str(name)
	if !ok {
		return def, nil
	}
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil || n < lo || n > hi {
		return 0, o.invalid(name, v, rangeText(lo, hi))
	}
	return n, nil
}

// float returns option name as a number, or def when unset.
func (o *options) float(name string, def float64) (float64, error) {
	v, ok := o.str(name)
	if !ok {
		return def, nil
	}
	f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, o.invalid(name, v, "a finite number")
	}
	return f, nil
}

// refuse makes each of names, when set, a 0A000 error: RisingWave takes
// it, Sluice does not implement it (yet). allowed, if set, is the one
// value that asks for nothing and is accepted.
func (o *options) refuse(allowed map[string]string, names ...string) error {
	for _, n := range names {
		v, ok := o.str(n)
		if !ok {
			continue
		}
		if a, ok := allowed[n]; ok && strings.EqualFold(strings.TrimSpace(v), a) {
			continue
		}
		return sqlerr.Errorf(sqlerr.FeatureNotSupported, "option %q of connector %s is not supported", o.written[n], o.connector)
	}
	return nil
}

func (o *options) invalid(name, v, want string) error {
	return sqlerr.Errorf(sqlerr.InvalidParameterValue, "invalid value %q for option %q of connector %s: want %s",
		v, o.written[name], o.connector, want)
}

func rangeText(lo, hi int64) string {
	if hi == math.MaxInt64 {
		return "an integer ≥ " + strconv.FormatInt(lo, 10)
	}
	return "an integer from " + strconv.FormatInt(lo, 10) + " to " + strconv.FormatInt(hi, 10)
}

// unused returns an error naming the first option (by name) no lookup
// took, with the nearest known name when one is close.
func (o *options) unused() error {
	var left []string
	for k := range o.vals {
		if !o.used[k] {
			left = append(left, k)
		}
	}
	if len(left) == 0 {
		return nil
	}
	sort.Strings(left)
	name := left[0]
	msg := "unrecognized option \"" + o.written[name] + "\" for connector " + o.connector
	if s := nearest(name, o.known); s != "" {
		msg += "; did you mean \"" + s + "\"?"
	}
	return sqlerr.New(sqlerr.InvalidParameterValue, msg)
}

// nearest returns the known name closest to name by edit distance, if it
// is close enough to be a misspelling.
func nearest(name string, known []string) string {
	best, bestD := "", len(name)/3+2
	for _, k := range known {
		if d := editDistance(name, k); d < bestD {
			best, bestD = k, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance between a and b, in bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
