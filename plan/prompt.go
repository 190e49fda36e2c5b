package plan

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/capbroker/capbroker/card"
	"github.com/capbroker/capbroker/payload"
	"github.com/capbroker/capbroker/policy"
	"github.com/capbroker/capbroker/rank"
)

// SchemaName names the plan schema in provider requests.
const SchemaName = "plan"

// Defaults of [PromptOptions].
const (
	// DefaultBlockTokens bounds the "Capabilities available" block.
	DefaultBlockTokens = 3000
	// DefaultDescriptionRunes bounds each description in the block.
	DefaultDescriptionRunes = 300
)

// Prompt is what a planner sends a model: two messages and the JSON
// Schema the reply must match.
type Prompt struct {
	System     string          `json:"system"`
	User       string          `json:"user"`
	Schema     json.RawMessage `json:"schema"`
	SchemaName string          `json:"schema_name"`
	// Listed and Omitted count the capabilities in the block and those
	// left out to stay within the token budget (both 0 without a catalog).
	Listed  int `json:"listed"`
	Omitted int `json:"omitted"`
	// BlockTokens is the size of the block in tokens (0 without a catalog).
	BlockTokens int `json:"block_tokens"`
}

// PromptOptions tunes [BuildPrompt]. A nil *PromptOptions means no
// catalog: the plain prompt.
type PromptOptions struct {
	// Catalog, if it holds any card, adds the "Capabilities available"
	// block to the user message and the capabilities field to the task
	// schema. If nil or empty, the prompt is the plain one.
	Catalog *card.Catalog
	// BlockTokens bounds the block's size in tokens. If zero,
	// DefaultBlockTokens; negative means no bound.
	BlockTokens int
	// DescriptionRunes cuts each description in the block to this many
	// runes, at a word boundary. If zero, DefaultDescriptionRunes;
	// negative means no cut.
	DescriptionRunes int
	// Counter counts tokens. If nil, the o200k counter.
	Counter *payload.Counter
	// Ranker orders capabilities by relevance to the goal when they do
	// not all fit. If nil, a BM25F index over the catalog.
	Ranker policy.Ranker
}

const systemPrompt = `You are a planner. You break a goal into the few concrete tasks that agents must carry out to reach it, and you answer with the plan as JSON that matches the given schema, nothing else.

For each task give:
- id: a short identifier unique in the plan, such as "t1".
- description: what the task must achieve, in one or two sentences.
- agent_spec: the agent best suited to the task: a snake_case name, a one-sentence description of its role, and its standing instructions.
- instructions: what the agent must do for this task and what it must produce.
- depends_on: the ids of the tasks that must finish before this one starts.
- needs: each output of an earlier task that this task uses, as the id of that task and the name of the output; every task named in needs must also be in depends_on.

Keep the plan as small as the goal allows. A task never depends on itself, and dependencies never form a cycle.`

const userPlain = "Goal: %s\n\nWrite the plan for this goal."

const blockHeader = `Capabilities available (name: description). Give each task a "capabilities" list naming the capabilities its agent needs, written exactly as below; give an empty list when none fits.`

// BuildPrompt returns the planner prompt for goal. Without a catalog it
// is the plain prompt; with one, the user message gains a
// "Capabilities available" block and the task schema a capabilities
// field, and nothing else changes.
//
// The block has one "name: description" line per capability, with
// descriptions on one line and cut to [PromptOptions.DescriptionRunes].
// When every line fits in [PromptOptions.BlockTokens] they are in name
// order, so the prompt does not change with the goal. Otherwise the
// capabilities are ranked for the goal, listed best first while they
// fit, and a last line says how many were left out.
func BuildPrompt(ctx context.Context, goal string, opts *PromptOptions) (*Prompt, error) {
	goal = strings.TrimSpace(goal)
	if goal == "" {
		return nil, errors.New("building the planner prompt: empty goal")
	}
	var o PromptOptions
	if opts != nil {
		o = *opts
	}
	pr := &Prompt{System: systemPrompt, SchemaName: SchemaName}
	withCaps := o.Catalog.Len() > 0
	pr.Schema = schema(withCaps)
	if !withCaps {
		pr.User = fmt.Sprintf(userPlain, goal)
		return pr, nil
	}
	block, err := capabilityBlock(ctx, goal, &o, pr)
	if err != nil {
		return nil, fmt.Errorf("building the planner prompt: %w", err)
	}
	pr.User = fmt.Sprintf("Goal: %s\n\n%s\n\nWrite the plan for this goal.", goal, block)
	return pr, nil
}

// capabilityBlock writes the block and fills pr's counts.
func capabilityBlock(ctx context.Context, goal string, o *PromptOptions, pr *Prompt) (string, error) {
	if o.Counter == nil {
		c, err := payload.NewCounter("")
		if err != nil {
			return "", err
		}
		o.Counter = c
	}
	if o.BlockTokens == 0 {
		o.BlockTokens = DefaultBlockTokens
	}
	if o.DescriptionRunes == 0 {
		o.DescriptionRunes = DefaultDescriptionRunes
	}
	cards := o.Catalog.Cards()
	lines := make([]string, len(cards))
	for i := range cards {
		lines[i] = cards[i].Name + ": " + oneLine(cards[i].Description, o.DescriptionRunes)
	}
	// Lines are counted only as far as needed: a large catalog is mostly
	// left out, and counting is the main cost.
	cost := make([]int, len(cards))
	costOf := func(i int) int {
		if cost[i] == 0 {
			cost[i] = o.Counter.Count("\n" + lines[i])
		}
		return cost[i]
	}
	bounded := false
	if o.BlockTokens > 0 {
		total := o.Counter.Count(blockHeader)
		for i := range cards {
			if total += costOf(i); total > o.BlockTokens {
				bounded = true
				break
			}
		}
	}
	order := make([]int, len(cards))
	for i := range order {
		order[i] = i
	}
	if bounded {
		ranked, err := rankedOrder(ctx, goal, o)
		if err != nil {
			return "", err
		}
		order = ranked
	}
	used := o.Counter.Count(blockHeader)
	listed := 0
	for _, i := range order {
		if bounded && used+costOf(i) > o.BlockTokens-omittedReserve {
			break
		}
		used += costOf(i)
		listed++
	}
	// Pieces counted apart can differ from the whole by a token at each
	// seam; count the block as sent and shorten it until it fits.
	for {
		block := writeBlock(lines, order[:listed], len(cards)-listed)
		n := o.Counter.Count(block)
		if !bounded || n <= o.BlockTokens || listed == 0 {
			pr.Listed, pr.Omitted, pr.BlockTokens = listed, len(cards)-listed, n
			return block, nil
		}
		listed--
	}
}

