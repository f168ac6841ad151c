package types

import "math/bits"

// Overflow-checked 64-bit arithmetic for input parsing.

func addInt64(a, b int64) (int64, bool) {
	s := a + b
	return s, (s > a) == (b > 0)
}

func mulInt64(a, b int64) (int64, bool) {
	if a == 0 || b == 0 {
		return 0, true
	}
	hi, lo := bits.Mul64(absU(a), absU(b))
	neg := (a < 0) != (b < 0)
	if hi != 0 || (!neg && lo > 1<<63-1) || (neg && lo > 1<<63) {
		return 0, false
	}
	if neg {
		return -int64(lo), true
	}
	return int64(lo), true
}
