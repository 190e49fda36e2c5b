package session_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/capbroker/capbroker/session"
)

// The crash tests re-run this test binary as a child process that holds a
// session, and kill it with SIGKILL.
const (
	childEnv  = "CAPBROKER_SESSION_CRASH_CHILD" // the database path
	childMode = "CAPBROKER_SESSION_CRASH_MODE"  // "once" or "loop"
)

func TestMain(m *testing.M) {
	if path := os.Getenv(childEnv); path != "" {
		crashChild(path, os.Getenv(childMode))
		return // not reached: the parent kills the child
	}
	os.Exit(m.Run())
}

// childState is what the child prints after each change it made.
type childState struct {
	ID         string   `json:"id"`
	Exposed    []string `json:"exposed_tools"`
	Iterations int      `json:"iterations"`
}

var crashQueries = []string{
	"who last changed a line of a file",
	"open a pull request",
	"post a message to slack",
	"calendar invite",
	"translate text",
	"restart a kubernetes deployment",
	"create a jira ticket",
	"search the web",
}

// crashChild starts a session and finds tools, printing the state after
// each find. In "once" mode it finds once and waits to be killed; in
// "loop" mode it keeps finding (and calling) until killed.
func crashChild(path, mode string) {
	ctx := context.Background()
	t := &testing.T{}
	st := openSQLite(t, path)
	m := session.NewManager(newSelector(t), st, &session.Options{MaxIterations: 1 << 30})
	s, err := m.Start(ctx, codingTask, nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, "child:", err)
		os.Exit(3)
	}
	out := json.NewEncoder(os.Stdout)
	for i := 0; ; i++ {
		q := crashQueries[i%len(crashQueries)] + " " + strconv.Itoa(i)
		if _, err := s.Find(ctx, q, 2); err != nil {
			fmt.Fprintln(os.Stderr, "child:", err)
			os.Exit(3)
		}
		if s.InMemory() {
			fmt.Fprintln(os.Stderr, "child: store failed:", s.Failures())
			os.Exit(3)
		}
		used, _ := s.Iterations()
		out.Encode(childState{ID: s.ID(), Exposed: s.Exposed(), Iterations: used})
		if mode == "once" {
			time.Sleep(time.Hour) // hold the session until killed
		}
	}
}

// startChild runs the child and returns its process and output lines.
func startChild(t *testing.T, path, mode string) (*exec.Cmd, *bufio.Scanner) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+path, childMode+"="+mode)
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	sc := bufio.NewScanner(stdout)
	sc.Buffer(nil, 1<<20)
	return cmd, sc
}

func readState(t *testing.T, sc *bufio.Scanner) childState {
	t.Helper()
	if !sc.Scan() {
		t.Fatalf("the child stopped without reporting: %v", sc.Err())
	}
	var cs childState
	if err := json.Unmarshal(sc.Bytes(), &cs); err != nil {
		t.Fatalf("child said %q: %v", sc.Text(), err)
	}
	return cs
}

// kill sends SIGKILL to the child, reads what it wrote before dying and
// returns its last reported state (last if it reported nothing more).
func kill(t *testing.T, cmd *exec.Cmd, sc *bufio.Scanner, last childState) childState {
	t.Helper()
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	for sc.Scan() {
		var cs childState
		if json.Unmarshal(sc.Bytes(), &cs) == nil {
			last = cs
		} // a line cut by the kill is not a report
	}
	err := cmd.Wait()
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("the child was not killed by SIGKILL: %v", err)
	}
	return last
}

// TestCrashRightAfterFind kills the process holding a session right after
// a find exposed new tools; the resumed session has exactly that set.
func TestCrashRightAfterFind(t *testing.T) {
	path := filepath.Join(t.TempDir(), "capbroker.db")
	cmd, sc := startChild(t, path, "once")
	before := kill(t, cmd, sc, readState(t, sc))

	if !slices.Contains(before.Exposed, "git_blame") {
		t.Fatalf("the child's find did not expose git_blame: %v", before.Exposed)
	}
	r, err := session.NewManager(newSelector(t), openSQLite(t, path), nil).Resume(context.Background(), before.ID)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(before.Exposed, r.Exposed()); d != "" {
		t.Errorf("resumed exposed set (-before kill +resumed):\n%s", d)
	}
	if used, _ := r.Iterations(); used != before.Iterations || len(r.Missing()) != 0 {
		t.Errorf("resumed at iteration %d with missing %v; before the kill %d", used, r.Missing(), before.Iterations)
	}
}

// TestCrashMidRun kills the child while it keeps finding: everything it
// reported before dying is stored, and at most the one write in flight
// (committed, not yet reported) is beyond it.
func TestCrashMidRun(t *testing.T) {
	for round := range 3 {
		t.Run(strconv.Itoa(round), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "capbroker.db")
			cmd, sc := startChild(t, path, "loop")
			var last childState
			for range 5 + 7*round {
				last = readState(t, sc)
			}
			last = kill(t, cmd, sc, last)

			r, err := session.NewManager(newSelector(t), openSQLite(t, path), nil).Resume(context.Background(), last.ID)
			if err != nil {
				t.Fatal(err)
			}
			got := r.Exposed()
			used, _ := r.Iterations()
			switch used {
			case last.Iterations:
				if d := cmp.Diff(last.Exposed, got); d != "" {
					t.Errorf("resumed exposed set (-last reported +resumed):\n%s", d)
				}
			case last.Iterations + 1: // the next find committed before the kill
				if len(got) < len(last.Exposed) || !slices.Equal(got[:len(last.Exposed)], last.Exposed) {
					t.Errorf("resumed set %v does not extend the last reported %v", got, last.Exposed)
				}
			default:
				t.Errorf("resumed at iteration %d; the child reported %d", used, last.Iterations)
			}
		})
	}
}
