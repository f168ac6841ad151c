package build_test

import (
	"reflect"

	"github.com/sluice-db/sluice/internal/plan"
	"pgregory.net/rapid"
)

// site is one mutable place in a plan tree, found by reflection: a field,
// slice element or map value that a mutation may overwrite.
type site struct {
	v    reflect.Value
	path string
}

// sites lists every settable scalar, slice and pointer reachable from n.
// Reflection keeps the mutator honest as plan grows: a new field is fuzzed
// the day it is added.
func sites(n *plan.Node) []site {
	var out []site
	var walk func(v reflect.Value, path string, depth int)
	walk = func(v reflect.Value, path string, depth int) {
		if depth > 40 {
			return
		}
		switch v.Kind() {
		case reflect.Pointer:
			if v.CanSet() {
				out = append(out, site{v, path})
			}
			if !v.IsNil() {
				walk(v.Elem(), path, depth+1)
			}
		case reflect.Struct:
			t := v.Type()
			for i := range v.NumField() {
				if t.Field(i).IsExported() {
					walk(v.Field(i), path+"."+t.Field(i).Name, depth+1)
				}
			}
		case reflect.Slice:
			if v.CanSet() {
				out = append(out, site{v, path})
			}
			for i := range v.Len() {
				walk(v.Index(i), path+"[]", depth+1)
			}
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
			reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
			reflect.String, reflect.Bool:
			if v.CanSet() {
				out = append(out, site{v, path})
			}
		}
	}
	walk(reflect.ValueOf(n), "root", 0)
	return out
}

// kinds are the node kinds a mutation may switch a node to, plus one no
// builder knows.
var kinds = []plan.Kind{
	plan.KindTableSource, plan.KindValues, plan.KindProject, plan.KindFilter,
	plan.KindHashJoin, plan.KindHashAgg, plan.KindSimpleAgg, plan.KindTopN,
	plan.KindUnion, plan.KindDistinct, plan.KindMaterialize, plan.KindBackfill,
	plan.KindMerge, "no_such_kind",
}

// mutate overwrites one site with a value chosen to be plausible but wrong:
// an index just out of range, a negative one, an unknown type id, a
// truncated or grown slice, a nil pointer.
func mutate(t *rapid.T, s site) {
	v := s.v
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			v.Set(reflect.New(v.Type().Elem()))
		} else {
			v.Set(reflect.Zero(v.Type()))
		}
	case reflect.Slice:
		n := v.Len()
		switch rapid.IntRange(0, 3).Draw(t, "slice-op") {
		case 0:
			v.Set(reflect.Zero(v.Type()))
		case 1:
			if n > 0 {
				v.Set(v.Slice(0, rapid.IntRange(0, n-1).Draw(t, "len")))
			}
		case 2:
			v.Set(reflect.Append(v, reflect.Zero(v.Type().Elem())))
		case 3:
			if n > 0 {
				v.Set(reflect.Append(v, v.Index(rapid.IntRange(0, n-1).Draw(t, "dup"))))
			}
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(rapid.SampledFrom([]int64{-1, -2, 0, 1, 2, 3, 5, 8, 17, 255, 1 << 20}).Draw(t, "int"))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(rapid.SampledFrom([]uint64{0, 1, 2, 3, 7, 30, 99, 200, 255}).Draw(t, "uint"))
	case reflect.Bool:
		v.SetBool(!v.Bool())
	case reflect.String:
		if v.Type() == reflect.TypeOf(plan.Kind("")) {
			v.SetString(string(rapid.SampledFrom(kinds).Draw(t, "kind")))
			return
		}
		v.SetString(rapid.SampledFrom([]string{"", "x", "1", "-1", "null", "9999999999999999999999", "inner", "full", "count", "hash"}).Draw(t, "string"))
	}
}

// mutateTree applies one to three mutations to root.
func mutateTree(t *rapid.T, root *plan.Node) {
	for range rapid.IntRange(1, 3).Draw(t, "mutations") {
		s := rapid.SampledFrom(sites(root)).Draw(t, "site")
		t.Logf("mutate %s", s.path)
		mutate(t, s)
	}
}
