package pgcatalog

import (
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/apd/v3"

	"github.com/sluice-db/sluice/internal/catalog"
	"github.com/sluice-db/sluice/internal/expr"
	"github.com/sluice-db/sluice/internal/sqlerr"
	"github.com/sluice-db/sluice/internal/types"
)

// fakeSource is a catalog with one table (with a key, a default and a
// typmod), one view and one source, two users and one backend.
type fakeSource struct{ settings map[string]string }

func (f *fakeSource) Relations() []*catalog.Relation {
	dec := &types.Modifier{Precision: 10, Scale: 2}
	return []*catalog.Relation{
		{ID: 7, Name: "items", Kind: catalog.KindTable, PK: []int{0}, Columns: []catalog.Column{
			{Name: "id", Type: types.TInt32}, {Name: "_row_id", Type: types.TInt64, Hidden: true},
			{Name: "price", Type: types.TDecimal, Mod: dec, Default: "0"}}},
		{ID: 8, Name: "cheap", Kind: catalog.KindMaterializedView, Definition: "CREATE MATERIALIZED VIEW cheap AS SELECT id FROM items",
			Columns: []catalog.Column{{Name: "id", Type: types.TInt32}}},
	}
}
func (f *fakeSource) Users() []catalog.User {
	return []catalog.User{{Name: "alice"}, {Name: "root", Superuser: true}}
}
func (f *fakeSource) Database() string      { return "dev" }
func (f *fakeSource) User() string          { return "root" }
func (f *fakeSource) ServerVersion() string { return "15.0" }
func (f *fakeSource) BackendPID() int32     { return 42 }
func (f *fakeSource) StartTime() time.Time  { return time.Unix(1700000000, 0) }
func (f *fakeSource) Settings() []Setting {
	var out []Setting
	for k, v := range f.settings {
		out = append(out, Setting{Name: k, Value: v})
	}
	return out
}
func (f *fakeSource) Setting(name string) (string, bool) { v, ok := f.settings[name]; return v, ok }
func (f *fakeSource) SetSetting(name, value string) error {
	f.settings[name] = value
	return nil
}
func (f *fakeSource) Backends() []Backend {
	return []Backend{{PID: 42, User: "root", Database: "dev", State: "active", Query: "SELECT 1", BackendStart: time.Unix(1700000000, 0)}}
}
func (f *fakeSource) Signal(int32, bool) bool { return false }
func (f *fakeSource) Allows(user string, _ *catalog.Relation, _ string) bool {
	return user == "root"
}
func (f *fakeSource) SluiceCatalog() []*Relation {
	return []*Relation{NewRelation("sluice_catalog", "jobs", []catalog.Column{{Name: "id", Type: types.TInt64}})}
}
func (f *fakeSource) Connectors() []string { return []string{"datagen"} }

func newSource() *fakeSource { return &fakeSource{settings: map[string]string{"timezone": "UTC"}} }

// Every relation's rows hold datums of its columns' types, a relation's
// (not a function's) followed by its tableoid.
func TestRowsMatchColumnTypes(t *testing.T) {
	src := newSource()
	var all []*Relation
	all = append(all, Relations(pgCatalog)...)
	all = append(all, Relations(infoSchema)...)
	for _, s := range functionRelations {
		r, _ := FunctionRelation(s.name)
		all = append(all, r)
	}
	nonEmpty := 0
	for _, r := range all {
		_, fn := FunctionRelation(r.Name)
		for _, row := range Rows(r, src) {
			want := len(r.Columns)
			if !fn {
				want++
			}
			if len(row) != want {
				t.Fatalf("%s.%s: row of %d values for %d columns", r.Schema, r.Name, len(row), want)
			}
			for i, c := range r.Columns {
				if err := types.CheckDatum(row[i], c.Type); err != nil {
					t.Errorf("%s.%s.%s: %v", r.Schema, r.Name, c.Name, err)
				}
			}
			nonEmpty++
		}
	}
	if nonEmpty < 100 {
		t.Fatalf("only %d rows in all relations", nonEmpty)
	}
}

// Each producer names only columns its relations have: a misspelt name
// would silently leave a column NULL.
func TestProducersNameRealColumns(t *testing.T) {
	shared := [][]string{{"pg_roles", "pg_authid", "pg_user", "pg_shadow"}, {"pg_settings", "pg_show_all_settings"}}
	for key, p := range producers {
		schema, name, _ := strings.Cut(key, ".")
		family := []string{name}
		for _, s := range shared {
			for _, n := range s {
				if n == name {
					family = s
				}
			}
		}
		for _, v := range p(newSource()) {
			for col := range v {
				found := false
				for _, n := range family {
					r, ok := relations()[schema+"."+n]
					if ok {
						_, found = r.index[col]
					}
					if found {
						break
					}
				}
				if !found {
					t.Errorf("%s: no relation of %v has column %s", key, family, col)
				}
			}
		}
	}
}

