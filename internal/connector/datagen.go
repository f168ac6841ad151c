package connector

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/sluice-db/sluice/internal/sqlerr"
	"github.com/sluice-db/sluice/internal/types"
)

// datagenSource is RisingWave's datagen connector: each column a sequence
// or random values, at datagen.rows.per.second over datagen.split.num
// splits. Row i of the whole source (split i mod splits) is a function
// of i alone — a sequence column holds start + i, a random one a hash of
// its seed and i — so a split replays the same rows from an offset. The
// exception is a random timestamp, drawn back from the time the reader
// opened: a replayed row keeps its id and other values but gets a new
// time.
type datagenSource struct {
	gens   []*datagenField
	rowID  bool
	schema []types.Type
	splits int64
	rate   int64 // rows per second over all splits
	rows   int64 // rows in total (the shortest sequence); MaxInt64: endless
}

// datagenField generates one column.
type datagenField struct {
	name     string
	t        types.Type
	sequence bool
	start    int64 // sequence: start, start+1, … end
	end      int64
	min, max float64 // random floats and numerics
	imin     int64   // random integers: imin…imax
	imax     int64
	length   int
	seed     uint64
	maxPast  time.Duration
}

func openDatagen(o *options, cols []Column, rowID bool) (Source, error) {
	s := &datagenSource{rowID: rowID, rows: math.MaxInt64, schema: Spec{Columns: cols, RowID: rowID}.Schema()}
	var err error
	if s.rate, err = o.int("datagen.rows.per.second", 10, 1, math.MaxInt64); err != nil {
		return nil, err
	}
	if s.splits, err = o.int("datagen.split.num", 1, 1, 1024); err != nil {
		return nil, err
	}
	for i, c := range cols {
		f, err := parseDatagenField(o, i, c)
		if err != nil {
			return nil, err
		}
		if n := f.end - f.start + 1; f.sequence && n > 0 { // n ≤ 0: the whole int64 range
			s.rows = min(s.rows, n)
		}
		s.gens = append(s.gens, f)
	}
	if err := strayFieldOptions(o, cols); err != nil {
		return nil, err
	}
	return s, nil
}

// parseDatagenField reads the fields.<column>.* options of column i.
func parseDatagenField(o *options, i int, c Column) (*datagenField, error) {
	p := "fields." + strings.ToLower(c.Name) + "."
	f := &datagenField{name: c.Name, t: c.Type}
	kind, _ := o.str(p + "kind")
	switch strings.ToLower(strings.TrimSpace(kind)) {
	case "sequence":
		f.sequence = true
	case "", "random":
	default:
		return nil, o.invalid(p+"kind", kind, "sequence or random")
	}
	if !datagenTypeOK(c.Type, f.sequence) {
		how := "random"
		if f.sequence {
			how = "sequence"
		}
		return nil, sqlerr.Errorf(sqlerr.FeatureNotSupported, "datagen cannot generate %s values of type %s (column %q)", how, c.Type, c.Name)
	}
	lo, hi := intRange(c.Type)
	var err error
	if f.sequence {
		if f.start, err = o.int(p+"start", 0, lo, hi); err != nil {
			return nil, err
		}
		// Without an end the sequence runs to the type's largest value.
		f.end, err = o.int(p+"end", hi, f.start, hi)
		return f, err
	}
	seed, err := o.int(p+"seed", int64(i), math.MinInt64, math.MaxInt64)
	if err != nil {
		return nil, err
	}
	f.seed = uint64(seed)
	// Each type takes only the options that shape it, so one that would
	// do nothing is refused as unrecognized.
	switch c.Type.ID {
	case types.Int16, types.Int32, types.Int64:
		if f.imin, err = o.int(p+"min", 0, lo, hi); err != nil {
			return nil, err
		}
		f.imax, err = o.int(p+"max", max(min(32767, hi), f.imin), f.imin, hi)
	case types.Float32, types.Float64, types.Decimal:
		err = f.floatRange(o, p)
	case types.Varchar:
		var length int64
		length, err = o.int(p+"length", 10, 0, 1<<16)
		f.length = int(length)
	case types.Timestamp, types.Timestamptz:
		f.maxPast, err = maxPast(o, p+"max_past")
	}
	return f, err
}

func (f *datagenField) floatRange(o *options, p string) error {
	var err error
	if f.min, err = o.float(p+"min", 0); err != nil {
		return err
	}
	if f.max, err = o.float(p+"max", 32767); err != nil {
		return err
	}
	if f.max < f.min {
		return sqlerr.Errorf(sqlerr.InvalidParameterValue, "datagen range [%v, %v] of column %q is empty", f.min, f.max, f.name)
	}
	return nil
}

func maxPast(o *options, name string) (time.Duration, error) {
	v, ok := o.str(name)
	if !ok {
		return 24 * time.Hour, nil
	}
	d, err := types.ParseDatum(v, types.Type{ID: types.Interval})
	iv, _ := d.(types.DInterval)
	// At most a century: a time.Duration holds about 292 years.
	const century = 36525 * 86_400_000_000
	us := float64(int64(iv.Months)*30+int64(iv.Days))*86_400_000_000 + float64(iv.Micros)
	if err != nil || us < 0 || us > century {
		return 0, o.invalid(name, v, "an interval from 0 to 100 years, such as '1 day' or '2 hours 37 minutes'")
	}
	return time.Duration(us) * time.Microsecond, nil
}

