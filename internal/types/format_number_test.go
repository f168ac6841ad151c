package types

import "testing"

func TestTrimSpace(t *testing.T) {
	for in, want := range map[string]string{
		"": "", " ": "", "\t 12 \n": "12", "\v\f\r1 2\r": "1 2", "x": "x", " \u00a0x": "\u00a0x",
	} {
		if got := trimSpace(in); got != want {
			t.Errorf("trimSpace(%q) = %q, want %q", in, got, want)
		}
	}
}