func writeBlock(lines []string, order []int, omitted int) string {
	var b strings.Builder
	b.WriteString(blockHeader)
	for _, i := range order {
		b.WriteByte('\n')
		b.WriteString(lines[i])
	}
	if omitted > 0 {
		fmt.Fprintf(&b, "\n(%d more capabilities are not listed; the list above holds the ones most relevant to the goal.)", omitted)
	}
	return b.String()
}

// omittedReserve keeps room in a bounded block for its last line.
const omittedReserve = 30

// rankedOrder returns every card position: those the ranker matches to
// the goal first, best first, then the rest in name order.
func rankedOrder(ctx context.Context, goal string, o *PromptOptions) ([]int, error) {
	r := o.Ranker
	if r == nil {
		r = rank.New(o.Catalog.Cards(), nil)
	}
	hits, err := r.Rank(ctx, goal, o.Catalog.Len())
	if err != nil {
		return nil, fmt.Errorf("ranking capabilities for the goal: %w", err)
	}
	order := make([]int, 0, o.Catalog.Len())
	placed := make([]bool, o.Catalog.Len())
	for _, h := range hits {
		if i := o.Catalog.Index(h.Name); i >= 0 && !placed[i] {
			placed[i] = true
			order = append(order, i)
		}
	}
	for i, p := range placed {
		if !p {
			order = append(order, i)
		}
	}
	return order, nil
}

// oneLine joins s onto one line and cuts it to at most n runes (n <= 0:
// no cut) at a word boundary, marking a cut with "…".
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if n <= 0 || utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	cut := string(r[:n])
	if i := strings.LastIndexByte(cut, ' '); r[n] != ' ' && i > len(cut)/2 {
		cut = cut[:i]
	}
	return strings.TrimRight(cut, " ,;:.") + "…"
}

// obj is a JSON object that keeps its keys in order.
type obj []kv

type kv struct {
	k string
	v any
}

func (o obj) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, f := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(f.k)
		b.Write(k)
		b.WriteByte(':')
		v, err := json.Marshal(f.v)
		if err != nil {
			return nil, err
		}
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

func str(desc string) obj { return obj{{"type", "string"}, {"description", desc}} }

func strArray(desc string) obj {
	return obj{{"type", "array"}, {"description", desc}, {"items", obj{{"type", "string"}}}}
}

// schema returns the strict JSON Schema of a plan, with or without the
// capabilities field. Every property is required and no other is
// allowed, as OpenAI's strict structured output demands.
func schema(withCaps bool) json.RawMessage {
	taskProps := obj{
		{"id", str("Short identifier, unique in the plan, such as t1.")},
		{"description", str("What the task must achieve.")},
		{"agent_spec", obj{
			{"type", "object"},
			{"description", "The agent best suited to the task."},
			{"properties", obj{
				{"name", str("snake_case name of the agent.")},
				{"description", str("One sentence on the agent's role.")},
				{"instructions", str("The agent's standing instructions.")},
			}},
			{"required", []string{"name", "description", "instructions"}},
			{"additionalProperties", false},
		}},
		{"instructions", str("What the agent must do for this task and what it must produce.")},
		{"depends_on", strArray("Ids of the tasks that must finish first.")},
		{"needs", obj{
			{"type", "array"},
			{"description", "Outputs of earlier tasks this task uses; each task named here is also in depends_on."},
			{"items", obj{
				{"type", "object"},
				{"properties", obj{
					{"task", str("Id of the task that produces the output.")},
					{"output", str("Name of the output.")},
				}},
				{"required", []string{"task", "output"}},
				{"additionalProperties", false},
			}},
		}},
	}
	required := []string{"id", "description", "agent_spec", "instructions", "depends_on", "needs"}
	if withCaps {
		taskProps = append(taskProps, kv{"capabilities", obj{{"type", "array"}, {"items", obj{{"type", "string"}}}}})
		required = append(required, "capabilities")
	}
	s := obj{
		{"type", "object"},
		{"properties", obj{
			{"goal", str("The goal, restated in one sentence.")},
			{"tasks", obj{
				{"type", "array"},
				{"items", obj{
					{"type", "object"},
					{"properties", taskProps},
					{"required", required},
					{"additionalProperties", false},
				}},
			}},
		}},
		{"required", []string{"goal", "tasks"}},
		{"additionalProperties", false},
	}
	b, err := json.Marshal(s)
	if err != nil {
		panic(err) // static data
	}
	return b
}

// Schema returns the strict JSON Schema of a plan, with the capabilities
// field when withCapabilities is set.
func Schema(withCapabilities bool) json.RawMessage { return schema(withCapabilities) }
