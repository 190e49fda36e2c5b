package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/capbroker/capbroker/httpapi"
	"github.com/capbroker/capbroker/internal/testenv"
	"github.com/capbroker/capbroker/session"
	"github.com/capbroker/capbroker/store/postgres"
)

// pgCluster is a private PostgreSQL cluster for one test, so that it can
// be stopped and started without touching the shared one.
type pgCluster struct {
	bin, dir, data string
	port           int
	as             []string // runuser prefix when running as root
}

// privatePostgres creates and starts a cluster in a temporary folder,
// listening on loopback only, stopped and removed at the end of the test.
func privatePostgres(t *testing.T) *pgCluster {
	t.Helper()
	bins, _ := filepath.Glob("/usr/lib/postgresql/*/bin/pg_ctl")
	if len(bins) == 0 {
		testenv.Missing(t, "PostgreSQL server binaries (Debian package postgresql)")
		return nil
	}
	c := &pgCluster{bin: filepath.Dir(bins[len(bins)-1])}
	dir, err := os.MkdirTemp("", "capbroker-pg-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	c.dir, c.data = dir, filepath.Join(dir, "data")
	if os.Geteuid() == 0 {
		// Root may not run the server: the postgres user does, and owns
		// the folder.
		u, err := user.Lookup("postgres")
		if err != nil {
			testenv.Missing(t, "the postgres user (Debian package postgresql)")
			return nil
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chown(dir, uid, gid); err != nil {
			t.Fatal(err)
		}
		c.as = []string{"runuser", "-u", "postgres", "--"}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	c.port = ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	c.run(t, "initdb", "-D", c.data, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--locale=C.UTF-8")
	c.start(t)
	t.Cleanup(func() { c.ctl("stop", "-m", "immediate") })
	return c
}

func (c *pgCluster) run(t *testing.T, prog string, args ...string) {
	t.Helper()
	argv := append(append(append([]string(nil), c.as...), filepath.Join(c.bin, prog)), args...)
	out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(argv, " "), err, out)
	}
}

func (c *pgCluster) ctl(args ...string) error {
	argv := append(append(append([]string(nil), c.as...), filepath.Join(c.bin, "pg_ctl"), "-D", c.data), args...)
	return exec.Command(argv[0], argv[1:]...).Run()
}

func (c *pgCluster) start(t *testing.T) {
	t.Helper()
	c.run(t, "pg_ctl", "-D", c.data, "-w", "-l", filepath.Join(c.dir, "server.log"),
		"-o", fmt.Sprintf("-p %d -k %s -c listen_addresses=127.0.0.1", c.port, c.dir), "start")
}

// stop stops the server the way a crash would (no shutdown checkpoint).
func (c *pgCluster) stop(t *testing.T) {
	t.Helper()
	c.run(t, "pg_ctl", "-D", c.data, "-w", "-m", "immediate", "stop")
}

func (c *pgCluster) dsn() string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", c.port)
}

// TestPostgresStoppedMidRun starts sessions from 8 clients while
// PostgreSQL is stopped (as by a crash) and started again. Every session
// the API acknowledged (201) must be in the database afterwards; while
// the database is down the API answers 503 and nothing else. Before, it
// answered 201 with in_memory: true and those sessions were lost.
func TestPostgresStoppedMidRun(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a PostgreSQL cluster")
	}
	pg := privatePostgres(t)
	ctx := context.Background()
	st, err := postgres.Open(ctx, pg.dsn(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	b := testBroker(t)
	srv, err := httpapi.New(b, &httpapi.Options{Logger: quiet(), Sessions: session.NewManager(b.Selector(), st, &session.Options{Logger: quiet()})})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv.Handler())
	defer ts.Close()

	var (
		mu    sync.Mutex
		acked []string
		codes = map[int]int{}
	)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				res, err := http.Post(ts.URL+"/v1/sessions", "application/json",
					strings.NewReader(fmt.Sprintf(`{"task":"open a pull request for fix %d-%d"}`, w, i)))
				if err != nil {
					t.Error(err)
					return
				}
				var body struct {
					ID       string `json:"id"`
					InMemory bool   `json:"in_memory"`
				}
				json.NewDecoder(res.Body).Decode(&body)
				res.Body.Close()
				mu.Lock()
				codes[res.StatusCode]++
				if res.StatusCode == http.StatusCreated {
					acked = append(acked, body.ID)
				}
				mu.Unlock()
			}
		}()
	}
	// phase counts the answers of at least d, and until want answers
	// have come with that status (a loaded machine may be slow to give
	// the first ones), within a minute.
	phase := func(name string, d time.Duration, want int) map[int]int {
		mu.Lock()
		clear(codes)
		mu.Unlock()
		time.Sleep(d)
		for range 600 {
			mu.Lock()
			n := codes[want]
			mu.Unlock()
			if n >= 5 {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		mu.Lock()
		defer mu.Unlock()
		got := map[int]int{}
		for k, v := range codes {
			got[k] = v
		}
		t.Logf("%s: statuses %v", name, got)
		return got
	}
	up := phase("up", time.Second, http.StatusCreated)
	pg.stop(t)
	down := phase("down", time.Second, http.StatusServiceUnavailable)
	pg.start(t)
	phase("restarted", time.Second, http.StatusCreated)
	close(stop)
	wg.Wait()

	if up[http.StatusCreated] == 0 {
		t.Fatalf("no session started before the stop: %v", up)
	}
	if down[http.StatusServiceUnavailable] == 0 {
		t.Errorf("no 503 while the database was down: %v", down)
	}
	for code, n := range down {
		if code != http.StatusServiceUnavailable && code != http.StatusCreated {
			t.Errorf("%d answers %d while the database was down; want 503", n, code)
		}
	}
	lost := 0
	for _, id := range acked {
		if _, err := st.Session(ctx, id); err != nil {
			lost++
			if lost <= 3 {
				t.Errorf("acknowledged session %s: %v", id, err)
			}
		}
	}
	t.Logf("%d sessions acknowledged, %d lost", len(acked), lost)
	if lost > 0 {
		t.Errorf("%d of %d acknowledged sessions are not in the database", lost, len(acked))
	}
}
