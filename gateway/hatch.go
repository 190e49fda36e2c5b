package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/capbroker/capbroker/card"
	"github.com/capbroker/capbroker/payload"
	"github.com/capbroker/capbroker/policy"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// CallName is the tool that calls a found capability in call and auto
// modes.
const CallName = "call_capability"
const callDescription = "Call a capability that find_capability returned. Give its name and its arguments (an object matching the input schema find_capability showed)."

const callSchema = `{"type":"object","properties":{"name":{"type":"string","description":"The capability's name, as find_capability returned it."},"arguments":{"type":"object","description":"The arguments, matching its input schema."}},"required":["name"]}`

// isHatch reports whether name is one of the gateway's own tools in mode.
func isHatch(mode Mode, name string) bool {
	return mode != ModeAll && (name == policy.HatchName || (mode.callsThrough() && name == CallName))
}

// findArgs are find_capability's arguments.
type findArgs struct {
	Query string `json:"query"`
	K     int    `json:"k"`
	// Task names the plan task the agent is on (plan-aware sessions; see
	// [session.enterTask]).
	Task string `json:"task"`
}

// found is one result of find_capability, as the model reads it: compact,
// so a find costs little (see [findAnswer]).
type found struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Confidence  string          `json:"confidence"`
	Risk        card.Risk       `json:"risk,omitempty"` // only when irreversible
	InputSchema json.RawMessage `json:"input_schema,omitempty"`
	// Reason says, in short, what matched: the words, the step of the
	// task it serves, and the meaning when ranked hybrid ("similarity
	// 0.62").
	Reason string `json:"reason,omitempty"`
}

// heldFound is a held-back tool that matched a find_capability query: one
// line, what holds it and what releases it.
type heldFound struct {
	Name string `json:"name"`
	Held string `json:"held"` // the kind of hold: irreversible, changed, new, distrust
	Why  string `json:"why"`
}

// findAnswer is find_capability's answer.
type findAnswer struct {
	Matches []found `json:"matches"`
	// Held are matching tools the gateway holds back, with what releases
	// them: held is not absent.
	Held   []heldFound `json:"held,omitempty"`
	Reason string      `json:"reason,omitempty"`
	Next   string      `json:"next,omitempty"`
	// Down names the servers the session could use that are not
	// connected: their tools may be missing (see down.go). Absent when
	// all are up.
	Down *downAnswer `json:"down,omitempty"`
}

// DefaultFindK is how many matches a find_capability answer holds by
// default: a compact match costs some 40 tokens, and on the examples'
// held-out tasks eight reach 82.8% of the tools needed where five reach
// 79.8%.
const DefaultFindK = 8

// maxHeld is how many matching held tools a find names: each says what
// releases it, and one release serves them all.
const maxHeld = 4

// maxSchemas is how many confident matches of a one-step query come
// with their input schema.
const maxSchemas = 3

// DefaultFindBudget is the most tokens a find_capability answer takes
// (o200k), unless Options.FindBudget says otherwise: matches past it lose
// their input schema, then their place (they stay callable by name).
const DefaultFindBudget = 800

// findK is how many matches a find returns for query: k when the agent
// asked for some, else Options.FindK, and more for a task of several
// steps (two a step and one more, at most 12), so one find answers the
// whole task.
func (g *Gateway) findK(query string, k int) int {
	if k > 0 {
		return min(k, 20)
	}
	k = g.opts.FindK
	if n := len(policy.Aspects(query)); n > 1 {
		k = max(k, min(2*n+1, 12))
	}
	return k
}

