package expr

import "github.com/sluice-db/sluice/internal/types"

// The integer bitwise operators: & | # (xor), ~ (not), << and >> (the
// shift count an integer, taken modulo the type's width as Postgres's
// C shifts do on x86).

func registerBitwise(r registry) {
	for _, t := range intTypes {
		_, hi := t.IntRange()
		fit := func(v int64) int64 { // wrap into the type, as C does
			switch {
			case hi == 1<<15-1:
				return int64(int16(v))
			case hi == 1<<31-1:
				return int64(int32(v))
			}
			return v
		}
		bits := int64(64)
		switch hi {
		case 1<<15 - 1:
			bits = 16
		case 1<<31 - 1:
			bits = 32
		}
		r.add("&", sig(t, t), t, binary(func(_ *Context, a, b int64) (int64, error) { return a & b, nil }))
		r.add("|", sig(t, t), t, binary(func(_ *Context, a, b int64) (int64, error) { return a | b, nil }))
		r.add("#", sig(t, t), t, binary(func(_ *Context, a, b int64) (int64, error) { return a ^ b, nil }))
		r.add("~", sig(t), t, unary(func(_ *Context, a int64) (int64, error) { return ^a, nil }))
		r.add("<<", sig(t, types.TInt32), t, binary(func(_ *Context, a, n int64) (int64, error) {
			return fit(a << uint64(((n%bits)+bits)%bits)), nil
		}))
		r.add(">>", sig(t, types.TInt32), t, binary(func(_ *Context, a, n int64) (int64, error) {
			return fit(a >> uint64(((n%bits)+bits)%bits)), nil
		}))
	}
}
