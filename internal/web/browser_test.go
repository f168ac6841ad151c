//go:build unix

package web

import (
	"context"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/jackc/pgx/v5"

	"github.com/sluice-db/sluice/internal/engine"
	"github.com/sluice-db/sluice/internal/sql/session"
	"github.com/sluice-db/sluice/internal/testenv"
)

// The reference stall (internal/engine/stall_e2e_test.go), in SQL: every
// row of t has k = 1, so amp's self-join emits 20 000 rows for each of
// the last rows and the barrier behind them is stuck for minutes.
var stallSQL = []string{
	"CREATE TABLE t (k int, v int)",
	"CREATE MATERIALIZED VIEW sibling AS SELECT count(*) AS n, sum(v) AS s FROM t",
	"INSERT INTO t SELECT 1, g FROM generate_series(1, 100) AS g",
	"FLUSH",
	"CREATE MATERIALIZED VIEW amp AS SELECT a.v AS x, b.v AS y FROM t a JOIN t b ON a.k = b.k",
	"INSERT INTO t SELECT 1, g FROM generate_series(101, 20000) AS g",
}

const (
	stallInterval = 100 * time.Millisecond
	password      = "s3cret"
)

// TestBrowserActsOnTheStall opens the dashboard in headless Chromium
// during the reference stall, finds the job holding the barrier, pauses
// it (typing the password the page asks for), drops it, and sees it
// disappear and the barrier latency fall. Screenshots of each step go to
// $SLUICE_ARTIFACTS (or the test's temporary directory).
func TestBrowserActsOnTheStall(t *testing.T) {
	chromium := findChromium(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	e := startStall(ctx, t)
	srv := httptest.NewServer(New(Config{Engine: e, Password: password}))
	defer srv.Close()
	b := newBrowser(t, chromium)

	b.run("open the dashboard and find the job holding the barrier", 90*time.Second,
		chromedp.Navigate(srv.URL),
		chromedp.WaitVisible(css(`tr[data-job-name="sibling"]`)),
		chromedp.WaitVisible(css(`tr[data-job-name="amp"][data-holding="true"]`)),
		chromedp.Click(css(`tr[data-job-name="amp"]`)),
		chromedp.WaitVisible(css(`#job-graph foreignObject`)),
		chromedp.WaitVisible(css(`.heavy-key[data-key="1"]`)),
		// Two polls of the job: the edges show their backpressure.
		until(`document.querySelector('#job-graph .edge-label').textContent.includes('%')`),
	)
	stuck := b.seconds("#stat-latency")
	if stuck < 2 {
		t.Fatalf("the page shows a barrier latency of %.2f s during the stall", stuck)
	}
	b.screenshot("1-stall")

	b.run("pause amp, giving the password once", 30*time.Second,
		chromedp.Click(css(`#btn-pause`)),
		chromedp.WaitVisible(css(`#password-input`)),
		chromedp.SendKeys(css(`#password-input`), password),
		chromedp.Click(css(`#password-ok`)),
		until(`document.querySelector('#job-status').textContent === 'paused'`),
		chromedp.WaitVisible(css(`tr[data-job-name="amp"][data-status="paused"]`)),
	)
	if rel, ok := e.Catalog().ByName("amp"); !ok || !rel.Job.Control.Paused {
		t.Fatalf("amp is not paused in the catalog after the click")
	}
	b.screenshot("2-paused")
	// Paused, amp lets the barriers overtake its work: the latency falls
	// before the drop.
	b.run("the latency falls after the pause", 30*time.Second, until(latencyBelow(1.5)))
	b.screenshot("2b-paused-fresh")

	b.run("drop amp", 60*time.Second,
		chromedp.Click(css(`#btn-drop`)),
		chromedp.WaitVisible(css(`#btn-drop-confirm`)),
		chromedp.Click(css(`#btn-drop-confirm`)),
		chromedp.WaitNotPresent(css(`tr[data-job-name="amp"]`)),
		until(latencyBelow(1.5)),
	)
	if _, ok := e.Catalog().ByName("amp"); ok {
		t.Error("amp is still in the catalog after the drop")
	}
	t.Logf("barrier latency on the page: %.2f s during the stall, %.2f s after the drop (committed epoch age %.2f s)",
		stuck, b.seconds("#stat-latency"), b.seconds("#stat-age"))
	b.screenshot("3-dropped")
}

func css(sel string) chromedp.CSS { return chromedp.CSS(sel) }

// until waits for a JavaScript condition on the page, as long as the
// step's context lets it.
func until(cond string) chromedp.Action[chromedp.Void] {
	return chromedp.Poll[chromedp.Void](cond, chromedp.WithPollingInterval(50*time.Millisecond),
		chromedp.WithPollingTimeout(time.Hour))
}

// latencyBelow is a page condition: the barrier latency and the
// committed epoch's age shown are below limit seconds.
func latencyBelow(limit float64) string {
	l := strconv.FormatFloat(limit, 'f', -1, 64)
	return `(() => { const s = (id) => Number(document.getElementById(id).dataset.seconds);
		return s('stat-latency') < ` + l + ` && s('stat-age') < ` + l + `; })()`
}

func findChromium(t *testing.T) string {
	if _, err := os.Stat("/usr/bin/chromium"); err == nil {
		return "/usr/bin/chromium"
	}
	return testenv.LookPath(t, "chromium", "apt-get install -y chromium")
}

// startStall starts an engine with the reference stall under way.
func startStall(ctx context.Context, t *testing.T) *engine.Engine {
	p, err := session.StartPlayground(ctx, engine.Options{BarrierInterval: stallInterval, Parallelism: 2, ChunkSize: 256,
		Logger: slog.New(slog.DiscardHandler)}, session.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := p.Close(); err != nil {
			t.Error(err)
		}
	})
	c, err := pgx.Connect(ctx, p.Server.DSN())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(context.Background())
	for _, q := range stallSQL {
		if _, err := c.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	return p.Engine
}

// browser is a headless Chromium driven by chromedp. Its context has no
// deadline (a deadline on the first Run would stop the browser); each
// step has its own.
type browser struct {
	t   *testing.T
	ctx context.Context
	dir string // where screenshots go
}

func newBrowser(t *testing.T, path string) *browser {
	// Without the background-networking flags Chromium's own connections
	// (updates, sync, QUIC probes) get refused in a sandboxed CI and
	// delay or break the start.
	opts := []chromedp.ExecAllocatorOption{chromedp.ExecPath(path), chromedp.Headless, chromedp.NoSandbox,
		chromedp.DisableGPU, chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1440, 1400)}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	bctx, cancelBrowser := chromedp.NewContext(actx, chromedp.WithErrorf(t.Logf))
	t.Cleanup(func() {
		cancelBrowser()
		cancelAlloc()
	})
	if err := chromedp.Do(bctx); err != nil { // starts the browser
		t.Fatalf("start %s: %v", path, err)
	}
	dir := os.Getenv("SLUICE_ARTIFACTS")
	if dir == "" {
		dir = t.TempDir()
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return &browser{t: t, ctx: bctx, dir: dir}
}

// run runs actions within bound; on failure it saves a screenshot first.
func (b *browser) run(what string, bound time.Duration, actions ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, bound)
	defer cancel()
	start := time.Now()
	if err := chromedp.Do(ctx, actions...); err != nil {
		b.screenshot("failed")
		b.t.Fatalf("%s: %v after %v", what, err, time.Since(start).Round(time.Millisecond))
	}
	b.t.Logf("%s: %v", what, time.Since(start).Round(time.Millisecond))
}

// seconds reads the data-seconds of the element sel.
func (b *browser) seconds(sel string) float64 {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 10*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.AttributeValue(css(sel), "data-seconds"))
	if err != nil {
		b.t.Fatal(err)
	}
	f, err := strconv.ParseFloat(v.Value, 64)
	if err != nil {
		b.t.Fatalf("%s data-seconds %q: %v", sel, v.Value, err)
	}
	return f
}

// screenshot saves the whole page as name.png in the artifacts directory.
func (b *browser) screenshot(name string) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 20*time.Second)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		b.t.Logf("screenshot %s: %v", name, err)
		return
	}
	path := filepath.Join(b.dir, "dashboard-"+name+".png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		b.t.Errorf("screenshot %s: %v", name, err)
		return
	}
	b.t.Logf("screenshot: %s", path)
}