func (s *session) find(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var a findArgs
	if len(req.Params.Arguments) > 0 {
		if err := json.Unmarshal(req.Params.Arguments, &a); err != nil {
			return errorResult("find_capability: arguments must be {\"query\": string, \"k\": integer}: " + err.Error()), nil
		}
	}
	var taskNote string
	if a.Task != "" {
		note, err := s.enterTask(ctx, a.Task)
		if err != nil {
			return errorResult("find_capability: " + err.Error()), nil
		}
		taskNote = note
		if strings.TrimSpace(a.Query) == "" {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: taskNote}}}, nil
		}
	}
	if strings.TrimSpace(a.Query) == "" {
		return errorResult("find_capability: give a query: what the capability should do, in plain words"), nil
	}
	k := s.g.findK(a.Query, a.K)
	cat := s.catalog()
	start := time.Now()
	rctx, note := withRankNote(ctx)
	res := cat.broker.Find(rctx, a.Query, k)
	matches := s.rankPlanFirst(res.Matches)
	var cands []policy.Capability
	for _, m := range matches {
		if !isHatch(s.mode, m.Name) {
			cands = append(cands, m)
		}
	}
	var held []Held
	if cat.heldBroker != nil {
		for _, m := range cat.heldBroker.Find(ctx, a.Query, k).Matches {
			if h, ok := cat.heldTool(m.Name); ok {
				held = append(held, *h)
			}
		}
	}
	out := s.g.findAnswer(cat, a.Query, res.Reason, cands, held, s.downServers(), s.mode, s.g.findBudget())
	if taskNote != "" {
		out.Reason = taskNote + "; " + out.Reason
	}
	var names, confident []string
	for _, m := range out.Matches {
		names = append(names, m.Name)
		if m.Confidence != policy.Low {
			confident = append(confident, m.Name)
		}
	}
	hook(ctx, hookFindSearched, s.key)
	s.mu.Lock()
	added := s.addLocked(confident)
	s.finds++
	finds := s.finds
	s.mu.Unlock()
	if len(added) > 0 {
		s.share(ctx)
	}
	all := s.exposedNames(cat)
	s.g.opts.Metrics.find(len(names))
	var heldNames []string
	for _, h := range out.Held {
		heldNames = append(heldNames, h.Name)
	}
	b, err := json.Marshal(out)
	if err != nil {
		return nil, err
	}
	s.g.opts.Trace.Record(ctx, Event{Session: s.key, Kind: "find", Mode: string(s.mode), Query: a.Query, Names: names,
		Found: added, Held: heldNames, Exposed: all, Reason: out.Reason, TokensFound: countText(string(b)),
		TokensExposed: cat.tokens(all), TokensFull: cat.fullTokens, DurationMS: ms(time.Since(start)), Finds: finds,
		Ranking: note.get()})
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}}, nil
}

func (g *Gateway) findBudget() int {
	if g.opts.FindBudget > 0 {
		return g.opts.FindBudget
	}
	return DefaultFindBudget
}

// findAnswer builds find_capability's answer within budget tokens:
// matches best first, each with a one-line description, its confidence
// and a short reason; the input schema only for confident matches (high
// or medium: those join the session's list; a low one stays callable by
// name, and a call with bad arguments is told its schema). When the
// answer outgrows the budget, the last matches lose their schema, then
// their place; the held tools come one line each. down (nil when every
// server is up) names the servers not connected, their errors dropped
// first when over budget.
func (g *Gateway) findAnswer(cat *catalog, query, reason string, matches []policy.Capability, held []Held, down *downAnswer, mode Mode, budget int) findAnswer {
	out := findAnswer{Matches: []found{}, Down: down}
	for _, h := range held {
		if len(out.Held) == maxHeld {
			break
		}
		out.Held = append(out.Held, heldFound{Name: h.key(), Held: h.Kind, Why: heldWhy(&h)})
	}
	// Schemas for the first confident matches only, one a step of the
	// task and at least maxSchemas: the others join the list too, and a
	// call with bad arguments is told its schema.
	schemas := max(maxSchemas, len(policy.Aspects(query)))
	confident := 0
	for _, m := range matches {
		f := found{Name: m.Name, Description: oneLine(m.Description, 160), Confidence: m.Confidence, Reason: shortReason(m.Reason)}
		if m.Risk == card.RiskIrreversible {
			f.Risk = m.Risk
		}
		if m.Confidence != policy.Low {
			confident++
			switch e, ok := cat.tools[m.Name]; {
			case confident > schemas: // listed, without its schema here
			case ok:
				f.InputSchema = compactSchemaJSON(e)
			default:
				f.InputSchema = m.InputSchema
			}
		}
		out.Matches = append(out.Matches, f)
	}
	switch {
	case len(out.Matches) == 0 && len(out.Held) > 0:
		out.Reason = fmt.Sprintf("nothing available in this session matches %q, but %d held-back tool(s) do: see held for why and what releases each", query, len(out.Held))
	case len(out.Matches) == 0:
		out.Reason = reason
	case len(out.Held) > 0:
		out.Reason = fmt.Sprintf("%d more matching tool(s) are held back: see held", len(out.Held))
	}
	if len(out.Matches) > 0 {
		switch mode {
		case ModeCall:
			out.Next = "call one with call_capability(name, arguments)"
		case ModeAuto:
			out.Next = "call one by name, or with call_capability(name, arguments); the confident ones are now in your tool list"
		default:
			out.Next = "call one by name; the confident ones are now in your tool list"
		}
	}
	size := func() int {
		b, _ := json.Marshal(out)
		return countText(string(b))
	}
	// Over budget: reasons go first, then schemas from the last match up
	// (a confident match without one is still listed and callable; a call
	// with bad arguments is told its schema), then descriptions shrink,
	// then low matches go from the last, then any match past the first:
	// a name the agent sees is worth more than anything said about it.
	for i := len(out.Matches) - 1; i >= 0 && size() > budget; i-- {
		out.Matches[i].Reason = ""
	}
	if out.Down != nil && size() > budget {
		out.Down.shorten()
	}
	for i := len(out.Matches) - 1; i >= 0 && size() > budget; i-- {
		out.Matches[i].InputSchema = nil
	}
	for i := len(out.Matches) - 1; i >= 0 && size() > budget; i-- {
		out.Matches[i].Description = oneLine(out.Matches[i].Description, 60)
	}
	for i := len(out.Matches) - 1; i > 0 && size() > budget; i-- {
		if out.Matches[i].Confidence == policy.Low {
			out.Matches = slices.Delete(out.Matches, i, i+1)
		}
	}
	for len(out.Matches) > 1 && size() > budget {
		out.Matches = out.Matches[:len(out.Matches)-1]
	}
	for len(out.Held) > 0 && size() > budget {
		out.Held = out.Held[:len(out.Held)-1]
	}
	return out
}

