package nexmark

import (
	"math"
	"math/bits"
	"slices"
	"unsafe"
)

// rng is the generator's per-event random source: xoshiro256++ seeded
// from the event id, drawing numbers the way the Rust nexmark crate that
// RisingWave uses draws them (its SmallRng and rand 0.8's uniform
// sampling), so that event n here is event n there (but for a rare price:
// see price). Everything an event
// holds comes from its own rng, which is what lets any split generate any
// event without the ones before it.
type rng struct{ s [4]uint64 }

// newRNG fills the state's 32 bytes, four at a time, from a PCG32
// stream started at seed (how rand_core seeds any generator from a u64,
// SmallRng included).
// It is small enough to inline, so the state stays on the caller's stack
// (a heap allocation per event otherwise).
func newRNG(seed uint64) *rng { return &rng{s: pcgState(seed)} }

// pcgState is the 32 bytes newRNG seeds the state with. Not inlined, so
// that newRNG is.
//
//go:noinline
func pcgState(seed uint64) [4]uint64 {
	var s [4]uint64
	for i := range 8 {
		seed = seed*6364136223846793005 + 11634580027462260723
		x := bits.RotateLeft32(uint32(((seed>>18)^seed)>>27), -int(seed>>59))
		s[i/2] |= uint64(x) << (32 * (i % 2))
	}
	if s == [4]uint64{} {
		return splitMix(0).s // as xoshiro's from_seed maps an all-zero seed
	}
	return s
}

// splitMix seeds the state with SplitMix64 from seed.
func splitMix(seed uint64) *rng {
	r := &rng{}
	for i := range r.s {
		seed += 0x9e3779b97f4a7c15
		z := seed
		z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
		z = (z ^ (z >> 27)) * 0x94d049bb133111eb
		r.s[i] = z ^ (z >> 31)
	}
	return r
}

func (r *rng) next64() uint64 {
	s := &r.s
	out := bits.RotateLeft64(s[0]+s[3], 23) + s[0]
	t := s[1] << 17
	s[2] ^= s[0]
	s[3] ^= s[1]
	s[1] ^= s[2]
	s[0] ^= s[3]
	s[2] ^= t
	s[3] = bits.RotateLeft64(s[3], 45)
	return out
}

// next32 takes the upper half: the lowest bits are the weaker ones.
func (r *rng) next32() uint32 { return uint32(r.next64() >> 32) }

// below64 draws uniformly from [0, n) for a 64-bit range (Rust usize and
// u64): a widening multiply, rejecting draws whose low half falls past a
// conservative zone. n must be positive.
func (r *rng) below64(n uint64) uint64 {
	zone := (n << bits.LeadingZeros64(n)) - 1
	for {
		hi, lo := bits.Mul64(r.next64(), n)
		if lo <= zone {
			return hi
		}
	}
}

// below32 is below64 for a 32-bit range (Rust i32 and u32, and a slice's
// index).
func (r *rng) below32(n uint32) uint32 {
	zone := (n << bits.LeadingZeros32(n)) - 1
	for {
		m := uint64(r.next32()) * uint64(n)
		if uint32(m) <= zone {
			return uint32(m >> 32)
		}
	}
}

// below8 is below32 for a range of 8- or 16-bit values, whose rejection
// zone is exact (a modulus) rather than conservative.
func (r *rng) below8(n uint32) uint32 {
	zone := math.MaxUint32 - (math.MaxUint32-n+1)%n
	for {
		m := uint64(r.next32()) * uint64(n)
		if uint32(m) <= zone {
			return uint32(m >> 32)
		}
	}
}

// float32 draws from [0, 1) with 24 random bits.
func (r *rng) float32() float32 { return float32(r.next32()>>8) * (1.0 / (1 << 24)) }

// letter draws from 'a'..'z'.
func (r *rng) letter() byte { return 'a' + byte(r.below8(26)) }

// appendLetters appends n random lowercase letters: letter n times, with
// the state in locals and the draw inlined. Extras are most of an event's
// bytes, and calling letter per byte was 12 % of q0's CPU.
func (r *rng) appendLetters(dst []byte, n int) []byte {
	start := len(dst)
	dst = slices.Grow(dst, n)[:start+n]
	r.drawLetters(dst[start:], n)
	return dst
}

// skipLetters takes the draws appendLetters(_, n) would, making nothing.
func (r *rng) skipLetters(n int) { r.drawLetters(nil, n) }

// drawLetters draws n letters into out, or only takes their draws when
// out is nil.
func (r *rng) drawLetters(out []byte, n int) {
	const zone = math.MaxUint32 - (math.MaxUint32-26+1)%26 // below8(26)'s
	s0, s1, s2, s3 := r.s[0], r.s[1], r.s[2], r.s[3]
	for i := 0; i < n; {
		x := bits.RotateLeft64(s0+s3, 23) + s0 // next64
		t := s1 << 17
		s2 ^= s0
		s3 ^= s1
		s1 ^= s2
		s0 ^= s3
		s2 ^= t
		s3 = bits.RotateLeft64(s3, 45)
		if m := (x >> 32) * 26; uint32(m) <= zone {
			if out != nil {
				out[i] = 'a' + byte(m>>32)
			}
			i++
		}
	}
	r.s = [4]uint64{s0, s1, s2, s3}
}

// letters returns n random lowercase letters as a string, without the
// copy a conversion of the bytes makes.
func (r *rng) letters(n int) string {
	if n <= 0 {
		return ""
	}
	b := r.appendLetters(make([]byte, 0, n), n)
	return unsafe.String(&b[0], len(b))
}

// choose picks one of xs.
func choose[T any](r *rng, xs []T) T { return xs[r.below32(uint32(len(xs)))] }

// price is log-uniform over [100, 10^8] cents, in float32 as the
// reference computes it, except for the power itself: the reference calls
// the platform's powf (glibc's is not correctly rounded), this rounds
// Go's float64 Pow. For 2 332 of the 2^24 possible draws (about one price
// in 7 000) glibc 2.36's powf lands on a neighbouring float32, and the
// price differs by a few cents to a few dollars; the draw, and every
// later field, is the same.
func (r *rng) price() int64 {
	p := float32(math.Pow(10, float64(r.float32()*6))) * 100
	return int64(math.Round(float64(p)))
}

// skipPrice takes the draw price would.
func (r *rng) skipPrice() { r.next32() }

// extra pads an event of size cur bytes towards avg: a string of letters
// whose length is spread ±20 % around what is missing.
func (r *rng) extra(cur, avg int) string {
	if cur > avg {
		return ""
	}
	want := avg - cur
	delta := (want + 2) / 5
	n := want - delta
	if delta > 0 {
		n += int(r.below64(uint64(2 * delta)))
	}
	return r.letters(n)
}
