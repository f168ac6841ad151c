package connector

import (
	"testing"

	"github.com/sluice-db/sluice/internal/sqlerr"
)

func TestOpenSink(t *testing.T) {
	for _, tc := range []struct {
		name       string
		spec       SinkSpec
		code       sqlerr.Code // "" for none
		forceApply bool
	}{
		{"blackhole", SinkSpec{Connector: "blackhole"}, "", false},
		{"case-insensitive connector", SinkSpec{Connector: "BlackHole"}, "", false},
		{"upsert", SinkSpec{Connector: "blackhole", Options: map[string]string{"type": "upsert"}}, "", false},
		{"append-only over inserts", SinkSpec{Connector: "blackhole", AppendOnly: true,
			Options: map[string]string{"Type": "append-only"}}, "", false},
		{"append-only over changes", SinkSpec{Connector: "blackhole", Options: map[string]string{"type": "append-only"}},
			sqlerr.InvalidParameterValue, false},
		{"forced append-only over changes", SinkSpec{Connector: "blackhole",
			Options: map[string]string{"type": "append-only", "force_append_only": "true"}}, "", true},
		// Over an input that only inserts there is nothing to drop.
		{"forced append-only over inserts", SinkSpec{Connector: "blackhole", AppendOnly: true,
			Options: map[string]string{"type": "append-only", "force_append_only": "true"}}, "", false},
		{"force without a type", SinkSpec{Connector: "blackhole", Options: map[string]string{"force_append_only": "true"}},
			sqlerr.InvalidParameterValue, false},
		{"force with upsert", SinkSpec{Connector: "blackhole", Options: map[string]string{"type": "upsert", "force_append_only": "true"}},
			sqlerr.InvalidParameterValue, false},
		{"bad force", SinkSpec{Connector: "blackhole", Options: map[string]string{"type": "append-only", "force_append_only": "yes"}},
			sqlerr.InvalidParameterValue, false},
		{"bad type", SinkSpec{Connector: "blackhole", Options: map[string]string{"type": "debezium"}}, sqlerr.InvalidParameterValue, false},
		{"unknown option", SinkSpec{Connector: "blackhole", Options: map[string]string{"tpye": "upsert"}}, sqlerr.InvalidParameterValue, false},
		{"unknown connector", SinkSpec{Connector: "blackhol"}, sqlerr.InvalidParameterValue, false},
		{"planned connector", SinkSpec{Connector: "kafka"}, sqlerr.FeatureNotSupported, false},
		{"no connector", SinkSpec{}, sqlerr.InvalidParameterValue, false},
		// A source connector is no sink.
		{"source connector", SinkSpec{Connector: "nexmark"}, sqlerr.InvalidParameterValue, false},
	} {
		s, err := OpenSink(tc.spec)
		var code sqlerr.Code
		if err != nil {
			code = sqlerr.CodeOf(err)
		}
		if code != tc.code {
			t.Errorf("%s: %v, want code %q", tc.name, err, tc.code)
			continue
		}
		if err == nil && s.ForceAppendOnly() != tc.forceApply {
			t.Errorf("%s: ForceAppendOnly %v", tc.name, s.ForceAppendOnly())
		}
	}
	_, err := OpenSink(SinkSpec{Connector: "blackhole", Options: map[string]string{"tpye": "upsert"}})
	if e, ok := sqlerr.As(err); !ok || e.Message != `unrecognized option "tpye" for connector blackhole; did you mean "type"?` {
		t.Errorf("misspelt option: %v", err)
	}
}