// strayFieldOptions refuses fields.<x>.… options naming no column.
func strayFieldOptions(o *options, cols []Column) error {
	for k := range o.vals {
		if o.used[k] || !strings.HasPrefix(k, "fields.") {
			continue
		}
		col, _, _ := strings.Cut(strings.TrimPrefix(k, "fields."), ".")
		found := false
		for _, c := range cols {
			found = found || strings.EqualFold(c.Name, col)
		}
		if !found {
			return sqlerr.Errorf(sqlerr.InvalidParameterValue, "option %q names column %q, which the source does not declare",
				o.written[k], col)
		}
	}
	return nil
}

func datagenTypeOK(t types.Type, sequence bool) bool {
	switch t.ID {
	case types.Int16, types.Int32, types.Int64, types.Float32, types.Float64, types.Decimal:
		return true
	case types.Varchar, types.Bool, types.Timestamp, types.Timestamptz:
		return !sequence
	}
	return false
}

func isInt(t types.Type) bool {
	return t.ID == types.Int16 || t.ID == types.Int32 || t.ID == types.Int64
}

// intRange is the range of an integer type (of int64 for others).
func intRange(t types.Type) (int64, int64) {
	switch t.ID {
	case types.Int16:
		return math.MinInt16, math.MaxInt16
	case types.Int32:
		return math.MinInt32, math.MaxInt32
	}
	return math.MinInt64, math.MaxInt64
}

func (s *datagenSource) Splits() int { return int(s.splits) }

func (s *datagenSource) End(split int) (int64, bool) {
	if s.rows == math.MaxInt64 {
		return 0, false
	}
	return ceilDiv(s.rows-int64(split), s.splits), true
}

func (s *datagenSource) Open(split int, offset int64) (Reader, error) {
	if split < 0 || int64(split) >= s.splits || offset < 0 {
		return nil, fmt.Errorf("connector: datagen has no split %d at offset %d (of %d splits)", split, offset, s.splits)
	}
	return &datagenReader{s: s, split: int64(split), offset: offset, opened: time.Now()}, nil
}

// datagenReader reads rows split, split+splits, … of the source.
type datagenReader struct {
	s      *datagenSource
	split  int64
	offset int64 // rows of this split read
	opened time.Time
	// The reader is paced from its first Read: start, at offset startOff.
	start    time.Time
	startOff int64
}

func (r *datagenReader) Read(limit int) (*types.Chunk, int64, Ready, error) {
	s := r.s
	// This split's rows are those with index split + k×splits < rows.
	total, ok := s.End(int(r.split))
	if !ok {
		total = math.MaxInt64
	}
	if r.offset >= total {
		return nil, r.offset, Ready{Done: true}, nil
	}
	now := time.Now()
	if r.start.IsZero() {
		r.start, r.startOff = now, r.offset
	}
	// Each split runs at rate/splits rows per second.
	perSec := float64(s.rate) / float64(s.splits)
	due := r.startOff + int64(now.Sub(r.start).Seconds()*perSec) + 1
	n := int(min(int64(limit), total-r.offset, max(due-r.offset, 0)))
	if n == 0 {
		at := r.start.Add(time.Duration(float64(r.offset-r.startOff) / perSec * float64(time.Second)))
		return nil, r.offset, Ready{At: at}, nil
	}
	cols, err := newColumns(s.schema, n, nil)
	if err != nil {
		return nil, 0, Ready{}, err
	}
	for k := range n {
		i := r.split + (r.offset+int64(k))*s.splits
		for c, g := range s.gens {
			cols[c].Append(g.value(i, r.opened))
		}
		if s.rowID {
			cols[len(cols)-1].Append(i)
		}
	}
	r.offset += int64(n)
	return insertChunk(cols, n), r.offset, Ready{}, nil
}

// value is the field's value in row i.
func (f *datagenField) value(i int64, opened time.Time) types.Datum {
	if f.sequence {
		v := f.start + i
		switch f.t.ID {
		case types.Float32, types.Float64:
			return float64(v)
		case types.Decimal:
			d, _ := types.DecimalFromString(strconv.FormatInt(v, 10))
			return d
		}
		return v
	}
	h := mix(f.seed, uint64(i))
	u := float64(h>>11) / (1 << 53) // [0, 1)
	switch f.t.ID {
	case types.Int16, types.Int32, types.Int64:
		span := uint64(f.imax) - uint64(f.imin) + 1
		if span == 0 { // the whole int64 range
			return int64(h)
		}
		return f.imin + int64(h%span)
	case types.Float32, types.Float64:
		return f.min + u*(f.max-f.min)
	case types.Decimal:
		d, _ := types.DecimalFromString(strconv.FormatFloat(f.min+u*(f.max-f.min), 'f', 6, 64))
		return d
	case types.Bool:
		return h&1 == 1
	case types.Varchar:
		return randomString(h, f.length)
	case types.Timestamp:
		return types.TimestampFromTime(opened.Add(-time.Duration(u * float64(f.maxPast))))
	}
	return types.TimestamptzFromTime(opened.Add(-time.Duration(u * float64(f.maxPast))))
}

const alphanumeric = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"

func randomString(h uint64, n int) string {
	b := make([]byte, n)
	for i := range b {
		h = mix(h, uint64(i))
		b[i] = alphanumeric[h%uint64(len(alphanumeric))]
	}
	return string(b)
}

// mix hashes a seed and an index (splitmix64's finalizer over both).
func mix(seed, i uint64) uint64 {
	z := seed*0x9e3779b97f4a7c15 + i + 0x632be59bd9b4e019
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}
