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

	"github.com/capbroker/capbroker/internal/testenv"
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
func TestExplorerInBrowser(t *testing.T) {
	bin := chromium(t)
	ts := newTestServer(t, nil)

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
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancel()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	ctx, cancel = context.WithTimeout(ctx, 60*time.Second)
	defer cancel()

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
	shot, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.ArtifactDir(), "explorer.png")
	if err := os.WriteFile(path, shot, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s (%d bytes)", path, len(shot))
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
