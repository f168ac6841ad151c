package session

import (
	"sort"
	"strconv"
	"strings"

	"github.com/sluice-db/sluice/internal/pgwire"
	"github.com/sluice-db/sluice/internal/sqlerr"
)

// varSpec is one known session variable: its canonical name (as SHOW ALL
// prints it), default, a validator that normalises a value, whether a
// change is reported to the client (ParameterStatus) and a description.
type varSpec struct {
	name     string
	def      string
	check    func(string) (string, error)
	reported bool
	desc     string
}

// knownVars lists the settings Sluice understands, keyed by lower-case
// name. Aliases map to the same spec.
func knownVars() map[string]*varSpec {
	boolVar := func(name, def, desc string) *varSpec {
		return &varSpec{name: name, def: def, check: checkBool, desc: desc}
	}
	implicit := boolVar("implicit_flush", "false", "Every DML statement waits until its effects are visible in all views.")
	twoPhase := boolVar("enable_two_phase_agg", "true", "Planner knob, accepted for RisingWave scripts.")
	specs := []*varSpec{
		implicit,
		{name: "streaming_parallelism", def: "default", check: checkParallelism, desc: "Actors per fragment of new streaming jobs (accepted; the engine default is used)."},
		boolVar("background_ddl", "false", "CREATE MATERIALIZED VIEW returns before its backfill is done."),
		{name: "backfill_rate_limit", def: "default", check: checkRateLimit, desc: "Rows per second a new materialized view reads while it backfills (DEFAULT: no limit)."},
		{name: "streaming_amplification_limit", def: "1000000", check: checkAmpLimit,
			desc: "Rows a join of a new streaming job may emit for one input row before the amplification guard acts (0: no guard)."},
		{name: "streaming_amplification_action", def: "notice", check: checkAmpAction,
			desc: "What the amplification guard does: notice (this session, the log, /metrics), throttle (also limits the job's inputs) or pause (also pauses the job)."},
		boolVar("rw_streaming_enable_delta_join", "false", "Planner knob, accepted and ignored."),
		twoPhase,
		boolVar("rw_force_two_phase_agg", "false", "Planner knob, accepted and ignored."),
		{name: "search_path", def: `"$user", public`, desc: "Schema search order (only public exists)."},
		{name: "timezone", def: "UTC", check: checkTimezone, reported: true, desc: "Session time zone (only UTC)."},
		{name: "client_encoding", def: "UTF8", check: checkEncoding, reported: true, desc: "Client character set (only UTF8)."},
		{name: "datestyle", def: "ISO, MDY", reported: true, desc: "Date output style (ISO)."},
		{name: "application_name", def: "", reported: true, desc: "Name the client gave itself."},
		{name: "extra_float_digits", def: "1", check: checkInt, desc: "Accepted; floats always print in shortest form."},
		{name: "statement_timeout", def: "0", check: checkInt, desc: "Milliseconds a statement may run (0: no limit)."},
		{name: "query_memory_limit", def: "1GB", check: checkMemory,
			desc: "Memory one query may keep for sorts, joins, aggregates and DISTINCT; past it the query fails with 53200 (0: no limit)."},
		{name: "idle_in_transaction_session_timeout", def: "0", check: checkInt,
			desc: "Milliseconds a session may wait idle inside a transaction block before it is ended (0: no limit)."},
		{name: "server_version", def: "15.0 (Sluice)", desc: "Reported server version (read only)."},
		{name: "server_encoding", def: "UTF8", desc: "Server character set (read only)."},
		{name: "standard_conforming_strings", def: "on", desc: "Backslashes in strings are literal (read only)."},
		{name: "integer_datetimes", def: "on", desc: "Timestamps are integers (read only)."},
		{name: "intervalstyle", def: "postgres", desc: "Interval output style."},
		{name: "transaction_isolation", def: "read committed", desc: "Isolation level of statements (snapshot per statement)."},
		{name: "max_identifier_length", def: "63", desc: "Identifier length limit (read only)."},
		{name: "max_connections", def: strconv.Itoa(pgwire.DefaultMaxConnections), check: atStartOnly("max_connections"),
			desc: "Sessions open at once (set with --max-connections)."},
		{name: "superuser_reserved_connections", def: strconv.Itoa(pgwire.DefaultReservedConnections),
			check: atStartOnly("superuser_reserved_connections"), desc: "Connection slots kept for superusers."},
	}
	out := map[string]*varSpec{}
	for _, s := range specs {
		out[s.name] = s
	}
	out["rw_implicit_flush"] = implicit
	out["time zone"] = out["timezone"]
	return out
}

// atStartOnly refuses to change a setting fixed when the server starts.
func atStartOnly(name string) func(string) (string, error) {
	return func(string) (string, error) {
		return "", sqlerr.Errorf(sqlerr.CantChangeRuntimeParam, "parameter %q cannot be changed without restarting the server", name)
	}
}

