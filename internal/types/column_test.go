package types

import "testing"

func TestVecSet(t *testing.T) {
	v := ColumnOf(TInt64, int64(1), nil, int64(3))
	v.Set(0, nil)
	v.Set(1, int64(7))
	if v.Get(0) != nil || v.Get(1) != int64(7) || v.Get(2) != int64(3) {
		t.Fatalf("after Set: %v %v %v", v.Get(0), v.Get(1), v.Get(2))
	}
}