// sample is an argument of type t for calling a session function.
func sample(t types.Type) types.Datum {
	switch t.ID {
	case types.Bool:
		return true
	case types.Int16, types.Int32, types.Int64:
		return int64(7)
	case types.Decimal:
		return apd.New(2048, 0)
	}
	return "items"
}

// Every overload of every session function is answered (its result of
// its type, or an error a user can act on), never "not implemented".
func TestSessionFunctionsAnswered(t *testing.T) {
	f := Funcs{Src: newSource()}
	for _, sig := range expr.SessionSignatures() {
		args := make([]types.Datum, len(sig.Params))
		for i, p := range sig.Params {
			args[i] = sample(p)
		}
		v, err := f.Call(sig.Name, args)
		if err != nil && sqlerr.CodeOf(err) == sqlerr.Internal {
			t.Errorf("%s%v: %v", sig.Name, sig.Params, err)
			continue
		}
		if err == nil {
			if cerr := types.CheckDatum(v, sig.Result); cerr != nil {
				t.Errorf("%s%v = %v: %v", sig.Name, sig.Params, v, cerr)
			}
		}
	}
}

func TestFunctionAnswers(t *testing.T) {
	f := Funcs{Src: newSource()}
	cases := []struct {
		name string
		args []types.Datum
		want types.Datum
	}{
		{"format_type", []types.Datum{int64(1700), int64(10<<16 | 2 + 4)}, "numeric(10,2)"},
		{"format_type", []types.Datum{int64(1043), nil}, "character varying"},
		{"format_type", []types.Datum{nil, int64(3)}, nil},
		{"pg_get_userbyid", []types.Datum{int64(oidRoot)}, "root"},
		{"pg_get_constraintdef", []types.Datum{int64(oidConstraintBase + 7)}, "PRIMARY KEY (id)"},
		{"pg_get_viewdef", []types.Datum{int64(8)}, "SELECT id FROM items"},
		{"pg_get_viewdef", []types.Datum{"cheap"}, "SELECT id FROM items"},
		{"regclass_in", []types.Datum{"items"}, int64(7)},
		{"regclass_in", []types.Datum{`public."items"`}, int64(7)},
		{"regclass_out", []types.Datum{int64(7)}, "items"},
		{"regclass_out", []types.Datum{int64(99)}, "99"},
		{"to_regclass", []types.Datum{"nope"}, nil},
		{"regtype_in", []types.Datum{"integer"}, int64(23)},
		{"regtype_out", []types.Datum{int64(1043)}, "character varying"},
		{"regnamespace_in", []types.Datum{"pg_catalog"}, int64(oidPgCatalog)},
		{"has_table_privilege", []types.Datum{"alice", "items", "SELECT"}, false},
		{"has_table_privilege", []types.Datum{"items", "select"}, true},
		{"pg_table_is_visible", []types.Datum{int64(7)}, true},
		{"pg_size_pretty", []types.Datum{int64(10 * 1024 * 1024)}, "10 MB"},
		{"pg_size_pretty", []types.Datum{int64(10239)}, "10239 bytes"},
		{"current_setting", []types.Datum{"timezone"}, "UTC"},
		{"current_setting", []types.Datum{"max_index_keys"}, "32"},
		{"current_setting", []types.Datum{"nope", true}, nil},
		{"current_schemas", []types.Datum{true}, types.DArray{"pg_catalog", "public"}},
	}
	for _, c := range cases {
		got, err := f.Call(c.name, c.args)
		if err != nil {
			t.Errorf("%s%v: %v", c.name, c.args, err)
			continue
		}
		if types.FormatDatum(got, types.TVarchar) != types.FormatDatum(c.want, types.TVarchar) && !equalArrays(got, c.want) {
			t.Errorf("%s%v = %v, want %v", c.name, c.args, got, c.want)
		}
	}
	for _, c := range []struct {
		name string
		arg  string
		code sqlerr.Code
	}{{"regclass_in", "nope", sqlerr.UndefinedTable}, {"regtype_in", "nope", sqlerr.UndefinedObject},
		{"regnamespace_in", "nope", sqlerr.InvalidSchemaName}, {"current_setting", "nope", sqlerr.UndefinedObject}} {
		if _, err := f.Call(c.name, []types.Datum{c.arg}); sqlerr.CodeOf(err) != c.code {
			t.Errorf("%s(%q): %v, want %s", c.name, c.arg, err, c.code)
		}
	}
}

func equalArrays(a, b types.Datum) bool {
	x, ok1 := a.(types.DArray)
	y, ok2 := b.(types.DArray)
	return ok1 && ok2 && types.CompareArray(x, y) == 0
}
