package plan

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/capbroker/capbroker/card"
	"github.com/capbroker/capbroker/payload"
	"github.com/capbroker/capbroker/rank"
	"github.com/google/go-cmp/cmp"
)

const testGoal = "Prepare the launch of our budgeting app: learn from customer interviews, name the app, digitize last year's invoices and chart sales."

func builtinCatalog(t testing.TB) *card.Catalog {
	t.Helper()
	cat, warns := card.NewCatalog(Builtin())
	if len(warns) > 0 {
		t.Fatalf("builtin catalog warnings: %v", warns)
	}
	return cat
}

// render shows a prompt as a golden file: the messages, then the schema
// indented.
func render(t *testing.T, pr *Prompt) []byte {
	t.Helper()
	var schema bytes.Buffer
	if err := json.Indent(&schema, pr.Schema, "", "  "); err != nil {
		t.Fatal(err)
	}
	return fmt.Appendf(nil, "-- system --\n%s\n-- user --\n%s\n-- schema %s --\n%s\n", pr.System, pr.User, pr.SchemaName, schema.Bytes())
}

func TestPromptGolden(t *testing.T) {
	ctx := context.Background()
	plain, err := BuildPrompt(ctx, testGoal, nil)
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "prompt.plain.golden", render(t, plain))
	withCat, err := BuildPrompt(ctx, testGoal, &PromptOptions{Catalog: builtinCatalog(t)})
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "prompt.catalog.golden", render(t, withCat))
	if withCat.Listed != 8 || withCat.Omitted != 0 {
		t.Errorf("listed %d, omitted %d; want all 8 listed", withCat.Listed, withCat.Omitted)
	}
}

func TestPromptNoRegistry(t *testing.T) {
	ctx := context.Background()
	plain, err := BuildPrompt(ctx, testGoal, nil)
	if err != nil {
		t.Fatal(err)
	}
	empty, _ := card.NewCatalog(nil)
	for name, opts := range map[string]*PromptOptions{
		"zero options":  {},
		"empty catalog": {Catalog: empty, BlockTokens: 10},
	} {
		got, err := BuildPrompt(ctx, testGoal, opts)
		if err != nil {
			t.Fatal(err)
		}
		if got.System != plain.System || got.User != plain.User || !bytes.Equal(got.Schema, plain.Schema) || got.SchemaName != plain.SchemaName {
			t.Errorf("%s: prompt differs from the plain one:\n%s", name, cmp.Diff(render(t, plain), render(t, got)))
		}
	}
	if strings.Contains(plain.User, "Capabilities") || bytes.Contains(plain.Schema, []byte("capabilities")) {
		t.Error("the plain prompt mentions capabilities")
	}
	if !bytes.Equal(plain.Schema, Schema(false)) {
		t.Error("plain schema differs from Schema(false)")
	}

	// With a catalog, the only changes are the block and the field.
	withCat, err := BuildPrompt(ctx, testGoal, &PromptOptions{Catalog: builtinCatalog(t)})
	if err != nil {
		t.Fatal(err)
	}
	if withCat.System != plain.System {
		t.Error("the catalog changed the system message")
	}
	start := strings.Index(withCat.User, "Capabilities available")
	end := strings.Index(withCat.User, "\n\nWrite the plan")
	if start < 0 || end < start {
		t.Fatalf("no block in\n%s", withCat.User)
	}
	if stripped := withCat.User[:start] + withCat.User[end+2:]; stripped != plain.User {
		t.Errorf("user message without the block differs from the plain one:\n%s", cmp.Diff(plain.User, stripped))
	}
	var s map[string]any
	if err := json.Unmarshal(withCat.Schema, &s); err != nil {
		t.Fatal(err)
	}
	task := s["properties"].(map[string]any)["tasks"].(map[string]any)["items"].(map[string]any)
	caps := task["properties"].(map[string]any)["capabilities"]
	if diff := cmp.Diff(map[string]any{"type": "array", "items": map[string]any{"type": "string"}}, caps); diff != "" {
		t.Errorf("capabilities property (-want +got):\n%s", diff)
	}
	delete(task["properties"].(map[string]any), "capabilities")
	req := task["required"].([]any)
	if req[len(req)-1] != "capabilities" {
		t.Errorf("capabilities not required last: %v", req)
	}
	task["required"] = req[:len(req)-1]
	var p map[string]any
	if err := json.Unmarshal(plain.Schema, &p); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(p, s); diff != "" {
		t.Errorf("schema without capabilities differs from the plain one:\n%s", diff)
	}
}

func TestPromptEmptyGoal(t *testing.T) {
	if _, err := BuildPrompt(context.Background(), " \n", nil); err == nil || !strings.Contains(err.Error(), "empty goal") {
		t.Errorf("err = %v, want empty goal", err)
	}
}

