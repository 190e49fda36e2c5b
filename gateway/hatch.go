package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/capbroker/capbroker/card"
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
}

// found is one result of find_capability, as the model reads it.
type found struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"input_schema,omitempty"`
	Risk        card.Risk       `json:"risk"`
	Confidence  string          `json:"confidence"`
	// Reason says what matched: the words, and the meaning when ranked
	// hybrid ("similarity 0.62").
	Reason string `json:"reason,omitempty"`
}

// heldFound is a held-back tool that matched a find_capability query.
type heldFound struct {
	Name        string    `json:"name"`
	Description string    `json:"description"`
	Risk        card.Risk `json:"risk"`
	Held        string    `json:"held"` // the kind of hold: irreversible, changed, new, distrust
	Why         string    `json:"why"`
}

func (s *session) find(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var a findArgs
	if len(req.Params.Arguments) > 0 {
		if err := json.Unmarshal(req.Params.Arguments, &a); err != nil {
			return errorResult("find_capability: arguments must be {\"query\": string, \"k\": integer}: " + err.Error()), nil
		}
	}
	if strings.TrimSpace(a.Query) == "" {
		return errorResult("find_capability: give a query: what the capability should do, in plain words"), nil
	}
	k := a.K
	if k <= 0 {
		k = s.g.opts.FindK
	}
	k = min(k, 20)
	cat := s.g.catalog()
	start := time.Now()
	rctx, note := withRankNote(ctx)
	res := cat.broker.Find(rctx, a.Query, k)
	out := struct {
		Query   string  `json:"query"`
		Reason  string  `json:"reason"`
		Matches []found `json:"matches"`
		Next    string  `json:"next,omitempty"`
		// Held are matching tools the gateway holds back, with why and
		// what releases them: held is not absent.
		Held []heldFound `json:"held,omitempty"`
	}{Query: a.Query, Reason: res.Reason, Matches: []found{}}
	var names []string
	for _, m := range res.Matches {
		if isHatch(s.mode, m.Name) {
			continue
		}
		out.Matches = append(out.Matches, found{Name: m.Name, Description: m.Description, InputSchema: m.InputSchema, Risk: m.Risk, Confidence: m.Confidence, Reason: m.Reason})
		names = append(names, m.Name)
	}
	if cat.heldBroker != nil {
		for _, m := range cat.heldBroker.Find(ctx, a.Query, k).Matches {
			if h, ok := cat.heldTool(m.Name); ok {
				out.Held = append(out.Held, heldFound{Name: m.Name, Description: m.Description, Risk: m.Risk, Held: h.Kind, Why: h.Why})
			}
		}
		switch {
		case len(out.Held) == 0:
		case len(names) == 0:
			out.Reason = fmt.Sprintf("no capability available in this session matches %q, but %d held-back tool(s) do: see held for why each is held and what releases it", a.Query, len(out.Held))
		default:
			out.Reason += fmt.Sprintf("; %d more matching tool(s) are held back: see held", len(out.Held))
		}
	}
	if len(names) > 0 {
		switch s.mode {
		case ModeCall:
			out.Next = "call one with call_capability(name, arguments)"
		case ModeAuto:
			out.Next = "these tools are now in your tool list; call them by name, or with call_capability(name, arguments) if your tool list does not show them yet"
		default:
			out.Next = "these tools are now in your tool list; call them by name"
		}
	}
	hook(ctx, hookFindSearched, s.key)
	s.mu.Lock()
	added := s.addLocked(names)
	s.finds++
	finds := s.finds
	s.mu.Unlock()
	if len(added) > 0 {
		s.share(ctx)
	}
	all := s.exposedNames(cat)
	s.g.opts.Metrics.find(len(names))
	var held []string
	for _, h := range out.Held {
		held = append(held, h.Name)
	}
	s.g.opts.Trace.Record(ctx, Event{Session: s.key, Kind: "find", Mode: string(s.mode), Query: a.Query, Names: names,
		Found: added, Held: held, Exposed: all, Reason: out.Reason, TokensFound: cat.tokens(names),
		TokensExposed: cat.tokens(all), TokensFull: cat.fullTokens, DurationMS: ms(time.Since(start)), Finds: finds,
		Ranking: note.get()})
	b, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		return nil, err
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}}, nil
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
