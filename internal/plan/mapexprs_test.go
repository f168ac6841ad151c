package plan

import (
	"reflect"
	"testing"

	"github.com/sluice-db/sluice/internal/expr"
	"github.com/sluice-db/sluice/internal/types"
)

var descType = reflect.TypeFor[expr.Desc]()

// fill sets every expression reachable from v (a settable value) to a
// parameter, allocating pointers and one-element slices on the way.
func fill(v reflect.Value, depth int) {
	if depth > 6 {
		return
	}
	if v.Type() == descType {
		v.Set(reflect.ValueOf(expr.Param(1, types.TInt64)))
		return
	}
	switch v.Kind() {
	case reflect.Pointer:
		if v.Type().Elem() == reflect.TypeFor[Node]() {
			return // inputs are covered by their own kinds
		}
		v.Set(reflect.New(v.Type().Elem()))
		fill(v.Elem(), depth+1)
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 1, 1))
		fill(v.Index(0), depth+1)
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fill(v.Field(i), depth+1)
			}
		}
	}
}

// params counts the parameters reachable from v.
func params(v reflect.Value) int {
	if v.Type() == descType {
		if expr.HasParams(v.Interface().(expr.Desc)) {
			return 1
		}
		return 0
	}
	n := 0
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			n += params(v.Elem())
		}
	case reflect.Slice:
		for i := range v.Len() {
			n += params(v.Index(i))
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				n += params(v.Field(i))
			}
		}
	}
	return n
}

// TestMapExprsReachesEveryExpression: for every node kind, MapExprs maps
// each expression the node holds (found by reflection, so a new field is
// covered or this fails) and leaves the original tree unchanged.
func TestMapExprsReachesEveryExpression(t *testing.T) {
	nt := reflect.TypeFor[Node]()
	bind := func(d expr.Desc) expr.Desc {
		return expr.BindParams(d, []types.Type{types.TInt64}, []types.Datum{int64(7)})
	}
	for i := range nt.NumField() {
		f := nt.Field(i)
		if f.Type.Kind() != reflect.Pointer || f.Type.Elem().Kind() != reflect.Struct || f.Name == "dist" {
			continue
		}
		var n Node
		fill(reflect.ValueOf(&n).Elem().Field(i), 0)
		before := params(reflect.ValueOf(&n).Elem())
		root := &Node{Kind: KindProject, Project: &Project{}, Inputs: []*Node{&n}}
		out := MapExprs(root, bind)
		if left := params(reflect.ValueOf(out.Inputs[0]).Elem()); left != 0 {
			t.Errorf("%s: %d of %d expressions not mapped", f.Name, left, before)
		}
		if after := params(reflect.ValueOf(&n).Elem()); after != before {
			t.Errorf("%s: the original changed (%d parameters, had %d)", f.Name, after, before)
		}
	}
}