// heldWhy says in one line what holds h and what releases it.
func heldWhy(h *Held) string {
	what := h.Kind
	switch h.Kind {
	case HeldIrreversible:
		what = "irreversible"
	case HeldChanged:
		what = "changed since approved"
	case HeldNew:
		what = "never seen before"
	case HeldDistrust:
		what = "its pins were lost or cannot be read"
	}
	if h.Release == "" {
		return what
	}
	return what + "; released by " + h.Release
}

// oneLine is the first sentence or line of a description, at most n
// bytes.
func oneLine(desc string, n int) string {
	d := strings.TrimSpace(desc)
	if i := strings.IndexAny(d, "\n\r"); i >= 0 {
		d = strings.TrimSpace(d[:i])
	}
	if i := strings.Index(d, ". "); i >= 0 && i+1 <= n {
		d = d[:i+1]
	}
	return clip(d, n)
}

var (
	reasonFields   = regexp.MustCompile(` in [a-z_]+(\+[a-z_]+)*`)
	reasonCoverage = regexp.MustCompile(`(coverage|meaning) \d+%(, )?`)
)

// shortReason keeps what a model uses of a match's reason: the step it
// serves, the words matched, the similarity, what past sessions asked;
// not where each word matched nor the shares.
func shortReason(r string) string {
	if strings.HasPrefix(r, "weak match (") {
		if i := strings.Index(r, "): "); i >= 0 {
			r = r[i+3:] // its confidence, low, says as much
		}
	}
	r = reasonFields.ReplaceAllString(r, "")
	r = reasonCoverage.ReplaceAllString(r, "")
	r = strings.ReplaceAll(r, " ()", "")
	r = strings.ReplaceAll(r, "matched ", "")
	return clip(strings.TrimSpace(r), 140)
}

// countText counts the tokens of s as the catalog counts definitions
// (o200k).
func countText(s string) int {
	counterOnce.Do(func() { counter, _ = payload.NewCounter("") })
	if counter == nil {
		return 0
	}
	return counter.Count(s)
}

func (s *session) callCapability(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var a struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	}
	if len(req.Params.Arguments) > 0 {
		if err := json.Unmarshal(req.Params.Arguments, &a); err != nil {
			return errorResult("call_capability: arguments must be {\"name\": string, \"arguments\": object}: " + err.Error()), nil
		}
	}
	if a.Name == "" {
		return errorResult("call_capability: give the name of a capability find_capability returned"), nil
	}
	if isHatch(s.mode, a.Name) {
		return errorResult(fmt.Sprintf("call_capability calls the tools find_capability finds; call %s itself directly", a.Name)), nil
	}
	s.mu.Lock()
	ok := s.exposed[a.Name]
	s.mu.Unlock()
	if ok {
		return s.g.callTool(ctx, s, req.Session, a.Name, a.Arguments, req.Params.Meta, "")
	}
	return s.callByName(ctx, req.Session, a.Name, a.Arguments, req.Params.Meta)
}

// compactSchemaJSON is e's input schema as a model needs it to call: no
// "$schema", "additionalProperties": false or titles, and descriptions of
// at most 100 bytes.
func compactSchemaJSON(e *toolEntry) json.RawMessage {
	b, err := json.Marshal(listedTool(e).InputSchema)
	if err != nil {
		return json.RawMessage(`{"type":"object"}`)
	}
	var v any
	if json.Unmarshal(b, &v) != nil {
		return b
	}
	v = trimSchema(v, 0)
	out, err := json.Marshal(v)
	if err != nil {
		return b
	}
	return out
}

func trimSchema(v any, depth int) any {
	switch x := v.(type) {
	case map[string]any:
		delete(x, "$schema")
		delete(x, "title")
		if ap, ok := x["additionalProperties"].(bool); ok && !ap {
			delete(x, "additionalProperties")
		}
		if d, ok := x["description"].(string); ok {
			x["description"] = oneLine(d, 100)
		}
		for k, c := range x {
			if depth < 8 {
				x[k] = trimSchema(c, depth+1)
			}
		}
	case []any:
		for i, c := range x {
			if depth < 8 {
				x[i] = trimSchema(c, depth+1)
			}
		}
	}
	return v
}
