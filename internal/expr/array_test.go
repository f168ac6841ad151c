package expr

import (
	"testing"

	"github.com/sluice-db/sluice/internal/types"
)

var (
	ia = types.ArrayOf(types.TInt32)
	sa = types.ArrayOf(types.TVarchar)
)

func TestArrayConstructor(t *testing.T) {
	two := []types.Type{i32, i64}
	rows := "+ 1 2\n+ NULL 5"
	a, b := Input(0, i32), Input(1, i64)
	runCases(t, []evalCase{
		{"common element type", two, rows, Node(KindArray, a, b), "{1,2} {NULL,5}"},
		{"untyped literals are text", two, "+ 1 2", Node(KindArray, untyped("x y"), untyped("z")), `'{"x y",z}'`},
		{"declared type", two, "+ 1 2", Desc{Kind: KindArray, Type: types.ArrayOf(i64), Args: []Desc{a}}, "{1}"},
		{"empty with a type", two, "+ 1 2", Desc{Kind: KindArray, Type: ia}, "{}"},
		{"empty without a type", two, "+ 1 2", Node(KindArray), "error 42P18"},
		{"nested", two, "+ 1 2", Node(KindArray, Node(KindArray, a)), "error 0A000"},
		{"no common type", two, "+ 1 2", Node(KindArray, a, Literal(true, boo)), "error 42804"},
	})
}

func TestArrayFuncs(t *testing.T) {
	one := []types.Type{ia}
	x := Input(0, ia)
	rows := "+ {10,NULL,30}\n+ {}\n+ NULL"
	n := func(v int64) Desc { return Literal(v, i32) }
	runCases(t, []evalCase{
		{"subscript", one, rows, Func(SubscriptFunc, x, n(1)), "10 NULL NULL"},
		{"subscript null element", one, rows, Func(SubscriptFunc, x, n(2)), "NULL NULL NULL"},
		{"subscript out of range", one, rows, Func(SubscriptFunc, x, n(4)), "NULL NULL NULL"},
		{"slice", one, rows, Func(SliceFunc, x, n(2), n(9)), "{NULL,30} {} NULL"},
		{"array_length", one, rows, Func("array_length", x, n(1)), "3 NULL NULL"},
		{"array_length dim 2", one, rows, Func("array_length", x, n(2)), "NULL NULL NULL"},
		{"cardinality", one, rows, Func("cardinality", x), "3 0 NULL"},
		{"array_to_string skips NULL", one, rows, Func("array_to_string", x, untyped(",")), "10,30 '' NULL"},
		{"array_join null string", one, rows, Func("array_join", x, untyped(","), untyped("*")), "10,*,30 '' NULL"},
		{"append", one, rows, Func("array_append", x, n(4)), "{10,NULL,30,4} {4} {4}"},
		{"prepend", one, rows, Func("array_prepend", n(4), x), "{4,10,NULL,30} {4} {4}"},
		{"cat", one, rows, Func("array_cat", x, x), "{10,NULL,30,10,NULL,30} {} NULL"},
		{"|| array", one, rows, Func("||", x, untyped("{7}")), "{10,NULL,30,7} {7} {7}"},
		{"|| element widens", one, rows, Func("||", x, Literal(int64(1)<<40, i64)), "{10,NULL,30,1099511627776} {1099511627776} {1099511627776}"},
		{"position", one, rows, Func("array_position", x, n(30)), "3 NULL NULL"},
		{"position of NULL", one, rows, Func("array_position", x, Null(i32)), "2 NULL NULL"},
		{"remove", one, rows, Func("array_remove", x, Null(i32)), "{10,30} {} NULL"},
		{"contains", one, rows, Func("@>", x, untyped("{30,10}")), "t f NULL"},
		{"contains NULL never", one, rows, Func("array_contains", x, Desc{Kind: KindArray, Type: ia, Args: []Desc{Null(i32)}}), "f f NULL"},
		{"any", one, rows, Func(AnyOp("="), n(30), x), "t f NULL"},
		{"any no match with NULL", one, rows, Func(AnyOp("="), n(5), x), "NULL f NULL"},
		{"all", one, rows, Func(AllOp("<"), n(5), x), "NULL t NULL"},
		{"all false wins over NULL", one, rows, Func(AllOp(">"), n(20), x), "f t NULL"},
		{"to text", one, rows, Cast(x, str), "{10,NULL,30} {} NULL"},
		{"to bigint[]", one, rows, Cast(x, types.ArrayOf(i64)), "{10,NULL,30} {} NULL"},
		{"to smallint[] overflows", one, "+ {1,70000}", Cast(x, types.ArrayOf(types.TInt16)), "error 22003"},
		{"compare", one, rows, Func("<", x, untyped("{10,NULL}")), "f t NULL"},
		{"equal", one, rows, Func("=", x, untyped("{10,NULL,30}")), "t f NULL"},
	})
}

func TestArrayTextCasts(t *testing.T) {
	one := []types.Type{str}
	s := Input(0, str)
	runCases(t, []evalCase{
		{"parse", one, "+ '{1, 2}'\n+ NULL", Cast(s, ia), "{1,2} NULL"},
		{"parse error", one, "+ '{1, x}'", Cast(s, ia), "error 22P02"},
		{"malformed", one, "+ '{1'", Cast(s, ia), "error 22P02"},
		{"text elements", one, "+ '{a,\"b,c\"}'", Func("array_to_string", Cast(s, sa), untyped("|")), "a|b,c"},
		{"float to int rounds", []types.Type{types.ArrayOf(f8)}, "+ {1.5,2.5,-0.4}", Cast(Input(0, types.ArrayOf(f8)), ia), "{2,2,0}"},
	})
}

func TestArrayCoercion(t *testing.T) {
	if ct, ok := CommonType(ia, types.ArrayOf(i64)); !ok || ct != types.ArrayOf(i64) {
		t.Errorf("CommonType(int[], bigint[]) = %v, %v", ct, ok)
	}
	if _, ok := CommonType(ia, i32); ok {
		t.Error("int[] and int have a common type")
	}
	if !CanImplicitCast(ia, types.ArrayOf(i64)) || CanImplicitCast(types.ArrayOf(i64), ia) || CanImplicitCast(ia, i32) {
		t.Error("implicit array casts wrong")
	}
	if !CanCast(types.ArrayOf(i64), ia) || !CanCast(ia, str) || !CanCast(str, ia) || CanCast(ia, i32) {
		t.Error("explicit array casts wrong")
	}
	if rt, err := ResolveFunc("array_append", []types.Type{ia, i32}); err != nil || rt != ia {
		t.Errorf("array_append(int[], int) = %v, %v", rt, err)
	}
	if rt, err := ResolveFunc("||", []types.Type{str, types.TUnknown}); err != nil || rt != str {
		t.Errorf("text || unknown = %v, %v; want text", rt, err)
	}
}
