package httpapi_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/google/go-cmp/cmp"

	"github.com/capbroker/capbroker/httpapi"
	"github.com/capbroker/capbroker/internal/testenv"
	"github.com/capbroker/capbroker/route"
	"github.com/capbroker/capbroker/session"
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
func browser(t *testing.T, extra ...chromedp.ExecAllocatorOption) context.Context {
	t.Helper()
	bin := chromium(t)
	opts := append(append(chromedp.DefaultExecAllocatorOptions[:], extra...),
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
	// Each pick says which step of the task it serves.
	steps, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll("#picks tr.pick .step")].map(s => s.textContent)`))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(steps, func(s string) bool { return strings.Contains(s, "roll back the kubernetes deployment") }) {
		t.Errorf("the picks do not say which step they serve: %q", steps)
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

// TestExplorerWithToken opens the explorer of a server that requires a
// bearer token: the page loads without it (it holds no data), a selection
// without the token says to enter it, and with the token typed into the
// page's field the picks render. Before, the page itself answered 401.
func TestExplorerWithToken(t *testing.T) {
	ctx := browser(t)
	ts := newTestServer(t, &httpapi.Options{Token: "s3cret-tok"})
	err := chromedp.Do(ctx,
		chromedp.EmulateViewport(1280, 900),
		chromedp.Navigate(ts.URL+"/"),
		chromedp.WaitVisible(chromedp.ID("task")),
		chromedp.SendKeys(chromedp.ID("task"), "roll back the kubernetes deployment"),
		chromedp.Click(chromedp.CSS(`button[type=submit]`)),
		chromedp.WaitVisible(chromedp.ID("error")),
	)
	if err != nil {
		t.Fatalf("driving Chromium: %v", err)
	}
	msg, err := chromedp.Run(ctx, chromedp.Text(chromedp.ID("error")))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(msg, "enter it in the token field") {
		t.Errorf("without the token the page says %q", msg)
	}
	err = chromedp.Do(ctx,
		chromedp.SendKeys(chromedp.ID("token"), "s3cret-tok"),
		chromedp.Click(chromedp.CSS(`button[type=submit]`)),
		chromedp.WaitVisible(chromedp.CSS("#picks tr.pick")),
	)
	if err != nil {
		t.Fatalf("selecting with the token: %v", err)
	}
	names, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll("#picks tr.pick")].map(r => r.dataset.name)`))
	if err != nil {
		t.Fatal(err)
	}
	screenshot(t, ctx, "explorer-token.png")
	if !strings.Contains(strings.Join(names, " "), "kubectl_rollout_undo") {
		t.Errorf("picks with the token: %v", names)
	}
}

// TestBrowserAttacksRefused plays two attacks on a loopback server from a
// real browser. A page of another origin posts a session with a no-cors
// fetch of a typeless body (no preflight, no Content-Type): refused,
// nothing stored. And a
// DNS-rebinding page, whose name (rebind.test, mapped to 127.0.0.1 by
// Chromium's resolver rules) reaches the server's port: its reads of the
// cards, sessions and traces are refused. Before, the first created a
// session and the second read everything.
func TestBrowserAttacksRefused(t *testing.T) {
	ctx := browser(t, chromedp.Flag("host-resolver-rules", "MAP rebind.test 127.0.0.1"))
	st := newStore(t)
	b := testBroker(t)
	mgr := session.NewManager(b.Selector(), st, &session.Options{Logger: quiet()})
	srv, err := httpapi.New(b, &httpapi.Options{Logger: quiet(), Sessions: mgr, Traces: st})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv.Handler())
	defer ts.Close()
	target := ts.URL
	attacker := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, `<!doctype html><p id=done></p><script>
fetch(%q, {method: "POST", mode: "no-cors", body: new Blob(['{"task":"pwned"}'])})
  .then(() => document.getElementById("done").textContent = "sent", e => document.getElementById("done").textContent = "error " + e);
</script>`, target+"/v1/sessions")
	}))
	defer attacker.Close()

	if err := chromedp.Do(ctx, chromedp.Navigate(attacker.URL+"/")); err != nil {
		t.Fatalf("cross-site page: %v", err)
	}
	sent, err := chromedp.Run(ctx, chromedp.Poll[string](`document.getElementById("done").textContent || null`))
	if err != nil {
		t.Fatalf("cross-site page: %v", err)
	}
	t.Logf("cross-site page: %s", sent)
	list, err := st.Sessions(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 0 {
		t.Errorf("a cross-site page created %d sessions: %+v", len(list), list)
	}

	// DNS rebinding: the page's origin is http://rebind.test:PORT, the
	// server's own port, so the browser lets it read the answers; only the
	// Host check stands in the way.
	_, port, _ := strings.Cut(strings.TrimPrefix(target, "http://"), ":")
	rebound := "http://rebind.test:" + port
	type result struct {
		Status int    `json:"status"`
		Body   string `json:"body"`
	}
	err = chromedp.Do(ctx, chromedp.Navigate(rebound+"/healthz"))
	if err != nil {
		t.Fatalf("opening %s: %v", rebound, err)
	}
	for _, path := range []string{"/v1/cards", "/v1/sessions", "/v1/traces", "/healthz", "/"} {
		got, err := chromedp.Run(ctx, chromedp.Evaluate[result](fmt.Sprintf(`fetch(%q).then(async r => ({status: r.status, body: await r.text()}))`, path), chromedp.EvalAwaitPromise))
		if err != nil {
			t.Fatalf("fetching %s from the rebound page: %v", path, err)
		}
		if got.Status != http.StatusForbidden || !strings.Contains(got.Body, "DNS rebinding") {
			t.Errorf("rebound page read %s: %d %.200s, want 403 naming DNS rebinding", path, got.Status, got.Body)
		}
	}
}
