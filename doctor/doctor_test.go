package doctor_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/capbroker/capbroker/card"
	"github.com/capbroker/capbroker/doctor"
	"github.com/capbroker/capbroker/eval"
	"github.com/capbroker/capbroker/override"
	"github.com/capbroker/capbroker/rank"
	"github.com/capbroker/capbroker/replay"
	"github.com/capbroker/capbroker/source"
	"github.com/capbroker/capbroker/source/toolfile"
	"github.com/capbroker/capbroker/trace"
)

func fixtureCards(t *testing.T) []card.Card {
	t.Helper()
	cards, err := toolfile.Load(filepath.Join("testdata", "tools.json"))
	if err != nil {
		t.Fatal(err)
	}
	cat, _ := card.NewCatalog(cards)
	return cat.Cards()
}

// kinds returns "tool kind [with]" for each finding, sorted.
func kinds(fs []doctor.Finding) []string {
	var out []string
	for _, f := range fs {
		s := f.Tool + " " + f.Kind
		if f.With != "" {
			s += " " + f.With
		}
		out = append(out, s)
	}
	slices.Sort(out)
	return out
}

func TestCheck(t *testing.T) {
	got := doctor.Check(fixtureCards(t), nil)
	want := []string{
		"fetch_weather overlap get_weather", // named from the first in catalog order
		"sync_ledger empty",
		"sync_ledger params",
		"upload_blob long",
		"upload_blob params",
	}
	if diff := cmp.Diff(want, kinds(got)); diff != "" {
		t.Errorf("findings (-want +got):\n%s", diff)
	}
	for _, f := range got {
		if f.Tool == "upload_blob" && f.Kind == doctor.Params && !cmp.Equal(f.Params, []string{"bucketName"}) {
			t.Errorf("upload_blob's bare params %v, want [bucketName]", f.Params)
		}
	}
	// send_invoice and create_invoice share words but are not near
	// duplicates; a lower bound reports them.
	loose := kinds(doctor.Check(fixtureCards(t), &doctor.Options{Overlap: 0.2}))
	if !slices.ContainsFunc(loose, func(s string) bool { return strings.Contains(s, "invoice overlap") }) {
		t.Errorf("overlap 0.2: %v, want the invoice pair", loose)
	}
}

type lexical struct{ ix *rank.Index }

func (l lexical) Rank(_ context.Context, q string, k int) ([]string, error) {
	var names []string
	for _, h := range l.ix.Search(q, k) {
		names = append(names, h.Name)
	}
	return names, nil
}

