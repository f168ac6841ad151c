package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

func TestReport(t *testing.T) {
	r := &report{bench: "b", context: [][2]string{{"machine", "m"}}}
	r.add(metric{key: "fast_ms", label: "fast", unit: "ms", samples: []float64{1, 2, 3}})
	r.add(metric{key: "slow_ms", label: "slow", unit: "ms", samples: []float64{60000, 60000}, capped: 2, capAt: 60000})
	r.add(metric{key: "gone_ms", label: "gone", unit: "ms", note: "unavailable: syntax error"})
	r.add(metric{key: "ratio", label: "ratio", unit: "x", samples: []float64{30000}, lowerBound: true})
	var out bytes.Buffer
	if err := r.write(&out); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	for _, want := range []string{"> 60.00 s", "unavailable: syntax error", "> 3e+04x", "2.00 ms"} {
		if !strings.Contains(text, want) {
			t.Errorf("report lacks %q:\n%s", want, text)
		}
	}
	got := map[string]jsonMetric{}
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		if line := sc.Text(); strings.HasPrefix(line, "{") {
			var j jsonMetric
			if err := json.Unmarshal([]byte(line), &j); err != nil {
				t.Fatalf("%q: %v", line, err)
			}
			got[j.Metric] = j
		}
	}
	if len(got) != 4 {
		t.Fatalf("%d JSON lines, want 4:\n%s", len(got), text)
	}
	if f := got["fast_ms"]; f.N != 3 || *f.P50 != 2 || *f.P99 != 3 || f.Capped != 0 {
		t.Errorf("fast_ms = %+v", f)
	}
	if s := got["slow_ms"]; s.Capped != 2 || s.Cap != 60000 {
		t.Errorf("slow_ms = %+v", s)
	}
	if g := got["gone_ms"]; g.P50 != nil || g.Unavailable != "syntax error" {
		t.Errorf("gone_ms = %+v", g)
	}
	if !got["ratio"].LowerBound {
		t.Errorf("ratio = %+v", got["ratio"])
	}
}
