package web

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sluice-db/sluice/internal/catalog"
	"github.com/sluice-db/sluice/internal/engine"
	"github.com/sluice-db/sluice/internal/meta"
	"github.com/sluice-db/sluice/internal/meta/barrier"
	"github.com/sluice-db/sluice/internal/sqlerr"
	"github.com/sluice-db/sluice/internal/stream"
)

// fakeEngine holds jobs by id and records the actions it was asked for.
type fakeEngine struct {
	mu    sync.Mutex
	jobs  map[uint32]*engine.JobDetail
	calls []string
}

func newFake() *fakeEngine {
	amp := &engine.JobDetail{JobSummary: engine.JobSummary{ID: 7, Name: "amp", Kind: catalog.KindMaterializedView,
		Status: "running", Freshness: 3 * time.Second, RowsOut: 40,
		Fragments: []engine.FragmentStats{{ID: 11, Job: 7, Name: "amp", Operators: []string{"materialize", "inner join", "merge", "merge"},
			Actors: 2, RowsIn: 10, RowsOut: 40, InputBlocked: time.Second}}},
		Upstreams: []engine.FragmentStats{{ID: 3, Job: 2, Name: "t", Upstream: true, Operators: []string{"materialize"},
			Actors: 2, OutputBlocked: 5 * time.Second}},
		Edges: []engine.ExchangeEdge{{From: 3, To: 11, Kind: "hash"}},
		Joins: []engine.JoinAmplification{{Fragment: 11, Matched: 1 + 3*20000, Heavy: []stream.HeavyKey{{Key: "1", Matches: 20000}}}}}
	// One probe row matched nothing, one matched 1 row, three 20 000.
	amp.Joins[0].Buckets[0], amp.Joins[0].Buckets[1], amp.Joins[0].Buckets[stream.AmpBucket(20000)] = 1, 1, 3
	creating := &engine.JobDetail{JobSummary: engine.JobSummary{ID: 9, Name: "slow", Kind: catalog.KindMaterializedView,
		Status: "creating", Freshness: -1, Progress: 42.5}}
	return &fakeEngine{jobs: map[uint32]*engine.JobDetail{7: amp, 9: creating}}
}

func (f *fakeEngine) Overview(context.Context) (engine.Overview, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	now := time.Unix(1000, 0)
	o := engine.Overview{Now: now, CommittedAge: 12 * time.Second, Recoveries: 1,
		Barrier: barrier.Status{Committed: 41, InFlight: 3, OldestInFlightAge: 12 * time.Second, LastCommitLatency: 100 * time.Millisecond},
		Epochs:  []meta.EpochTiming{{Epoch: 41, Injected: now.Add(-13 * time.Second), Collected: now.Add(-12900 * time.Millisecond), Committed: now.Add(-12800 * time.Millisecond)}}}
	for _, id := range []uint32{7, 9} {
		if j, ok := f.jobs[id]; ok {
			o.Jobs = append(o.Jobs, j.JobSummary)
		}
	}
	return o, nil
}

func (f *fakeEngine) JobDetail(id uint32) (engine.JobDetail, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	j, ok := f.jobs[id]
	if !ok {
		return engine.JobDetail{}, false
	}
	return *j, true
}

func (f *fakeEngine) byName(name string) *engine.JobDetail {
	for _, j := range f.jobs {
		if j.Name == name {
			return j
		}
	}
	return nil
}

func (f *fakeEngine) record(call string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, call)
}

func (f *fakeEngine) SetPaused(_ context.Context, name string, paused bool) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, "paused "+name+" "+map[bool]string{true: "on", false: "off"}[paused])
	if j := f.byName(name); j != nil {
		j.Status, j.Control.Paused = map[bool]string{true: "paused", false: "running"}[paused], paused
	}
	return nil
}

