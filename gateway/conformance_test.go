package gateway

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// scenarioLine matches a line of the conformance suite's summary:
// "✓ tools-list: 1 passed, 0 failed".
var scenarioLine = regexp.MustCompile(`^[✓✗!]\s+(\S+):\s+(\d+) passed, (\d+) failed`)

type scenarioResult struct{ Passed, Failed int }

// runConformance runs the MCP conformance suite's server scenarios against
// url and returns the results by scenario, and each failed check as
// "scenario: check: error" (from the checks the suite saves).
func runConformance(t *testing.T, url string) (map[string]scenarioResult, []string) {
	t.Helper()
	d := deps{t}
	node := d.node()
	suite := d.path("conformance/node_modules/@modelcontextprotocol/conformance/dist/index.js", "MCP conformance suite (npm @modelcontextprotocol/conformance)")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	results := t.TempDir()
	cmd := exec.CommandContext(ctx, node, suite, "server", "--url", url, "-o", results)
	cmd.Dir = t.TempDir()
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	res := map[string]scenarioResult{}
	sc := bufio.NewScanner(bytes.NewReader(out.Bytes()))
	for sc.Scan() {
		if m := scenarioLine.FindStringSubmatch(sc.Text()); m != nil {
			p, _ := strconv.Atoi(m[2])
			f, _ := strconv.Atoi(m[3])
			res[m[1]] = scenarioResult{p, f}
		}
	}
	if len(res) == 0 {
		t.Fatalf("the conformance suite printed no results (%v):\n%s", err, out.String())
	}
	summary := out.String()
	if i := strings.Index(summary, "=== SUMMARY ==="); i >= 0 {
		summary = summary[i:]
	}
	t.Logf("conformance against %s (exit %v):\n%s", url, err, summary)
	return res, failedChecks(t, results)
}

// failedChecks reads the checks.json files the suite saved under dir and
// returns each failed check as "scenario: check: error".
func failedChecks(t *testing.T, dir string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*", "checks.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("the conformance suite saved no checks under %s (%v)", dir, err)
	}
	var failed []string
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var checks []struct {
			Name, Status, ErrorMessage string
			Details                    json.RawMessage
		}
		if err := json.Unmarshal(b, &checks); err != nil {
			t.Fatalf("reading %s: %v", f, err)
		}
		for _, c := range checks {
			if c.Status == "FAILURE" {
				failed = append(failed, fmt.Sprintf("%s: %s: %s %s", filepath.Base(filepath.Dir(f)), c.Name, c.ErrorMessage, c.Details))
			}
		}
	}
	return failed
}

func totals(r map[string]scenarioResult) (passed, failed int) {
	for _, x := range r {
		passed += x.Passed
		failed += x.Failed
	}
	return
}

// TestConformance runs the MCP conformance suite against the Go SDK's
// reference server directly, then through the gateway in all mode over
// streamable HTTP, and requires the same checks to pass both ways (40 of
// 40 with conformance 0.1.16 and go-sdk v1.8.0).
func TestConformance(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the conformance suite twice (about a minute)")
	}
	d := deps{t}
	server := d.path(filepath.Join("bin", "everything-server"), "the go-sdk everything-server")
	d.node()

	addr := freePort(t)
	cmd := exec.Command(server, "-http", addr, "-stateless=false")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	waitHTTP(t, addr, cmd)
	upstreamURL := "http://" + addr + "/mcp"

	direct, directFailed := runConformance(t, upstreamURL)

	g := startGateway(t, []ServerConfig{{Name: "everything", URL: upstreamURL}}, &Options{Mode: ModeAll, Namespace: NamespaceCollisions})
	proxied, proxiedFailed := runConformance(t, serveHTTP(t, g, nil))

	if diff := cmp.Diff(direct, proxied); diff != "" {
		t.Errorf("conformance results differ, direct (-) vs through the gateway (+):\n%s", diff)
	}
	dp, df := totals(direct)
	gp, gf := totals(proxied)
	t.Logf("direct: %d passed, %d failed; through the gateway: %d passed, %d failed", dp, df, gp, gf)
	if df != 0 || gf != 0 || dp < 40 || gp != dp {
		t.Errorf("want every check to pass both ways (at least 40): direct %d/%d, gateway %d/%d\nfailed directly:\n%s\nfailed through the gateway:\n%s",
			dp, dp+df, gp, gp+gf, strings.Join(directFailed, "\n"), strings.Join(proxiedFailed, "\n"))
	}
}

// tail returns the last n bytes of s.
func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}
