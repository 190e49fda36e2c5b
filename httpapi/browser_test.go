package httpapi_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/google/go-cmp/cmp"

	"github.com/capbroker/capbroker/httpapi"
	"github.com/capbroker/capbroker/internal/testenv"
	"github.com/capbroker/capbroker/route"
)

// chromium finds Debian's Chromium (or Chrome) for browser tests.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	testenv.Missing(t, "Chromium (Debian package chromium)")
	return ""
}

// TestExplorerInBrowser loads the explorer in headless Chromium, types a
// task, submits it and checks the rendered picks. The screenshot is kept
// as a test artifact (go test -artifacts).
// browser starts headless Chromium for one test and returns its context.
func browser(t *testing.T) context.Context {
	t.Helper()
	bin := chromium(t)
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(bin),
		chromedp.NoSandbox,
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()),
	)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelBrowser := chromedp.NewContext(actx)
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	t.Cleanup(func() {
		cancel()
		cancelBrowser()
		cancelAlloc()
	})
	return ctx
}

// screenshot keeps a full-page screenshot as a test artifact.
func screenshot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	shot, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.ArtifactDir(), name)
	if err := os.WriteFile(path, shot, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s (%d bytes)", path, len(shot))
}

// TestExplorerInBrowser loads the explorer in headless Chromium, types a
// task, submits it and checks the rendered picks. The screenshot is kept
// as a test artifact (go test -artifacts).
func TestExplorerInBrowser(t *testing.T) {
	ctx := browser(t)
	ts := newTestServer(t, nil)

	err := chromedp.Do(ctx,
		chromedp.EmulateViewport(1280, 900),
		chromedp.Navigate(ts.URL+"/"),
		chromedp.WaitVisible(chromedp.ID("task")),
		chromedp.SendKeys(chromedp.ID("task"), "roll back the kubernetes deployment and check the pod logs"),
		chromedp.Click(chromedp.CSS(`button[type=submit]`)),
		chromedp.WaitVisible(chromedp.CSS("#picks tr.pick")),
	)
	if err != nil {
		t.Fatalf("driving Chromium: %v", err)
	}
	names, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll("#picks tr.pick")].map(r => r.dataset.name)`))
	if err != nil {
		t.Fatal(err)
	}
	reason, err := chromedp.Run(ctx, chromedp.Text(chromedp.ID("reason")))
	if err != nil {
		t.Fatal(err)
	}
	tokens, err := chromedp.Run(ctx, chromedp.Text(chromedp.ID("tokens")))
	if err != nil {
		t.Fatal(err)
	}
	screenshot(t, ctx, "explorer.png")
	if len(names) < 3 || names[len(names)-1] != "find_capability" {
		t.Fatalf("rendered picks = %v, want several picks and the hatch last", names)
	}
	joined := strings.Join(names, " ")
	for _, want := range []string{"kubectl_rollout_undo", "kubectl_logs"} {
		if !strings.Contains(joined, want) {
			t.Errorf("rendered picks %v lack %s", names, want)
		}
	}
	if reason == "" || !strings.Contains(tokens, "tokens exposed of") {
		t.Errorf("reason %q, tokens %q", reason, tokens)
	}
}

// TestCapabilityMapInBrowser opens the explorer's capability map on a
// server that routes over testdata/plugins, checks the rendered
// categories and candidates, then routes a task from the page.
func TestCapabilityMapInBrowser(t *testing.T) {
	ctx := browser(t)
	ts := newTestServer(t, &httpapi.Options{Router: testRouter(t)})

	err := chromedp.Do(ctx,
		chromedp.EmulateViewport(1280, 900),
		chromedp.Navigate(ts.URL+"/"),
		chromedp.WaitVisible(chromedp.CSS(`nav button[data-tab=map]`)),
		chromedp.Click(chromedp.CSS(`nav button[data-tab=map]`)),
		chromedp.WaitVisible(chromedp.CSS(`#map .category tr.candidate`)),
	)
	if err != nil {
		t.Fatalf("driving Chromium: %v", err)
	}
	type category struct {
		Name       string   `json:"name"`
		Candidates []string `json:"candidates"`
	}
	cats, err := chromedp.Run(ctx, chromedp.Evaluate[[]category](`[...document.querySelectorAll("#map .category")].map(c => ({
		name: c.dataset.name,
		candidates: [...c.querySelectorAll("tr.candidate")].map(r => r.dataset.name),
	}))`))
	if err != nil {
		t.Fatal(err)
	}
	summary, err := chromedp.Run(ctx, chromedp.Text(chromedp.ID("map-summary")))
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string][]string{}
	for _, c := range cats {
		byName[c.Name] = c.Candidates
	}
	if len(cats) != len(route.Default().Categories) || !strings.Contains(summary, "6 agents and commands from 5 plugins") {
		t.Errorf("rendered %d categories (%q), want %d: %+v", len(cats), summary, len(route.Default().Categories), cats)
	}
	for name, want := range map[string][]string{
		"code-review":        {"review:code-reviewer", "review:review-cmd"},
		"tdd-implementation": {"tdd:tdd-orchestrator"},
		"infrastructure":     {"cloud:deployer"},
	} {
		if d := cmp.Diff(want, byName[name]); d != "" {
			t.Errorf("%s candidates (-want +rendered):\n%s", name, d)
		}
	}

	err = chromedp.Do(ctx,
		chromedp.SendKeys(chromedp.ID("route-task"), "review the pull request for security"),
		chromedp.Click(chromedp.CSS(`#route-form button[type=submit]`)),
		chromedp.WaitVisible(chromedp.ID("route-line")),
	)
	if err != nil {
		t.Fatalf("routing from the page: %v", err)
	}
	line, err := chromedp.Run(ctx, chromedp.Text(chromedp.ID("route-line")))
	if err != nil {
		t.Fatal(err)
	}
	screenshot(t, ctx, "capability-map.png")
	if !strings.Contains(line, "review:code-reviewer for code-review") || !strings.Contains(line, "High") {
		t.Errorf("route line %q", line)
	}
}
