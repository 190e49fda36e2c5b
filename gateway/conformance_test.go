package gateway

import (
	"bufio"
	"bytes"
	"context"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// scenarioLine matches a line of the conformance suite's summary:
// "✓ tools-list: 1 passed, 0 failed".
var scenarioLine = regexp.MustCompile(`^[✓✗!]\s+(\S+):\s+(\d+) passed, (\d+) failed`)

type scenarioResult struct{ Passed, Failed int }

// runConformance runs the MCP conformance suite's server scenarios against
// url and returns the results by scenario.
func runConformance(t *testing.T, url string) map[string]scenarioResult {
	t.Helper()
	d := deps{t}
	node := d.node()
	suite := d.path("conformance/node_modules/@modelcontextprotocol/conformance/dist/index.js", "MCP conformance suite (npm @modelcontextprotocol/conformance)")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, suite, "server", "--url", url)
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
	t.Logf("conformance against %s (exit %v):\n%s", url, err, tail(out.String(), 4000))
	return res
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
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

	direct := runConformance(t, upstreamURL)

	g := startGateway(t, []ServerConfig{{Name: "everything", URL: upstreamURL}}, &Options{Mode: ModeAll, Namespace: NamespaceCollisions})
	proxied := runConformance(t, serveHTTP(t, g, nil))

	if diff := cmp.Diff(direct, proxied); diff != "" {
		t.Errorf("conformance results differ, direct (-) vs through the gateway (+):\n%s", diff)
	}
	dp, df := totals(direct)
	gp, gf := totals(proxied)
	t.Logf("direct: %d passed, %d failed; through the gateway: %d passed, %d failed", dp, df, gp, gf)
	if df != 0 || gf != 0 || dp < 40 || gp != dp {
		t.Errorf("want every check to pass both ways (at least 40): direct %d/%d, gateway %d/%d", dp, dp+df, gp, gp+gf)
	}
}
