package session

import (
	"fmt"
	"strings"

	"github.com/sluice-db/sluice/internal/plan"
)

// overWindowString describes an over_window node:
//
//	partition: [$0], order: [$3], calls: [avg($2) ROWS 10 PRECEDING AND CURRENT ROW]
func overWindowString(w *plan.OverWindow) string {
	calls := make([]string, len(w.Calls))
	for i, c := range w.Calls {
		calls[i] = windowCallString(c)
	}
	return fmt.Sprintf("partition: %s, order: %s, calls: [%s]", keyList(w.PartitionBy), orderList(w.OrderBy), strings.Join(calls, ", "))
}

func windowCallString(c plan.WindowCall) string {
	name := string(c.Kind)
	if c.Kind == plan.WindowAgg {
		name = string(c.Agg)
	}
	args := strings.Trim(keyList(c.Args), "[]")
	switch c.Kind {
	case plan.WindowLag, plan.WindowLead, plan.WindowNthValue, plan.WindowNtile:
		if args != "" {
			args += ", "
		}
		args += fmt.Sprint(c.Offset)
	}
	s := name + "(" + args + ")"
	if c.Filter != nil {
		s += fmt.Sprintf(" FILTER ($%d)", *c.Filter)
	}
	switch c.Kind {
	case plan.WindowAgg, plan.WindowFirstValue, plan.WindowLastValue, plan.WindowNthValue:
		s += " " + frameString(c.Frame)
	}
	return s
}

func frameString(f plan.Frame) string {
	mode := "RANGE"
	if f.Rows {
		mode = "ROWS"
	}
	return mode + " " + boundString(f.Start) + " AND " + boundString(f.End)
}

func boundString(b plan.FrameBound) string {
	switch b.Kind {
	case plan.UnboundedPreceding:
		return "UNBOUNDED PRECEDING"
	case plan.OffsetPreceding:
		return fmt.Sprintf("%d PRECEDING", b.Offset)
	case plan.CurrentRow:
		return "CURRENT ROW"
	case plan.OffsetFollowing:
		return fmt.Sprintf("%d FOLLOWING", b.Offset)
	}
	return "UNBOUNDED FOLLOWING"
}