// bigCatalog returns n filler cards plus the builtin ones.
func bigCatalog(t testing.TB, n int) *card.Catalog {
	cards := Builtin()
	topics := []string{"invoice", "calendar", "weather", "github", "jira", "slack", "stock", "email", "maps", "music"}
	verbs := []string{"list", "get", "create", "update", "delete", "search", "export"}
	for i := 0; i < n; i++ {
		topic, verb := topics[i%len(topics)], verbs[(i/len(topics))%len(verbs)]
		cards = append(cards, card.Card{Name: fmt.Sprintf("%s_%s_%d", verb, topic, i), Kind: card.KindTool, Source: "filler",
			Description: fmt.Sprintf("%s %s records in the %s service, with paging, filters by owner, date range and status, and the fields the caller selects.", verb, topic, topic)})
	}
	cat, _ := card.NewCatalog(cards)
	return cat
}

func TestPromptBudget(t *testing.T) {
	ctx := context.Background()
	cat := bigCatalog(t, 400)
	counter, err := payload.NewCounter("")
	if err != nil {
		t.Fatal(err)
	}
	const budget = 600
	goal := "Summarize the customer interview transcripts"
	pr, err := BuildPrompt(ctx, goal, &PromptOptions{Catalog: cat, BlockTokens: budget, Counter: counter})
	if err != nil {
		t.Fatal(err)
	}
	start := strings.Index(pr.User, "Capabilities available")
	end := strings.Index(pr.User, "\n\nWrite the plan")
	block := pr.User[start:end]
	if got := counter.Count(block); got > budget || got != pr.BlockTokens {
		t.Errorf("block is %d tokens (reported %d), budget %d", got, pr.BlockTokens, budget)
	}
	if pr.Listed+pr.Omitted != cat.Len() || pr.Omitted == 0 || pr.Listed < 5 {
		t.Errorf("listed %d + omitted %d, catalog %d", pr.Listed, pr.Omitted, cat.Len())
	}
	lines := strings.Split(block, "\n")
	if !strings.HasPrefix(lines[1], "summarization: ") {
		t.Errorf("first listed is %q, want the top-ranked summarization", lines[1])
	}
	if want := fmt.Sprintf("(%d more capabilities are not listed", pr.Omitted); !strings.HasPrefix(lines[len(lines)-1], want) {
		t.Errorf("last line %q, want it to start %q", lines[len(lines)-1], want)
	}
	if len(lines)-2 != pr.Listed {
		t.Errorf("%d capability lines, Listed says %d", len(lines)-2, pr.Listed)
	}
	// Deterministic.
	again, _ := BuildPrompt(ctx, goal, &PromptOptions{Catalog: cat, BlockTokens: budget, Counter: counter})
	if again.User != pr.User {
		t.Error("two builds differ")
	}
	// Unbounded: everything, in name order.
	all, _ := BuildPrompt(ctx, goal, &PromptOptions{Catalog: cat, BlockTokens: -1})
	if all.Listed != cat.Len() || all.Omitted != 0 {
		t.Errorf("unbounded: listed %d of %d", all.Listed, cat.Len())
	}
}

func TestOneLine(t *testing.T) {
	tests := []struct {
		in   string
		n    int
		want string
	}{
		{"Search  the\nweb.\r\n  Fast.", 0, "Search the web. Fast."},
		{"Search the web for pages", 14, "Search the web…"},
		{"Search the web for pages", -1, "Search the web for pages"},
		{"Anticonstitutionnellement", 10, "Anticonsti…"},
	}
	for _, tt := range tests {
		if got := oneLine(tt.in, tt.n); got != tt.want {
			t.Errorf("oneLine(%q, %d) = %q, want %q", tt.in, tt.n, got, tt.want)
		}
	}
}

func BenchmarkBuildPrompt(b *testing.B) {
	ctx := context.Background()
	cat := bigCatalog(b, 2000)
	counter, _ := payload.NewCounter("")
	b.Run("builtin", func(b *testing.B) {
		small := builtinCatalog(b)
		for b.Loop() {
			if _, err := BuildPrompt(ctx, testGoal, &PromptOptions{Catalog: small, Counter: counter}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("2008-cards", func(b *testing.B) {
		for b.Loop() {
			if _, err := BuildPrompt(ctx, testGoal, &PromptOptions{Catalog: cat, Counter: counter}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("2008-cards-shared-index", func(b *testing.B) {
		ix := rank.New(cat.Cards(), nil)
		for b.Loop() {
			if _, err := BuildPrompt(ctx, testGoal, &PromptOptions{Catalog: cat, Counter: counter, Ranker: ix}); err != nil {
				b.Fatal(err)
			}
		}
	})
}
