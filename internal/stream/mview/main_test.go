package mview

import (
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/sluice-db/sluice/internal/plan"
	"github.com/sluice-db/sluice/internal/stream"
	"github.com/sluice-db/sluice/internal/types"
)

// The executor starts no goroutines but the stores the tests open do;
// goleak checks every test closes its store.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

const testActor stream.ActorID = 5

var (
	i64 = types.TInt64
	str = types.TVarchar
)

// kvTable is a view (k bigint PRIMARY KEY, v varchar), distributed by k.
func kvTable() plan.Table {
	return plan.Table{ID: 10, Types: []types.Type{i64, str}, PK: []int{0}, DistKey: []int{0}}
}

func materializeNode(t plan.Table) *plan.Node {
	return &plan.Node{Kind: plan.KindMaterialize, Schema: t.Types, Materialize: &plan.Materialize{Table: t}}
}

func formatRows(rows []types.Row, ts []types.Type) string {
	var sb strings.Builder
	for _, r := range rows {
		sb.WriteString(types.FormatRow(r, ts))
		sb.WriteByte('\n')
	}
	return sb.String()
}