func TestMissesAndFromSessions(t *testing.T) {
	cards := fixtureCards(t)
	qs, err := eval.LoadQueries(filepath.Join("testdata", "queries.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	miss, err := doctor.Misses(context.Background(), lexical{rank.New(cards, nil)}, qs, nil)
	if err != nil {
		t.Fatal(err)
	}
	// "bill the customer for last month's hosting" shares only
	// "customer" with both invoice tools; send_invoice's shorter
	// description wins it.
	if diff := cmp.Diff([]string{"create_invoice confused send_invoice"}, kinds(miss)); diff != "" {
		t.Fatalf("misses (-want +got):\n%s", diff)
	}
	at := func(s int) trace.Record { return trace.Record{SessionID: "s", At: at0.Add(secs(s))} }
	r1, r2, r3 := at(0), at(1), at(2)
	r1.Kind, r1.Query, r1.Found = trace.KindFind, "what's it like outside in Oslo", []string{"fetch_weather", "get_weather"}
	r2.Kind, r2.Tool = trace.KindCall, "get_weather"
	r3.Kind, r3.Query, r3.Found = trace.KindFind, "weather in Bergen", []string{"get_weather"}
	fs := doctor.FromSessions(replay.Sessions([]trace.Record{r1, r2, r3}), nil)
	if diff := cmp.Diff([]string{"get_weather confused fetch_weather"}, kinds(fs)); diff != "" {
		t.Errorf("from sessions (-want +got):\n%s", diff)
	}
	if fs[0].Examples[0] != "what's it like outside in Oslo" {
		t.Errorf("examples %q", fs[0].Examples)
	}
}

func TestProposeAndApply(t *testing.T) {
	cards := fixtureCards(t)
	findings := doctor.Check(cards, nil)
	findings = append(findings, doctor.Finding{Tool: "create_invoice", Kind: doctor.Confused, With: "send_invoice", Count: 1,
		Examples: []string{"bill the customer for last month's hosting"}})
	props := doctor.Propose(cards, findings, nil)
	byTool := map[string]override.Override{}
	for _, p := range props {
		if err := p.Validate(0); err != nil {
			t.Errorf("proposal %+v: %v", p, err)
		}
		byTool[p.Tool] = p
	}
	if _, ok := byTool["fetch_weather"]; ok {
		t.Errorf("an overlap alone proposed %+v; want nothing", byTool["fetch_weather"])
	}
	want := map[string]string{
		"sync_ledger":    "Sync ledger (ledger_id, since).",
		"create_invoice": `Create a draft invoice for a customer with line items. Use for: "bill the customer for last month's hosting".`,
	}
	for tool, d := range want {
		if got := byTool[tool].Description; got != d {
			t.Errorf("%s: proposed %q, want %q", tool, got, d)
		}
	}
	up := byTool["upload_blob"]
	if len(up.Description) > doctor.DefaultMaxDescription || !strings.HasPrefix(up.Description, "Uploads a file to the bucket") || !strings.HasSuffix(up.Description, ".") {
		t.Errorf("upload_blob: proposed %d bytes %q…", len(up.Description), up.Description[:min(60, len(up.Description))])
	}
	if up.Params["bucketName"] != "Bucket name." {
		t.Errorf("upload_blob params %v, want bucketName described", up.Params)
	}

	applied, warns := override.Apply(cards, props)
	if len(warns) > 0 {
		t.Errorf("warnings %v", warns)
	}
	ix := rank.New(applied, nil)
	hits := ix.Search("bill the customer for last month's hosting", 1)
	if len(hits) == 0 || hits[0].Name != "create_invoice" {
		t.Fatalf("with the override, top hit %v, want create_invoice", hits)
	}
	if !strings.Contains(hits[0].Override, "overridden locally") {
		t.Errorf("hit's override %q, want it said", hits[0].Override)
	}
	for _, c := range applied {
		if c.Name == "upload_blob" {
			var found bool
			for _, p := range c.Params() {
				found = found || (p.Name == "bucketName" && p.Description == "Bucket name.")
			}
			if !found {
				t.Errorf("upload_blob params after apply: %+v", c.Params())
			}
		}
	}

	// A tool that changed since: the override is not applied, and says so.
	changed := slices.Clone(cards)
	for i := range changed {
		if changed[i].Name == "create_invoice" {
			changed[i].Description = "Create an invoice."
			changed[i].Digest = changed[i].ComputeDigest()
		}
	}
	out, warns := override.Apply(changed, props)
	if len(warns) != 1 || !strings.Contains(warns[0], "create_invoice") || !strings.Contains(warns[0], "not applied") {
		t.Errorf("warnings %v, want one for create_invoice", warns)
	}
	for _, c := range out {
		if c.Name == "create_invoice" && c.Description != "Create an invoice." {
			t.Errorf("a stale override was applied: %q", c.Description)
		}
	}
}

func TestAccept(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "capbroker.yaml")
	orig, err := os.ReadFile(filepath.Join("testdata", "capbroker.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, orig, 0o644); err != nil {
		t.Fatal(err)
	}
	cards := fixtureCards(t)
	props := doctor.Propose(cards, doctor.Check(cards, nil), nil)
	if err := doctor.Accept(path, props); err != nil {
		t.Fatal(err)
	}
	// Again, with one changed: replaced, not added twice.
	props[0].Why = "second look"
	if err := doctor.Accept(path, props[:1]); err != nil {
		t.Fatal(err)
	}
	cfg, err := source.LoadConfig(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Overrides) != len(props) || cfg.Overrides[0].Why != "second look" {
		t.Errorf("config has %d overrides (first %+v), want %d, the first replaced", len(cfg.Overrides), cfg.Overrides[0], len(props))
	}
	if cfg.Learn == nil || !*cfg.Learn || !cmp.Equal(cfg.Floors["general"], []string{"get_weather"}) {
		t.Errorf("the rest of the config was lost: learn %v, floors %v", cfg.Learn, cfg.Floors)
	}
	data, _ := os.ReadFile(path)
	if !strings.Contains(string(data), "# The team's config") {
		t.Errorf("the comment was lost:\n%s", data)
	}

	// A config that does not read is left as it was.
	bad := filepath.Join(dir, "bad.yaml")
	os.WriteFile(bad, []byte("learn: true\nflors: {}\n"), 0o644)
	if err := doctor.Accept(bad, props); err == nil || !strings.Contains(err.Error(), "left as it was") {
		t.Errorf("a config with an unknown key: %v, want an error", err)
	}
	if data, _ := os.ReadFile(bad); string(data) != "learn: true\nflors: {}\n" {
		t.Errorf("the bad config changed:\n%s", data)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 2 {
		t.Errorf("files left behind: %v", entries)
	}
}

var at0 = time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)

func secs(s int) time.Duration { return time.Duration(s) * time.Second }
