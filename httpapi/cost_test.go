package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	capbroker "github.com/capbroker/capbroker"
	"github.com/capbroker/capbroker/httpapi"
	"github.com/capbroker/capbroker/internal/synth"
	"github.com/capbroker/capbroker/internal/testenv"
	"github.com/capbroker/capbroker/session"
)

// adversarial builds task texts of about n bytes meant to make some
// step of the request cost more than linear time.
var adversarial = []struct {
	name string
	unit func(i int) string // repeated until n bytes
}{
	{"distinct words", func(i int) string { return fmt.Sprintf("w%dq%c ", i, 'a'+i%26) }},
	{"unclosed single quotes", func(i int) string { return fmt.Sprintf("'a%d ", i) }},
	{"double quotes", func(int) string { return `"a ` }},
	{"curly quotes", func(int) string { return "“a ‘b " }},
	{"urls", func(i int) string { return fmt.Sprintf("http://x%d.example/a ", i) }},
	{"one camelCase word", func(i int) string { return fmt.Sprintf("readFile%dGet", i) }},
	{"one long word", func(int) string { return "abcdefghij" }},
	{"single letters", func(i int) string { return string(rune('a'+i%26)) + " " }},
	{"numbers", func(i int) string { return fmt.Sprintf("%d ", i) }},
	{"cjk", func(i int) string { return string(rune(0x4e00 + i%20000)) }},
	{"catalog words", func(i int) string {
		return []string{"read ", "file ", "search ", "github ", "issue ", "create ", "list ", "delete "}[i%8]
	}},
}

// fill repeats unit up to n bytes.
func fill(n int, unit func(int) string) string {
	var b strings.Builder
	for i := 0; b.Len() < n; i++ {
		b.WriteString(unit(i))
	}
	s := b.String()
	for len(s) > n || !utf8.ValidString(s) {
		s = s[:len(s)-1] // at n bytes, on a rune boundary
	}
	return s
}

// mixed is a property test's random adversarial text: units of every
// kind above, in random order.
func mixed(r *rand.Rand, n int) string {
	return fill(n, func(i int) string { return adversarial[r.IntN(len(adversarial))].unit(r.IntN(1 << 20)) })
}

// TestAdversarialBodyCost is the bound on per-request work: a request
// whose 1 MiB body is built to be expensive (many distinct words,
// unclosed quotes, one huge word, a huge tool name, ...) costs at most a
// small multiple of a normal request, on a 5,000-card catalog. Costs are
// compared within this run (the least of a few tries each), never against
// a clock. Before the bounds, a 1 MiB body of unclosed quotes took
// minutes in one POST /v1/select, and a 900 KB tool name as long in
// POST /v1/sessions/{id}/call.
func TestAdversarialBodyCost(t *testing.T) {
	if testing.Short() {
		t.Skip("cost test skipped in -short mode")
	}
	b, err := capbroker.New(context.Background(), &capbroker.Options{Cards: synth.Cards(5000, 1), Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	mgr := session.NewManager(b.Selector(), newStore(t), &session.Options{Logger: quiet()})
	srv, err := httpapi.New(b, &httpapi.Options{Logger: quiet(), Sessions: mgr, MaxBodyBytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	h := srv.Handler()
	post := func(path string, body []byte) *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(string(body)))
		req.Host = "127.0.0.1" // httpguard refuses example.com, httptest's host
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec
	}
	rec := post("/v1/sessions", []byte(`{"task":"open a pull request on github"}`))
	if rec.Code != http.StatusCreated {
		t.Fatalf("starting a session: %d %s", rec.Code, rec.Body)
	}
	var started struct {
		ID string `json:"id"`
	}
	json.Unmarshal(rec.Body.Bytes(), &started)

	// cost is the least CPU time of a few sequential tries: the least is
	// the request's own work, with the least noise from the machine.
	cost := func(path string, body []byte) (time.Duration, int) {
		best, code := time.Duration(1<<62), 0
		for range 5 {
			start := testenv.CPUTime()
			rec := post(path, body)
			best, code = min(best, testenv.CPUTime()-start), rec.Code
		}
		return best, code
	}
	body := func(field, text string) []byte {
		b, _ := json.Marshal(map[string]string{field: text})
		return b
	}
	const size = 1<<20 - 64 // within the body limit with the JSON around it
	normalTask := "find the open pull requests on github that touch the billing service and list their reviewers"
	call := "/v1/sessions/" + started.ID + "/call"

	type probe struct {
		name, path string
		normal     []byte
		bad        []byte
	}
	var probes []probe
	for _, a := range adversarial {
		text := fill(size, a.unit)
		probes = append(probes,
			probe{"select " + a.name, "/v1/select", body("task", normalTask), body("task", text)},
			probe{"find " + a.name, "/v1/find", body("query", normalTask), body("query", text)},
		)
	}
	r := rand.New(rand.NewPCG(15, 2))
	for i := range 4 {
		probes = append(probes, probe{fmt.Sprintf("select random mix %d", i), "/v1/select", body("task", normalTask), body("task", mixed(r, size))})
	}
	probes = append(probes,
		probe{"session start distinct words", "/v1/sessions", body("task", normalTask), body("task", fill(size, adversarial[0].unit))},
		probe{"session call 16 KB name", call, body("tool", "github_create_isue"), body("tool", fill(16<<10, adversarial[5].unit))},
		probe{"session call 900 KB name", call, body("tool", "github_create_isue"), body("tool", fill(900<<10, adversarial[5].unit))},
		probe{"session call 900 KB of words", call, body("tool", "github_create_isue"), body("tool", fill(900<<10, adversarial[0].unit))},
	)

	// A normal request's own cost: its body is small. The bound allows
	// for reading and decoding 1 MiB of JSON, which no bound on the work
	// after it can avoid, so it is stated against the cost of a normal
	// task padded to 1 MiB with spaces (JSON decoding and echoing the
	// task cost the same; everything else is the normal task's).
	const factor = 8
	for _, p := range probes {
		t.Run(p.name, func(t *testing.T) {
			normal, code := cost(p.path, p.normal)
			if code >= 300 {
				t.Fatalf("normal request: status %d", code)
			}
			padded := normalTask + strings.Repeat(" ", len(p.bad)-len(p.normal))
			var field string
			for f := range map[string]any{"task": 0, "query": 0, "tool": 0} {
				if strings.Contains(string(p.normal), `"`+f+`"`) {
					field = f
				}
			}
			if field == "tool" {
				padded = strings.Repeat(" ", len(p.bad)-len(p.normal)) + "github_create_isue"
			}
			base, _ := cost(p.path, body(field, padded))
			bad, code := cost(p.path, p.bad)
			if code >= 500 {
				t.Errorf("adversarial request: status %d", code)
			}
			ratio := float64(bad) / float64(max(base, normal))
			t.Logf("normal %v, padded to %d bytes %v, adversarial %v: %.1fx", normal, len(p.bad), base, bad, ratio)
			if ratio > factor {
				t.Errorf("%s: a %d-byte adversarial body cost %.1fx a normal request of that size (%v against %v); want at most %dx", p.name, len(p.bad), ratio, bad, max(base, normal), factor)
			}
		})
	}
}
