package httpapi_test

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/capbroker/capbroker/httpapi"
)

// TestRoutePathsConfined checks that POST /v1/route reads and writes only
// under the folders the server was started for (serve --route-root):
// other paths, symlinks that escape, special files and oversized files are
// refused, and nothing is created outside. Before, any absolute path was
// written, "/dev/zero" exhausted memory and a FIFO blocked every request.
func TestRoutePathsConfined(t *testing.T) {
	root, outside := t.TempDir(), t.TempDir()
	project := filepath.Join(root, "project")
	os.Mkdir(project, 0o755)
	os.WriteFile(filepath.Join(project, "go.mod"), []byte("module x\n"), 0o644)
	os.WriteFile(filepath.Join(outside, "go.mod"), []byte("module y\n"), 0o644)
	if err := os.Symlink(outside, filepath.Join(root, "escape")); err != nil {
		t.Fatal(err)
	}
	os.Symlink(filepath.Join(outside, "target.md"), filepath.Join(root, "link.md"))
	os.Symlink("/dev/zero", filepath.Join(root, "zero.md"))
	if err := syscall.Mkfifo(filepath.Join(root, "fifo.md"), 0o600); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(root, "big.md")
	os.WriteFile(big, make([]byte, 5<<20), 0o644)

	q := func(s string) string { return `"` + s + `"` }
	closed := newTestServer(t, &httpapi.Options{Router: testRouter(t)})
	open := newTestServer(t, &httpapi.Options{Router: testRouter(t), RouteRoots: []string{root}})
	for _, tt := range []struct {
		name   string
		open   bool // the server with --route-root root
		body   string
		status int
		code   string
		msg    string
	}{
		{"project without --route-root", false, `{"phase":"PLAN","project":` + q(project) + `}`, 403, "forbidden", "--route-root"},
		{"state without --route-root", false, `{"phase":"PLAN","state":` + q(filepath.Join(project, "S.md")) + `}`, 403, "forbidden", "--route-root"},
		{"project outside", true, `{"phase":"PLAN","project":` + q(outside) + `}`, 403, "forbidden", "--route-root"},
		{"state outside", true, `{"phase":"PLAN","state":` + q(filepath.Join(outside, "S.md")) + `}`, 403, "forbidden", "--route-root"},
		{"dot-dot", true, `{"phase":"PLAN","state":` + q(root+"/project/../../"+filepath.Base(outside)+"/S.md") + `}`, 403, "forbidden", "--route-root"},
		{"dev zero", true, `{"phase":"PLAN","state":"/dev/zero"}`, 403, "forbidden", "--route-root"},
		{"project through a symlink out", true, `{"phase":"PLAN","project":` + q(filepath.Join(root, "escape")) + `}`, 403, "forbidden", "--route-root"},
		{"state through a symlinked folder", true, `{"phase":"PLAN","state":` + q(filepath.Join(root, "escape", "S.md")) + `}`, 403, "forbidden", "--route-root"},
		{"state is a symlink out", true, `{"phase":"PLAN","state":` + q(filepath.Join(root, "link.md")) + `}`, 400, "invalid", "symbolic link"},
		{"state is a symlink to /dev/zero", true, `{"phase":"PLAN","state":` + q(filepath.Join(root, "zero.md")) + `}`, 400, "invalid", "symbolic link"},
		{"state is a FIFO", true, `{"phase":"PLAN","state":` + q(filepath.Join(root, "fifo.md")) + `}`, 400, "invalid", "named pipe"},
		{"state too large", true, `{"phase":"PLAN","state":` + q(big) + `}`, 400, "invalid", "limit"},
		{"state is a folder", true, `{"phase":"PLAN","state":` + q(project) + `}`, 400, "invalid", "folder"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ts := closed
			if tt.open {
				ts = open
			}
			status, body := do(t, ts, "POST", "/v1/route", tt.body, nil)
			checkError(t, status, body, tt.status, tt.code, tt.msg)
		})
	}
	// Nothing was created outside the root, nor in the project by the
	// refused requests.
	for _, p := range []string{filepath.Join(outside, "S.md"), filepath.Join(outside, "target.md"), filepath.Join(outside, "FLOW.md"), filepath.Join(project, "S.md"), filepath.Join(project, "FLOW.md")} {
		if _, err := os.Lstat(p); err == nil {
			t.Errorf("%s was created", p)
		}
	}
	// The FIFO was never opened for writing, so a later request is
	// answered: the client's deadline only turns a hang into a failure.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "POST", open.URL+"/v1/route", strings.NewReader(`{"capability":"brainstorming","project":`+q(project)+`}`))
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 200 {
		t.Fatalf("a project under the root: status %d", res.StatusCode)
	}
	if data, err := os.ReadFile(filepath.Join(project, "FLOW.md")); err != nil || !strings.Contains(string(data), "## Capability Warnings") {
		t.Errorf("FLOW.md in the project under the root: %v %q", err, data)
	}
}
