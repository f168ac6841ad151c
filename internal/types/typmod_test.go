package types

import (
	"testing"

	"github.com/sluice-db/sluice/internal/sqlerr"
)

func TestNumericModifier(t *testing.T) {
	m, err := NewNumericModifier(5, 2)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ in, want, code string }{
		{"1.5", "1.50", ""},
		{"2.345", "2.35", ""},
		{"-2.345", "-2.35", ""},
		{"7", "7.00", ""},
		{"999.994", "999.99", ""},
		{"999.995", "", "22003"},
		{"1000", "", "22003"},
		{"-0.001", "0.00", ""},
		{"NaN", "NaN", ""},
		{"Infinity", "", "22003"},
	} {
		d, err := DecimalFromString(tc.in)
		if err != nil {
			t.Fatal(err)
		}
		got, err := m.Apply(d, TDecimal, false)
		if tc.code != "" {
			if sqlerr.CodeOf(err) != sqlerr.Code(tc.code) {
				t.Errorf("%s: err %v, want %s", tc.in, err, tc.code)
			}
			continue
		}
		if err != nil || FormatDatum(got, TDecimal) != tc.want {
			t.Errorf("%s: got %v, %v; want %s", tc.in, got, err, tc.want)
		}
	}
	neg, _ := NewNumericModifier(3, -2)
	d, _ := DecimalFromString("12345")
	if got, err := neg.Apply(d, TDecimal, false); err != nil || FormatDatum(got, TDecimal) != "12300" {
		t.Errorf("numeric(3,-2) of 12345 = %v, %v", got, err)
	}
	if _, err := NewNumericModifier(0, 0); sqlerr.CodeOf(err) != "22023" {
		t.Errorf("numeric(0) accepted: %v", err)
	}
}

func TestLengthModifier(t *testing.T) {
	m, _ := NewLengthModifier(3)
	for _, tc := range []struct {
		in       string
		explicit bool
		want     string
		code     string
	}{
		{"ab", false, "ab", ""},
		{"abc", false, "abc", ""},
		{"abcd", false, "", "22001"},
		{"abcd", true, "abc", ""},
		{"ab   ", false, "ab ", ""},
		{"héllo", true, "hél", ""},
		{"日本語x", false, "", "22001"},
	} {
		got, err := m.Apply(tc.in, TVarchar, tc.explicit)
		if tc.code != "" {
			if sqlerr.CodeOf(err) != sqlerr.Code(tc.code) {
				t.Errorf("%q: err %v, want %s", tc.in, err, tc.code)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%q: got %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}

func TestFracModifier(t *testing.T) {
	m, _ := NewFracModifier(3)
	ts, err := ParseDatum("2024-05-06 07:08:09.123567", TTimestamp)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := m.Apply(ts, TTimestamp, false)
	if s := FormatDatum(got, TTimestamp); s != "2024-05-06 07:08:09.124" {
		t.Fatalf("timestamp(3) = %s", s)
	}
	early, _ := ParseDatum("1960-01-01 00:00:00.0004", TTimestamp)
	if got, _ := m.Apply(early, TTimestamp, false); FormatDatum(got, TTimestamp) != "1960-01-01 00:00:00" {
		t.Fatalf("negative micros rounded to %s", FormatDatum(got, TTimestamp))
	}
	z, _ := NewFracModifier(0)
	tm, _ := ParseDatum("10:00:00.5", TTime)
	if got, _ := z.Apply(tm, TTime, true); FormatDatum(got, TTime) != "10:00:01" {
		t.Fatalf("time(0) = %s", FormatDatum(got, TTime))
	}
	if s := m.TypeString(TTimestamptz); s != "timestamp(3) with time zone" {
		t.Fatalf("TypeString = %s", s)
	}
}
