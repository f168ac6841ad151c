package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"
)

// metric is one row of a report: samples of one quantity, or a note
// saying why there are none.
type metric struct {
	key     string // machine-readable name
	label   string // what the table says
	unit    string // ms, MiB, x (ratio), cores, count
	samples []float64
	// capped counts samples that hit capAt; they are recorded as capAt,
	// so a percentile at capAt reads "> cap".
	capped int
	capAt  float64
	// lowerBound marks a value that is at least what is shown (a ratio
	// whose numerator was capped).
	lowerBound bool
	note       string
}

// report is what a subcommand prints: context lines, then metrics.
type report struct {
	bench   string
	context [][2]string
	metrics []metric
}

func (r *report) add(m metric) { r.metrics = append(r.metrics, m) }

func (r *report) write(w io.Writer) error {
	fmt.Fprintf(w, "sluice-bench %s\n", r.bench)
	for _, kv := range r.context {
		fmt.Fprintf(w, "  %-12s %s\n", kv[0]+":", kv[1])
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "metric\tp50\tp99\tn\tnote")
	for _, m := range r.metrics {
		p50, p99 := m.show(50), m.show(99)
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\n", m.label, p50, p99, len(m.samples), m.note)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	return r.writeJSON(w)
}

// jsonMetric is the machine-readable line of one metric.
type jsonMetric struct {
	Bench       string   `json:"bench"`
	Metric      string   `json:"metric"`
	Unit        string   `json:"unit"`
	N           int      `json:"n"`
	P50         *float64 `json:"p50,omitempty"`
	P99         *float64 `json:"p99,omitempty"`
	Max         *float64 `json:"max,omitempty"`
	Capped      int      `json:"capped,omitempty"`
	Cap         float64  `json:"cap,omitempty"`
	LowerBound  bool     `json:"lower_bound,omitempty"`
	Unavailable string   `json:"unavailable,omitempty"`
}

func (r *report) writeJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	for _, m := range r.metrics {
		j := jsonMetric{Bench: r.bench, Metric: m.key, Unit: m.unit, N: len(m.samples),
			P50: finite(percentile(m.samples, 50)), P99: finite(percentile(m.samples, 99)),
			Max: finite(percentile(m.samples, 100)), Capped: m.capped, LowerBound: m.lowerBound}
		if m.capped > 0 {
			j.Cap = m.capAt
		}
		if len(m.samples) == 0 {
			j.Unavailable = strings.TrimPrefix(m.note, "unavailable: ")
		}
		if err := enc.Encode(j); err != nil {
			return err
		}
	}
	return nil
}

func finite(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	v = math.Round(v*1000) / 1000
	return &v
}

// show formats the p-th percentile for the table.
func (m metric) show(p float64) string {
	v := percentile(m.samples, p)
	switch {
	case math.IsNaN(v):
		return "-"
	case m.capped > 0 && v >= m.capAt:
		return "> " + formatValue(m.capAt, m.unit)
	case m.lowerBound:
		return "> " + formatValue(v, m.unit)
	}
	return formatValue(v, m.unit)
}

func formatValue(v float64, unit string) string {
	switch unit {
	case "ms":
		if v >= 1000 {
			return fmt.Sprintf("%.2f s", v/1000)
		}
		return fmt.Sprintf("%.2f ms", v)
	case "MiB":
		return fmt.Sprintf("%.1f MiB", v)
	case "x":
		return fmt.Sprintf("%.4gx", v)
	case "cores":
		return fmt.Sprintf("%.3f cores", v)
	}
	return strings.TrimSuffix(fmt.Sprintf("%.2f", v), ".00")
}