// vars holds one session's settings.
type vars struct {
	specs  map[string]*varSpec
	values map[string]string // by canonical name, only those set
	custom map[string]string // dotted names (a.b), as Postgres allows
}

func newVars(startup map[string]string) *vars {
	v := &vars{specs: knownVars(), values: map[string]string{}, custom: map[string]string{}}
	for k, val := range startup {
		_ = v.set(k, val) // a bad startup setting is ignored, as the default stands
	}
	return v
}

func errUnknownVar(name string) error {
	return sqlerr.Errorf(sqlerr.UndefinedObject, "unrecognized configuration parameter %q", name)
}

// set assigns a value; an empty value with def resets.
func (v *vars) set(name, value string) error {
	key := strings.ToLower(name)
	spec, ok := v.specs[key]
	if !ok {
		if strings.Contains(key, ".") {
			v.custom[key] = value
			return nil
		}
		return errUnknownVar(name)
	}
	if spec.check != nil {
		norm, err := spec.check(value)
		if err != nil {
			return err
		}
		value = norm
	}
	v.values[spec.name] = value
	return nil
}

func (v *vars) reset(name string) error {
	key := strings.ToLower(name)
	if spec, ok := v.specs[key]; ok {
		delete(v.values, spec.name)
		return nil
	}
	if _, ok := v.custom[key]; ok {
		delete(v.custom, key)
		return nil
	}
	return errUnknownVar(name)
}

func (v *vars) resetAll() {
	v.values = map[string]string{}
	v.custom = map[string]string{}
}

// get returns a setting's value and canonical name.
func (v *vars) get(name string) (canonical, value string, err error) {
	key := strings.ToLower(name)
	if spec, ok := v.specs[key]; ok {
		if val, ok := v.values[spec.name]; ok {
			return spec.name, val, nil
		}
		return spec.name, spec.def, nil
	}
	if val, ok := v.custom[key]; ok {
		return key, val, nil
	}
	return "", "", errUnknownVar(name)
}

func (v *vars) bool(name string) bool {
	_, val, _ := v.get(name)
	return val == "true"
}

// all returns (name, value, description) of every setting, sorted.
func (v *vars) all() [][3]string {
	seen := map[string]bool{}
	var out [][3]string
	for _, s := range v.specs {
		if seen[s.name] {
			continue
		}
		seen[s.name] = true
		_, val, _ := v.get(s.name)
		out = append(out, [3]string{s.name, val, s.desc})
	}
	for k, val := range v.custom {
		out = append(out, [3]string{k, val, ""})
	}
	sort.Slice(out, func(i, j int) bool { return out[i][0] < out[j][0] })
	return out
}

func checkBool(s string) (string, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "true", "on", "yes", "1", "t":
		return "true", nil
	case "false", "off", "no", "0", "f":
		return "false", nil
	}
	return "", sqlerr.Errorf(sqlerr.InvalidParameterValue, "parameter requires a Boolean value, not %q", s)
}

func checkInt(s string) (string, error) {
	if _, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64); err != nil {
		return "", sqlerr.Errorf(sqlerr.InvalidParameterValue, "invalid value for integer parameter: %q", s)
	}
	return strings.TrimSpace(s), nil
}

func checkParallelism(s string) (string, error) {
	if strings.EqualFold(s, "default") || strings.EqualFold(s, "adaptive") {
		return strings.ToLower(s), nil
	}
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil || n < 0 {
		return "", sqlerr.Errorf(sqlerr.InvalidParameterValue, "invalid value for streaming_parallelism: %q", s)
	}
	return strconv.Itoa(n), nil
}

func checkTimezone(s string) (string, error) {
	switch strings.ToUpper(strings.TrimSpace(s)) {
	case "UTC", "ETC/UTC", "GMT", "Z", "ZULU", "UCT", "+00", "+00:00", "0":
		return "UTC", nil
	}
	return "", sqlerr.Errorf(sqlerr.InvalidParameterValue, "invalid value for parameter \"TimeZone\": %q (only UTC is supported)", s)
}

func checkEncoding(s string) (string, error) {
	switch strings.ToUpper(strings.ReplaceAll(strings.TrimSpace(s), "-", "")) {
	case "UTF8", "UNICODE":
		return "UTF8", nil
	}
	return "", sqlerr.Errorf(sqlerr.FeatureNotSupported, "conversion to encoding %q is not supported (only UTF8)", s)
}

// reportedName is the spelling Postgres uses in ParameterStatus.
func reportedName(canonical string) string {
	switch canonical {
	case "timezone":
		return "TimeZone"
	case "datestyle":
		return "DateStyle"
	}
	return canonical
}
