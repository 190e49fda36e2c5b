package httpapi_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	capbroker "github.com/capbroker/capbroker"
	"github.com/capbroker/capbroker/card"
	"github.com/capbroker/capbroker/examples"
	"github.com/capbroker/capbroker/httpapi"
	"github.com/capbroker/capbroker/plan"
	"github.com/capbroker/capbroker/policy"
	"github.com/capbroker/capbroker/rank"
	"github.com/capbroker/capbroker/route"
	"github.com/capbroker/capbroker/trace"
)

func testBroker(t testing.TB) *capbroker.Broker {
	t.Helper()
	cards, err := examples.Cards()
	if err != nil {
		t.Fatal(err)
	}
	b, err := capbroker.New(context.Background(), &capbroker.Options{Cards: cards, Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func newTestServer(t *testing.T, opts *httpapi.Options) *httptest.Server {
	t.Helper()
	if opts == nil {
		opts = &httpapi.Options{}
	}
	opts.Logger = quiet()
	s, err := httpapi.New(testBroker(t), opts)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s.Handler())
	t.Cleanup(ts.Close)
	return ts
}

type apiError struct {
	Error struct{ Code, Message string }
}

func do(t *testing.T, ts *httptest.Server, method, path, body string, header map[string]string) (int, []byte) {
	t.Helper()
	req, _ := http.NewRequest(method, ts.URL+path, strings.NewReader(body))
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, b
}

func TestEndpoints(t *testing.T) {
	ts := newTestServer(t, &httpapi.Options{MaxBodyBytes: 4096})
	big := `{"task":"` + strings.Repeat("x", 5000) + `"}`
	for _, tt := range []struct {
		name, method, path, body string
		status                   int
		code                     string // error code, or a substring of a good body
	}{
		{"select", "POST", "/v1/select", `{"task":"roll back the kubernetes deployment"}`, 200, `"kubectl_rollout_undo"`},
		{"select with format", "POST", "/v1/select", `{"task":"search the web","format":"anthropic"}`, 200, `"input_schema"`},
		{"select bounded", "POST", "/v1/select", `{"task":"fix the bug in the code","max":2}`, 200, `"family":"coding"`},
		{"select bad json", "POST", "/v1/select", `{"task":`, 400, "invalid"},
		{"select unknown field", "POST", "/v1/select", `{"task":"x","tsk":"y"}`, 400, "invalid"},
		{"select wrong type", "POST", "/v1/select", `{"task":5}`, 400, "invalid"},
		{"select empty body", "POST", "/v1/select", ``, 400, "invalid"},
		{"select no task", "POST", "/v1/select", `{"max":3}`, 400, "invalid"},
		{"select two values", "POST", "/v1/select", `{"task":"a"}{"task":"b"}`, 400, "invalid"},
		{"select bad format", "POST", "/v1/select", `{"task":"a","format":"gemini"}`, 400, "invalid"},
		{"select bad family", "POST", "/v1/select", `{"task":"a","family":"codng"}`, 400, "invalid"},
		{"select oversize", "POST", "/v1/select", big, 413, "too_large"},
		{"select wrong method", "GET", "/v1/select", ``, 405, "method_not_allowed"},
		{"find", "POST", "/v1/find", `{"query":"look up a web page","k":2}`, 200, `"matches"`},
		{"find no query", "POST", "/v1/find", `{"k":2}`, 400, "invalid"},
		{"find bad k", "POST", "/v1/find", `{"query":"x","k":1000}`, 400, "invalid"},
		{"cards", "GET", "/v1/cards", ``, 200, `"count":112`},
		{"cards by source", "GET", "/v1/cards?source=git", ``, 200, `"count":10`},
		{"cards bad kind", "GET", "/v1/cards?kind=widget", ``, 400, "invalid"},
		{"health", "GET", "/healthz", ``, 200, `"ok"`},
		{"metrics", "GET", "/metrics", ``, 200, "capbroker_http_requests_total"},
		{"openapi", "GET", "/openapi.json", ``, 200, `"openapi": "3.1.0"`},
		{"explorer", "GET", "/", ``, 200, "capbroker explorer"},
		{"explorer script", "GET", "/static/app.js", ``, 200, "renderSelection"},
		{"unknown path", "GET", "/v2/nothing", ``, 404, "not_found"},
		{"routing not configured", "POST", "/v1/route", `{}`, 501, "not_configured"},
		{"plan without a model", "POST", "/v1/plan", `{"goal":"launch"}`, 501, "not_configured"},
		{"assemble", "POST", "/v1/assemble", `{"plan":{"goal":"g","tasks":[{"id":"t1","description":"roll back the kubernetes deployment","depends_on":[],"needs":[]}]}}`, 200, `"origin":"inferred"`},
		{"assemble named", "POST", "/v1/assemble", `{"plan":{"goal":"g","tasks":[{"id":"t1","description":"x","depends_on":[],"needs":[],"capabilities":["send_email","no_such"]}]},"min":-1}`, 200, `"origin":"plan"`},
		{"assemble bad plan", "POST", "/v1/assemble", `{"plan":{"goal":"g","tasks":[{"id":"t1","descripton":"x"}]}}`, 400, "invalid"},
		{"assemble no plan", "POST", "/v1/assemble", `{}`, 400, "invalid"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			status, body := do(t, ts, tt.method, tt.path, tt.body, nil)
			if status != tt.status {
				t.Fatalf("status %d, want %d: %s", status, tt.status, body)
			}
			if status >= 400 && tt.code != "" {
				var e apiError
				if err := json.Unmarshal(body, &e); err != nil || e.Error.Code != tt.code || e.Error.Message == "" {
					t.Errorf("error body %s, want code %q and a message", body, tt.code)
				}
				return
			}
			if !strings.Contains(string(body), tt.code) {
				t.Errorf("body lacks %s:\n%.400s", tt.code, body)
			}
		})
	}
}

func TestSelectMatchesCLIShape(t *testing.T) {
	ts := newTestServer(t, nil)
	_, body := do(t, ts, "POST", "/v1/select", `{"task":"send an email to the team"}`, nil)
	var got map[string]any
	json.Unmarshal(body, &got)
	for _, k := range []string{"task", "family", "reason", "tools", "hatch", "tokens"} {
		if _, ok := got[k]; !ok {
			t.Errorf("response lacks %q: %s", k, body)
		}
	}
}

func TestAuth(t *testing.T) {
	ts := newTestServer(t, &httpapi.Options{Token: "s3cret"})
	for _, tt := range []struct {
		name, path string
		header     map[string]string
		status     int
	}{
		{"missing", "/v1/cards", nil, 401},
		{"wrong", "/v1/cards", map[string]string{"Authorization": "Bearer nope"}, 401},
		{"not bearer", "/v1/cards", map[string]string{"Authorization": "Basic czNjcmV0"}, 401},
		{"right", "/v1/cards", map[string]string{"Authorization": "Bearer s3cret"}, 200},
		{"health needs none", "/healthz", nil, 200},
		{"metrics need it", "/metrics", nil, 401},
	} {
		t.Run(tt.name, func(t *testing.T) {
			status, body := do(t, ts, "GET", tt.path, "", tt.header)
			if status != tt.status {
				t.Errorf("status %d, want %d: %s", status, tt.status, body)
			}
			if status == 401 && !strings.Contains(string(body), `"unauthorized"`) {
				t.Errorf("401 body %s", body)
			}
		})
	}
}

func TestRefusesPublicAddressWithoutToken(t *testing.T) {
	for _, tt := range []struct {
		addr, token string
		ok          bool
	}{
		{"127.0.0.1:0", "", true},
		{"localhost:0", "", true},
		{"[::1]:0", "", true},
		{"0.0.0.0:8080", "", false},
		{":8080", "", false},
		{"0.0.0.0:8080", "t", true},
		{"nonsense", "", false},
	} {
		_, err := httpapi.New(testBroker(t), &httpapi.Options{Addr: tt.addr, Token: tt.token})
		if (err == nil) != tt.ok {
			t.Errorf("New(%q, token %q) error = %v, want ok=%v", tt.addr, tt.token, err, tt.ok)
		}
	}
}

// TestOpenAPIMatchesHandlers checks the document against the server: the
// same paths and methods, and request schemas naming exactly the request
// types' JSON fields.
func TestOpenAPIMatchesHandlers(t *testing.T) {
	var doc struct {
		OpenAPI    string                                `json:"openapi"`
		Paths      map[string]map[string]json.RawMessage `json:"paths"`
		Components struct {
			Schemas map[string]struct {
				Properties map[string]any `json:"properties"`
				Required   []string       `json:"required"`
			} `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(httpapi.OpenAPI(), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.OpenAPI != "3.1.0" {
		t.Errorf("openapi = %q", doc.OpenAPI)
	}
	s, _ := httpapi.New(testBroker(t), nil)
	var routes, documented []string
	for _, p := range s.Routes() {
		method, path, _ := strings.Cut(p, " ")
		path = strings.TrimSuffix(strings.TrimSuffix(path, "{$}"), "/static/")
		if path == "" {
			continue // static files are part of the page
		}
		routes = append(routes, strings.ToLower(method)+" "+path)
	}
	for path, ops := range doc.Paths {
		for method := range ops {
			documented = append(documented, method+" "+path)
		}
	}
	sort.Strings(routes)
	sort.Strings(documented)
	if diff := cmp.Diff(documented, routes); diff != "" {
		t.Errorf("routes differ from /openapi.json (-doc +server):\n%s", diff)
	}
	// Request schemas name exactly the request types' fields; the schemas
	// of the CLI's JSON name exactly the fields of the Go types the CLI
	// prints.
	for name, typ := range map[string]reflect.Type{
		"SelectRequest":        reflect.TypeFor[httpapi.SelectRequest](),
		"FindRequest":          reflect.TypeFor[httpapi.FindRequest](),
		"PlanRequest":          reflect.TypeFor[httpapi.PlanRequest](),
		"AssembleRequest":      reflect.TypeFor[httpapi.AssembleRequest](),
		"RouteRequest":         reflect.TypeFor[httpapi.RouteRequest](),
		"SessionStartRequest":  reflect.TypeFor[httpapi.SessionStartRequest](),
		"SessionFindRequest":   reflect.TypeFor[httpapi.SessionFindRequest](),
		"SessionCallRequest":   reflect.TypeFor[httpapi.SessionCallRequest](),
		"SessionResumeRequest": reflect.TypeFor[httpapi.SessionResumeRequest](),
		"RouteDecision":        reflect.TypeFor[route.Decision](),
		"RouteMatch":           reflect.TypeFor[route.Match](),
		"CapabilityMap":        reflect.TypeFor[route.Summary](),
		"CapabilityEntry":      reflect.TypeFor[route.Entry](),
		"Session":              reflect.TypeFor[httpapi.SessionResponse](),
		"SessionList":          reflect.TypeFor[httpapi.SessionsResponse](),
		"TraceRecord":          reflect.TypeFor[trace.Record](),
		"TraceFailure":         reflect.TypeFor[trace.Failure](),
		"Activity":             reflect.TypeFor[httpapi.ActivityResponse](),
		"SessionActivity":      reflect.TypeFor[httpapi.SessionActivity](),
		"CallCount":            reflect.TypeFor[httpapi.CallCount](),
		"HeldTool":             reflect.TypeFor[httpapi.HeldTool](),
		"Match":                reflect.TypeFor[rank.Match](),
		"Selection":            reflect.TypeFor[httpapi.SelectResponse](),
		"Pick":                 reflect.TypeFor[policy.Pick](),
		"FindResult":           reflect.TypeFor[policy.FindResult](),
		"Capability":           reflect.TypeFor[policy.Capability](),
		"CardsResponse":        reflect.TypeFor[httpapi.CardsResponse](),
		"Card":                 reflect.TypeFor[card.Card](),
		"Plan":                 reflect.TypeFor[plan.Plan](),
		"PlanPin":              reflect.TypeFor[plan.Pin](),
		"PlanResult":           reflect.TypeFor[plan.Result](),
		"Assembly":             reflect.TypeFor[plan.Assembly](),
	} {
		schema, ok := doc.Components.Schemas[name]
		if !ok {
			t.Errorf("no schema %s in /openapi.json", name)
			continue
		}
		var props []string
		for p := range schema.Properties {
			props = append(props, p)
		}
		fields := jsonFields(typ)
		sort.Strings(fields)
		sort.Strings(props)
		if diff := cmp.Diff(props, fields); diff != "" {
			t.Errorf("%s: schema properties differ from the Go type (-doc +go):\n%s", name, diff)
		}
		// A list the answer always holds is a required array, so that
		// TestResponsesMatchOpenAPI checks it is [] and never null.
		if !strings.HasSuffix(name, "Request") {
			for _, f := range alwaysLists(typ) {
				if !slices.Contains(schema.Required, f) {
					t.Errorf("%s.%s: the Go type always writes this list (no omitempty) but the schema does not require it", name, f)
				}
			}
		}
	}
	// A match's fields are the ranking's fields, every one.
	var rankFields []any
	for f := rank.Field(0); f.String() != "unknown"; f++ {
		rankFields = append(rankFields, f.String())
	}
	fieldsProp, _ := doc.Components.Schemas["Match"].Properties["fields"].(map[string]any)
	items, _ := fieldsProp["items"].(map[string]any)
	if diff := cmp.Diff(rankFields, items["enum"]); diff != "" {
		t.Errorf("Match.fields enum differs from rank's fields (-rank +doc):\n%s", diff)
	}
}

// jsonFields returns the JSON names of a struct type's fields, with the
// fields of embedded structs.
func jsonFields(typ reflect.Type) []string {
	if typ.Kind() == reflect.Pointer {
		typ = typ.Elem()
	}
	var out []string
	for f := range typ.Fields() {
		tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch {
		case tag == "-" || !f.IsExported() && !f.Anonymous:
		case f.Anonymous && tag == "":
			out = append(out, jsonFields(f.Type)...)
		case tag == "":
			out = append(out, f.Name)
		default:
			out = append(out, tag)
		}
	}
	return out
}

// alwaysLists returns the JSON names of a struct type's slice fields that
// are written even when empty (no omitempty), with those of embedded
// structs. Raw JSON is not a list.
func alwaysLists(typ reflect.Type) []string {
	if typ.Kind() == reflect.Pointer {
		typ = typ.Elem()
	}
	var out []string
	for f := range typ.Fields() {
		tag, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch {
		case tag == "-" || !f.IsExported() && !f.Anonymous:
		case f.Anonymous && tag == "":
			out = append(out, alwaysLists(f.Type)...)
		case f.Type.Kind() == reflect.Slice && f.Type != reflect.TypeFor[json.RawMessage]() && !strings.Contains(opts, "omitempty"):
			out = append(out, tag)
		}
	}
	return out
}

func TestRunShutsDownGracefully(t *testing.T) {
	s, err := httpapi.New(testBroker(t), &httpapi.Options{Addr: "127.0.0.1:0", Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	addrc := make(chan string, 1)
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx, func(a string) { addrc <- a }) }()
	addr := <-addrc
	res, err := http.Post("http://"+addr+"/v1/select", "application/json", strings.NewReader(`{"task":"list files"}`))
	if err != nil || res.StatusCode != 200 {
		t.Fatalf("request before shutdown: %v %v", res, err)
	}
	res.Body.Close()
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run returned %v after shutdown", err)
	}
	if _, err := http.Get("http://" + addr + "/healthz"); err == nil {
		t.Error("server still answers after shutdown")
	}
}