func (f *fakeEngine) SetRateLimit(_ context.Context, name string, limit *int64) error {
	if limit != nil && *limit < 0 {
		return sqlerr.Errorf(sqlerr.InvalidParameterValue, "rate limit must not be negative: %d", *limit)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	desc := "default"
	if limit != nil {
		desc = jsonString(*limit)
	}
	f.calls = append(f.calls, "rate "+name+" "+desc)
	f.byName(name).Control.RateLimit = limit
	return nil
}

func jsonString(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func (f *fakeEngine) CancelJobs(_ context.Context, ids []uint64) error {
	f.record("cancel " + jsonString(ids))
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, id := range ids {
		if j := f.jobs[uint32(id)]; j == nil || j.Status != "creating" {
			return sqlerr.Errorf(sqlerr.UndefinedObject, "job %d does not exist or is not being created", id)
		}
		delete(f.jobs, uint32(id))
	}
	return nil
}

func (f *fakeEngine) Drop(_ context.Context, name string, cascade bool) error {
	f.record("drop " + name + " " + jsonString(cascade))
	f.mu.Lock()
	defer f.mu.Unlock()
	if name == "t" {
		return sqlerr.New(sqlerr.DependentObjectsStillExist, "cannot drop table t because other objects depend on it")
	}
	delete(f.jobs, f.byName(name).ID)
	return nil
}

// call makes one request and decodes the JSON answer.
func call(t *testing.T, h http.Handler, method, path string, header map[string]string, body string) (int, map[string]any) {
	t.Helper()
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	for k, v := range header {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
		t.Fatalf("%s %s: content type %q, body %s", method, path, ct, rec.Body)
	}
	var out map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
		t.Fatalf("%s %s: %v in %s", method, path, err, rec.Body)
	}
	return rec.Code, out
}

// errCode is the SQLSTATE of an error answer, "" for none.
func errCode(body map[string]any) string {
	e, _ := body["error"].(map[string]any)
	c, _ := e["code"].(string)
	return c
}

var action = map[string]string{"X-Sluice-Action": "1"}

func TestOverview(t *testing.T) {
	h := New(Config{Engine: newFake()})
	code, body := call(t, h, "GET", "/api/overview", nil, "")
	if code != 200 {
		t.Fatalf("status %d: %v", code, body)
	}
	b := body["barrier"].(map[string]any)
	if b["latency_seconds"] != 12.0 || b["in_flight"] != 3.0 || b["committed_epoch"] != 41.0 || b["committed_age_seconds"] != 12.0 {
		t.Errorf("barrier: %v", b)
	}
	e := body["epochs"].([]any)[0].(map[string]any)
	if e["latency_seconds"] != 0.2 || e["collect_seconds"] != 0.1 || e["committed_ms"] != 1000000.0-12800 {
		t.Errorf("epoch: %v", e)
	}
	jobs := body["jobs"].([]any)
	amp, slow := jobs[0].(map[string]any), jobs[1].(map[string]any)
	if amp["name"] != "amp" || amp["freshness_seconds"] != 3.0 || amp["progress"] != nil || amp["rows_out"] != 40.0 {
		t.Errorf("amp: %v", amp)
	}
	if slow["status"] != "creating" || slow["freshness_seconds"] != nil || slow["progress"] != 42.5 {
		t.Errorf("slow: %v", slow)
	}
	if body["password_required"] != false {
		t.Errorf("password_required: %v", body["password_required"])
	}
}

func TestJobDetail(t *testing.T) {
	h := New(Config{Engine: newFake()})
	code, body := call(t, h, "GET", "/api/jobs/7", nil, "")
	if code != 200 {
		t.Fatalf("status %d: %v", code, body)
	}
	frags := body["fragments"].([]any)
	if len(frags) != 2 || frags[0].(map[string]any)["name"] != "t" || frags[0].(map[string]any)["upstream"] != true ||
		frags[0].(map[string]any)["output_blocked_seconds"] != 5.0 || frags[1].(map[string]any)["id"] != 11.0 {
		t.Errorf("fragments: %v", frags)
	}
	if e := body["edges"].([]any); len(e) != 1 || e[0].(map[string]any)["from"] != 3.0 || e[0].(map[string]any)["kind"] != "hash" {
		t.Errorf("edges: %v", e)
	}
	j := body["joins"].([]any)[0].(map[string]any)
	// 5 probe rows: 0, 1 and three of 20 000 (bucket bound 32 768).
	if j["probe_rows"] != 5.0 || j["p50"] != 32768.0 || j["p99"] != 32768.0 || j["max"] != 20000.0 {
		t.Errorf("join: %v", j)
	}
	if hk := j["heavy_keys"].([]any); len(hk) != 1 || hk[0].(map[string]any)["key"] != "1" {
		t.Errorf("heavy keys: %v", hk)
	}
}

func TestUnknownJobAndRoute(t *testing.T) {
	h := New(Config{Engine: newFake()})
	for _, c := range []struct {
		method, path string
		header       map[string]string
		status       int
		code         string
	}{
		{"GET", "/api/jobs/404", nil, 404, "42704"},
		{"POST", "/api/jobs/404/pause", action, 404, "42704"},
		{"GET", "/api/jobs/x", nil, 400, "22023"},
		{"GET", "/api/nope", nil, 404, "42704"},
		{"POST", "/api/jobs/7/explode", action, 404, "42704"},
		{"DELETE", "/api/jobs/7", nil, 405, "0A000"},
		{"GET", "/api/jobs/7/pause", nil, 404, "42704"},
	} {
		status, body := call(t, h, c.method, c.path, c.header, "")
		if status != c.status || errCode(body) != c.code {
			t.Errorf("%s %s: %d %v, want %d with %s", c.method, c.path, status, body, c.status, c.code)
		}
	}
}

func TestActions(t *testing.T) {
	f := newFake()
	h := New(Config{Engine: f})
	json := map[string]string{"Content-Type": "application/json"}
	for _, c := range []struct {
		path   string
		header map[string]string
		body   string
		status int
		code   string
	}{
		{"/api/jobs/7/pause", action, "", 200, ""},
		{"/api/jobs/7/resume", json, "{}", 200, ""},
		{"/api/jobs/7/rate-limit", json, `{"rows_per_second": 100}`, 200, ""},
		{"/api/jobs/7/rate-limit", json, `{"rows_per_second": -1}`, 400, "22023"},
		{"/api/jobs/7/rate-limit", json, `{"rows_per_second": null}`, 200, ""},
		{"/api/jobs/7/rate-limit", json, `{"rows": 1}`, 400, "22023"},
		{"/api/jobs/7/cancel", action, "", 404, "42704"},
		{"/api/jobs/9/cancel", action, "", 200, ""},
		{"/api/jobs/7/drop", action, "", 200, ""},
	} {
		status, body := call(t, h, "POST", c.path, c.header, c.body)
		if status != c.status || errCode(body) != c.code {
			t.Errorf("POST %s %s: %d %v, want %d %q", c.path, c.body, status, body, c.status, c.code)
		}
	}
	want := []string{"paused amp on", "paused amp off", "rate amp 100", "rate amp default", "cancel [7]", "cancel [9]", "drop amp false"}
	if !slices.Equal(f.calls, want) {
		t.Errorf("calls %q, want %q", f.calls, want)
	}
	if _, ok := f.JobDetail(7); ok {
		t.Error("amp still there after the drop")
	}
}

func TestActionAnswersTheJob(t *testing.T) {
	f := newFake()
	h := New(Config{Engine: f})
	_, body := call(t, h, "POST", "/api/jobs/7/pause", action, "")
	if body["status"] != "paused" || body["name"] != "amp" {
		t.Errorf("after pause: %v", body)
	}
	_, body = call(t, h, "POST", "/api/jobs/7/drop", action, "")
	if body["dropped"] != true || body["name"] != "amp" {
		t.Errorf("after drop: %v", body)
	}
	f.jobs[2] = &engine.JobDetail{JobSummary: engine.JobSummary{ID: 2, Name: "t", Kind: catalog.KindTable, Status: "running"}}
	status, body := call(t, h, "POST", "/api/jobs/2/drop", action, "")
	if status != 409 || errCode(body) != "2BP01" {
		t.Errorf("drop t: %d %v", status, body)
	}
}

// TestCSRF: an action without the custom header or a JSON body, as a
// form on another site would send it, is refused and not run.
func TestCSRF(t *testing.T) {
	f := newFake()
	h := New(Config{Engine: f})
	for _, hdr := range []map[string]string{nil, {"Content-Type": "application/x-www-form-urlencoded"}, {"Content-Type": "text/plain"}} {
		status, body := call(t, h, "POST", "/api/jobs/7/drop", hdr, "")
		if status != 403 || errCode(body) != "42501" {
			t.Errorf("POST with %v: %d %v", hdr, status, body)
		}
	}
	if len(f.calls) != 0 {
		t.Errorf("actions ran: %q", f.calls)
	}
}

func TestPasswordForActionsOnly(t *testing.T) {
	f := newFake()
	h := New(Config{Engine: f, Password: "s3cret"})
	if status, body := call(t, h, "GET", "/api/overview", nil, ""); status != 200 || body["password_required"] != true {
		t.Fatalf("GET with a password set: %d %v", status, body)
	}
	if status, _ := call(t, h, "GET", "/api/jobs/7", nil, ""); status != 200 {
		t.Fatalf("GET a job with a password set: %d", status)
	}
	for _, hdr := range []map[string]string{action, {"X-Sluice-Action": "1", "X-Sluice-Password": "wrong"},
		{"X-Sluice-Action": "1", "X-Sluice-Password": "s3cre"}, {"X-Sluice-Action": "1", "X-Sluice-Password": "s3cret!"}} {
		status, body := call(t, h, "POST", "/api/jobs/7/pause", hdr, "")
		if status != 401 || errCode(body) != "28P01" {
			t.Errorf("POST with %v: %d %v", hdr, status, body)
		}
	}
	if len(f.calls) != 0 {
		t.Fatalf("actions ran without the password: %q", f.calls)
	}
	if status, body := call(t, h, "POST", "/api/jobs/7/pause", map[string]string{"X-Sluice-Action": "1", "X-Sluice-Password": "s3cret"}, ""); status != 200 {
		t.Errorf("POST with the password header: %d %v", status, body)
	}
	req := httptest.NewRequest("POST", "/api/jobs/7/resume", nil)
	req.Header.Set("X-Sluice-Action", "1")
	req.SetBasicAuth("root", "s3cret")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != 200 {
		t.Errorf("POST with basic auth: %d %s", rec.Code, rec.Body)
	}
	if want := []string{"paused amp on", "paused amp off"}; !slices.Equal(f.calls, want) {
		t.Errorf("calls %q, want %q", f.calls, want)
	}
}

func TestServesThePage(t *testing.T) {
	srv := httptest.NewServer(New(Config{Engine: newFake()}))
	defer srv.Close()
	for path, want := range map[string]string{"/": "<title>Sluice</title>", "/app.js": "/api/overview", "/style.css": "--bg"} {
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.Contains(string(b), want) {
			t.Errorf("GET %s: %d, lacks %q", path, resp.StatusCode, want)
		}
	}
}
