package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/capbroker/capbroker/internal/testenv"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestSecretsStaySecret: values of ${VAR}s in an upstream's URL query and
// in a stdio server's args appear in no output — discover (text and
// JSON), the index on disk, the gateway's /status, its log, and the error
// text of a failed call sent to the model — which show ${VAR} instead;
// and a stdio server does not inherit CAPBROKER_GATEWAY_TOKEN.
func TestSecretsStaySecret(t *testing.T) {
	const (
		qsecret = "sk-query-7f3a9c1e"
		asecret = "arg-secret-51b2e0"
		token   = "gateway-token-90d4"
	)
	t.Setenv("CAPBROKER_GATEWAY_TOKEN", token) // what a stdio child would inherit
	dict := newDictServer(t, "dict")
	dir := t.TempDir()
	cfg := filepath.Join(dir, "servers.json")
	writeFile(t, cfg, fmt.Sprintf(`{"mcpServers": {
  "dict": {"url": %q},
  "down": {"url": "http://127.0.0.1:1/mcp?key=${QSECRET}"},
  "echo": {"command": "sh", "args": ["-c", "echo \"refusing $0 token=[$CAPBROKER_GATEWAY_TOKEN] path=[$PATH]\" >&2; exit 3", "${ASECRET}"]}
}}`, dict.url+"/mcp?key=${QSECRET}"))
	ix := filepath.Join(dir, "index")
	env := map[string]string{"HOME": dir, "QSECRET": qsecret, "ASECRET": asecret, "CAPBROKER_INDEX": ix}
	leaks := func(what, text string) {
		t.Helper()
		for _, s := range []string{qsecret, asecret, token, strings.ReplaceAll(qsecret, "-", "%2D")} {
			if strings.Contains(text, s) {
				t.Errorf("%s shows the secret %q:\n%s", what, s, text)
			}
		}
	}

	out, stderr, _ := runEnv(t, env, "discover", "--mcp-config", cfg, "--timeout", "5s", "--verbose")
	leaks("discover", out+stderr)
	for _, w := range []string{"refusing ${ASECRET}", "token=[]", "path=[/"} {
		if !strings.Contains(out+stderr, w) {
			t.Errorf("discover lacks %q (the server's stderr, redacted):\n%s%s", w, out, stderr)
		}
	}
	out, stderr, _ = runEnv(t, env, "discover", "--mcp-config", cfg, "--timeout", "5s", "--json", "--refresh")
	leaks("discover --json", out+stderr)
	if !strings.Contains(out, "key=${QSECRET}") && !strings.Contains(out, "${QSECRET}") {
		t.Errorf("discover --json does not show the failed server's URL as ${QSECRET}:\n%s", out)
	}
	files := 0
	filepath.WalkDir(ix, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			data, _ := os.ReadFile(p)
			leaks("the index file "+p, string(data))
			files++
		}
		return nil
	})
	if files == 0 {
		t.Fatal("no index written")
	}

	// The gateway over HTTP: /status, the log, a failed call.
	stderrBuf := &testenv.Buffer{}
	m := &Main{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: stderrBuf, Getenv: func(k string) string { return env[k] }}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- m.Run(ctx, []string{"gateway", "--mcp-config", cfg, "--mode", "all", "--http", "127.0.0.1:0",
			"--index", ix, "--db", filepath.Join(dir, "db"), "--start-timeout", "5s", "--timeout", "2s"})
	}()
	defer func() { cancel(); <-done }()
	var base string
	re := regexp.MustCompile(`url=http://(127\.0\.0\.1:\d+)/mcp`)
	waitFor(t, "the gateway listens", func() bool {
		if m := re.FindStringSubmatch(stderrBuf.String()); m != nil {
			base = "http://" + m[1]
			return true
		}
		return false
	})
	get := func(path string) string {
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	// Upstreams connect in the background: wait until both failures show.
	var status string
	waitFor(t, "/status shows the failures with ${VAR}", func() bool {
		status = get("/status")
		leaks("/status", status)
		return strings.Contains(status, "${QSECRET}") && strings.Contains(status, "${ASECRET}") &&
			strings.Contains(status, `"name":"dict","transport":"http","connected":true`)
	})

	cs := connectHTTP(t, base+"/mcp")
	if text, isErr := callText(t, cs, "dict__lookup", map[string]any{"word": "x"}); isErr {
		t.Fatalf("dict__lookup: %s", text)
	}
	dict.close()
	// Once the gateway failed to reconnect, a call's error says why.
	waitFor(t, "dict is down in /status", func() bool {
		st := get("/status")
		i := strings.Index(st, `"name":"dict"`)
		return i >= 0 && strings.Contains(st[i:i+strings.IndexByte(st[i:], '}')], "connecting to")
	})
	text, isErr := callText(t, cs, "dict__lookup", map[string]any{"word": "x"})
	if !strings.Contains(text, "${QSECRET}") {
		t.Errorf("the failed call's error does not say why (with ${QSECRET}): %s", text)
	}
	if !isErr {
		t.Fatalf("a call to a stopped server succeeded: %s", text)
	}
	leaks("the failed call's error text", text)
	time.Sleep(300 * time.Millisecond) // let the restart's warning be logged
	log := stderrBuf.String()
	leaks("the gateway log", log)
	if !strings.Contains(log, "token=[]") {
		t.Errorf("the log lacks the stdio server's stderr (token=[]):\n%s", log)
	}
}

func connectHTTP(t *testing.T, url string) *mcp.ClientSession {
	t.Helper()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).
		Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func callText(t *testing.T, cs *mcp.ClientSession, name string, args any) (string, bool) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		return err.Error(), true
	}
	var s string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			s += tc.Text
		}
	}
	return s, res.IsError
}
