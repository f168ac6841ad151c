package types

import (
	"strconv"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

func TestTrimSpace(t *testing.T) {
	for in, want := range map[string]string{
		"": "", " ": "", "\t 12 \n": "12", "\v\f\r1 2\r": "1 2", "x": "x", " \u00a0x": "\u00a0x",
	} {
		if got := trimSpace(in); got != want {
			t.Errorf("trimSpace(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestParseInt64MatchesStrconv checks the one-pass integer parser against
// the definition it replaced (a sign, digits, strconv.ParseInt and the
// type's range) on strings near every edge: signs, spaces, other bytes,
// and numbers around each type's limits and beyond 64 bits.
func TestParseInt64MatchesStrconv(t *testing.T) {
	ref := func(s string, typ Type) (int64, string) {
		v := trimSpace(s)
		body := strings.TrimLeft(v, "+-")
		if len(v)-len(body) > 1 || body == "" || !allDigits(body) {
			return 0, errSyntax(typ.String(), s).Error()
		}
		n, err := strconv.ParseInt(v, 10, 64)
		lo, hi := typ.IntRange()
		if err != nil || n < lo || n > hi {
			return 0, errRange(typ.String(), s).Error()
		}
		return n, ""
	}
	edges := []string{"0", "1", "9", "32767", "32768", "2147483647", "2147483648",
		"9223372036854775807", "9223372036854775808", "18446744073709551615",
		"18446744073709551616", "99999999999999999999", "00000000000000000000001",
		"922337203685477580", "922337203685477581", "9223372036854775809", "9223372036854775810"}
	check := func(fatalf func(string, ...any), s string, typ Type) {
		n, err := parseInt64(s, typ)
		wantN, wantErr := ref(s, typ)
		gotErr := ""
		if err != nil {
			gotErr = err.Error()
		}
		if n != wantN || gotErr != wantErr {
			fatalf("parseInt64(%q, %v) = %d, %q; want %d, %q", s, typ, n, gotErr, wantN, wantErr)
		}
	}
	for _, typ := range []Type{TInt16, TInt32, TInt64} {
		lo, hi := typ.IntRange()
		limits := []string{strconv.FormatInt(lo, 10), strconv.FormatInt(hi, 10),
			strconv.FormatInt(lo, 10) + "0", strconv.FormatUint(uint64(hi)+1, 10)}
		for _, e := range append(edges, limits...) {
			for _, sign := range []string{"", "+", "-", " -", "--", "+-"} {
				check(t.Fatalf, sign+e, typ)
				check(t.Fatalf, sign+strings.TrimPrefix(e, "-"), typ)
			}
		}
	}
	rapid.Check(t, func(rt *rapid.T) {
		typ := rapid.SampledFrom([]Type{TInt16, TInt32, TInt64}).Draw(rt, "type")
		pieces := rapid.SliceOfN(rapid.OneOf(
			rapid.SampledFrom([]string{"+", "-", " ", "\t", "x", "_", ".", "e"}),
			rapid.SampledFrom(edges),
			rapid.StringMatching(`[0-9]{1,22}`),
		), 1, 4).Draw(rt, "pieces")
		check(rt.Fatalf, strings.Join(pieces, ""), typ)
	})
}

// BenchmarkParseInt64 parses a COPY's bigint fields (auction ids, prices).
func BenchmarkParseInt64(b *testing.B) {
	fields := []string{"1000", "1057", "2870177", "91", "100000000", "1436918400"}
	for b.Loop() {
		for _, f := range fields {
			if _, err := parseInt64(f, TInt64); err != nil {
				b.Fatal(err)
			}
		}
	}
}
