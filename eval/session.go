package eval

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"unicode"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/capbroker/capbroker/payload"
	"github.com/capbroker/capbroker/steps"
)

// ModeSession plays a scripted agent through the gateway (see
// [RunSession]).
const ModeSession = "session"

// ClientPrefix is the prefix Claude Code gives the tools of an MCP server
// it names "capbroker": the session eval's agent also calls tools by the
// names it saw with it.
const ClientPrefix = "mcp__capbroker__"

// The gateway's own tools the agent uses.
const (
	findTool = "find_capability"
	callTool = "call_capability"
)

// SessionTool is one upstream tool as the session eval knows it.
type SessionTool struct {
	// Name is the catalog name, as gold names it: the tool's own name, or
	// server__name when two servers offer it.
	Name string
	// Server is the upstream server offering it; Upstream its name there.
	Server, Upstream string
	// Gateway is the name the gateway lists it by (server__tool).
	Gateway string
	// InputSchema is its input schema as the upstream lists it.
	InputSchema json.RawMessage
	// Canned reports that the upstream answers every call with
	// [CannedResult] (a [NewToolServer]): a call ran when that text comes
	// back. Otherwise a call ran when it is not an error.
	Canned bool
}

// SessionOptions configures [RunSession].
type SessionOptions struct {
	// Transport names the transport in the report ("http", "stdio").
	Transport string
	// Turns is the length of the session over which tokens are carried.
	// If zero, 10.
	Turns int
	// FullTokens are the tokens of the full tool list, every upstream's
	// tools as the upstreams list them (tools/list), what a client without
	// the gateway carries each turn.
	FullTokens int
	// Counter counts tokens. If nil, o200k.
	Counter *payload.Counter
	// Filter and Limit choose the queries as in [Options].
	Filter func(*Query) bool
	Limit  int
	// Arguments gives the arguments of a gold tool's call for a query
	// (by query ID, then catalog name); a call without them sends a
	// placeholder for each required property.
	Arguments map[string]map[string]json.RawMessage
}

// Connector opens a new MCP client session to the gateway: a new agent.
type Connector func(ctx context.Context) (*mcp.ClientSession, error)

// Ratio is a count of successes out of a total. Calls the gateway held
// back (a tool not allowed: irreversible, changed since approved...) are
// counted in Held and left out of OK and Total, which count the calls of
// allowed tools.
type Ratio struct {
	OK    int `json:"ok"`
	Total int `json:"total"`
	Held  int `json:"held,omitempty"`
}

// Share returns OK/Total, or 0 when Total is 0.
func (r Ratio) Share() float64 {
	if r.Total == 0 {
		return 0
	}
	return float64(r.OK) / float64(r.Total)
}

func (r *Ratio) add(ok bool) {
	r.Total++
	if ok {
		r.OK++
	}
}

func (r Ratio) String() string {
	s := "-"
	if r.Total > 0 {
		s = fmt.Sprintf("%.1f%% (%d of %d)", 100*r.Share(), r.OK, r.Total)
	}
	if r.Held > 0 {
		s += fmt.Sprintf(" +%d held", r.Held)
	}
	return s
}

// outcome is what became of one call.
type callOutcome int

const (
	callFailed callOutcome = iota
	callRan
	// callHeld: the gateway named the tool and held it back.
	callHeld
)

func (r *Ratio) count(o callOutcome) {
	if o == callHeld {
		r.Held++
		return
	}
	r.add(o == callRan)
}

// SessionReport is what the scripted agent lived through, over every
// scored query. Reach figures are micro averages over gold slots: the
// share of slots one of whose tools the agent had been shown.
type SessionReport struct {
	Mode      string `json:"mode"`
	Transport string `json:"transport"`
	Queries   int    `json:"queries"`
	Tools     int    `json:"tools"`
	Slots     int    `json:"slots"`
	// UnknownGold counts queries left out because a gold slot names no
	// tool of the upstreams.
	UnknownGold int `json:"unknown_gold,omitempty"`
	// ReachList is the reach after the first tools/list; ReachFind[i]
	// after i+1 finds (a query with fewer needs keeps its last figure),
	// ReachFirstFind (ReachFind[0]: the task's own words) and ReachAll
	// after every find.
	ReachList      float64   `json:"reach_list"`
	ReachFirstFind float64   `json:"reach_first_find"`
	ReachAll       float64   `json:"reach_all_finds"`
	ReachFind      []float64 `json:"reach_after_find"`
	// Finds is the number of find_capability calls; FindTokens the
	// tokens of their answers (p50, max, mean).
	Finds      int     `json:"finds"`
	FindP50    int     `json:"find_tokens_p50"`
	FindMax    int     `json:"find_tokens_max"`
	FindMean   float64 `json:"find_tokens_mean"`
	ListTokens float64 `json:"list_tokens_mean"`
	// FullTokens are the full list's tokens; Turns the session's length;
	// CarriedFirst and CarriedLast the mean tokens carried at the first
	// and last turn (the first list plus the find answers so far);
	// Saving is 1 - carried/full summed over every turn of every query.
	FullTokens   int     `json:"full_tokens"`
	Turns        int     `json:"turns"`
	CarriedFirst float64 `json:"carried_first_turn"`
	CarriedLast  float64 `json:"carried_last_turn"`
	Saving       float64 `json:"saving"`
	// Calls of gold tools: Seen by the name the agent saw (direct in
	// the first list, through call_capability otherwise), Unseen by the
	// gateway's exact name through call_capability and UnseenDirect with
	// tools/call; Forgiving the name variants (bare, client prefix, case,
	// separator) through call_capability, each also counted alone, and
	// Resolved the share of those the gateway took for the right tool
	// (it ran, or was held back by name).
	Seen         Ratio            `json:"calls_seen"`
	Unseen       Ratio            `json:"calls_unseen"`
	UnseenDirect Ratio            `json:"calls_unseen_direct"`
	Forgiving    Ratio            `json:"forgiving"`
	Resolved     Ratio            `json:"forgiving_resolved"`
	Variants     map[string]Ratio `json:"forgiving_by_variant"`
	// Failures holds up to three answers of each kind of failed call.
	Failures map[string][]string `json:"failures,omitempty"`
}

// Name variants the agent tries.
const (
	VariantBare   = "bare"
	VariantPrefix = "prefix"
	VariantCase   = "case"
	VariantSep    = "separator"
)

// RunSession plays a scripted agent that behaves like Claude Code
// through the gateway connect reaches, once per query: it starts with no
// task and ignores notifications/tools/list_changed; lists the tools;
// asks find_capability once per need (the task's own words, then each
// step's, as package steps splits it); calls each gold tool it was shown
// by the name it saw (directly when the first list had it, else through
// call_capability), and each gold tool it was never shown by the
// gateway's exact name (through call_capability and with tools/call);
// and calls each gold tool by the forgiving variants of its name.
func RunSession(ctx context.Context, connect Connector, tools []SessionTool, queries []Query, opts *SessionOptions) (*SessionReport, error) {
	if opts == nil {
		opts = &SessionOptions{}
	}
	turns := opts.Turns
	if turns == 0 {
		turns = 10
	}
	if turns < 1 {
		return nil, fmt.Errorf("turns %d: want at least 1", turns)
	}
	counter := opts.Counter
	if counter == nil {
		var err error
		if counter, err = payload.NewCounter(payload.O200k); err != nil {
			return nil, err
		}
	}
	if len(tools) == 0 {
		return nil, errors.New("no upstream tools")
	}
	cat := newSessionCatalog(tools)
	rep0, scored, err := scoredSessionQueries(cat, queries, opts)
	if err != nil {
		return nil, err
	}
	rep := &SessionReport{Mode: ModeSession, Transport: opts.Transport, Tools: len(tools), Turns: turns,
		FullTokens: opts.FullTokens, UnknownGold: rep0, Variants: map[string]Ratio{}, Failures: map[string][]string{}}
	a := &agent{cat: cat, counter: counter, rep: rep, args: opts.Arguments}
	var findToks []int
	var listSum, carriedFirst, carriedLast, carried, full float64
	var reachList, reachAll int
	var reachFind []int
	for _, q := range scored {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		out, err := a.play(ctx, connect, q)
		if err != nil {
			return nil, fmt.Errorf("query %s: %w", q.ID, err)
		}
		slots := len(q.Slots())
		rep.Slots += slots
		reachList += out.reachList
		for i, n := range out.reachFind {
			for len(reachFind) <= i {
				// Earlier queries had fewer finds: they keep their last.
				reachFind = append(reachFind, 0)
			}
			reachFind[i] += n
		}
		last := out.reachList
		if len(out.reachFind) > 0 {
			last = out.reachFind[len(out.reachFind)-1]
		}
		reachAll += last
		findToks = append(findToks, out.findTokens...)
		listSum += float64(out.listTokens)
		c := out.listTokens
		for t := 1; t <= turns; t++ {
			if t <= len(out.findTokens) {
				c += out.findTokens[t-1]
			}
			if t == 1 {
				carriedFirst += float64(c)
			}
			carried += float64(c)
		}
		carriedLast += float64(c)
		full += float64(turns * opts.FullTokens)
		rep.Queries++
		a.pad = append(a.pad, padEntry{n: len(out.reachFind), last: last})
	}
	// Fill the reach after i finds for queries with fewer than i+1 finds.
	for i := range reachFind {
		for _, p := range a.pad {
			if p.n <= i {
				reachFind[i] += p.last
			}
		}
	}
	slotsF := float64(max(rep.Slots, 1))
	n := float64(max(rep.Queries, 1))
	rep.ReachList = float64(reachList) / slotsF
	rep.ReachAll = float64(reachAll) / slotsF
	for _, r := range reachFind {
		rep.ReachFind = append(rep.ReachFind, float64(r)/slotsF)
	}
	if len(rep.ReachFind) > 0 {
		rep.ReachFirstFind = rep.ReachFind[0]
	}
	rep.Finds = len(findToks)
	if len(findToks) > 0 {
		sort.Ints(findToks)
		rep.FindP50 = findToks[(len(findToks)-1)/2]
		rep.FindMax = findToks[len(findToks)-1]
		sum := 0
		for _, t := range findToks {
			sum += t
		}
		rep.FindMean = float64(sum) / float64(len(findToks))
	}
	rep.ListTokens = listSum / n
	rep.CarriedFirst = carriedFirst / n
	rep.CarriedLast = carriedLast / n
	if full > 0 {
		rep.Saving = 1 - carried/full
	}
	if len(rep.Failures) == 0 {
		rep.Failures = nil
	}
	return rep, nil
}

type padEntry struct{ n, last int }

// sessionCatalog finds upstream tools by any name the gateway or the
// agent uses.
type sessionCatalog struct {
	byName    map[string]*SessionTool
	byGateway map[string]*SessionTool
	byBare    map[string][]*SessionTool
}

func newSessionCatalog(tools []SessionTool) *sessionCatalog {
	c := &sessionCatalog{byName: map[string]*SessionTool{}, byGateway: map[string]*SessionTool{}, byBare: map[string][]*SessionTool{}}
	for i := range tools {
		t := &tools[i]
		c.byName[t.Name] = t
		c.byGateway[t.Gateway] = t
		c.byBare[t.Upstream] = append(c.byBare[t.Upstream], t)
	}
	return c
}

// lookup returns the tool a name the gateway showed stands for: its
// listed name, with the client's prefix or without, or the bare upstream
// name when one server offers it.
func (c *sessionCatalog) lookup(name string) *SessionTool {
	name = strings.TrimPrefix(name, ClientPrefix)
	if t := c.byGateway[name]; t != nil {
		return t
	}
	if ts := c.byBare[name]; len(ts) == 1 {
		return ts[0]
	}
	return nil
}

// scoredSessionQueries chooses the queries as [Run] does and leaves out
// those whose gold names no upstream tool.
func scoredSessionQueries(c *sessionCatalog, queries []Query, opts *SessionOptions) (int, []*Query, error) {
	var scored []*Query
	chosen := chooseQueries(queries, opts.Filter, opts.Limit)
	selected, unknown := len(chosen), 0
	for _, q := range chosen {
		ok := true
		for _, alts := range q.Slots() {
			if !slices.ContainsFunc(alts, func(a string) bool { return c.byName[a] != nil }) {
				ok = false
			}
		}
		if !ok {
			unknown++
			continue
		}
		scored = append(scored, q)
	}
	if len(scored) == 0 {
		return 0, nil, fmt.Errorf("no queries to score (%d read, %d selected, %d with gold the upstreams lack)", len(queries), selected, unknown)
	}
	return unknown, scored, nil
}

// agent is the scripted client.
type agent struct {
	cat     *sessionCatalog
	counter *payload.Counter
	rep     *SessionReport
	args    map[string]map[string]json.RawMessage
	pad     []padEntry
}

// outcome is one query's session.
type outcome struct {
	listTokens int
	reachList  int
	reachFind  []int
	findTokens []int
}

func (a *agent) play(ctx context.Context, connect Connector, q *Query) (*outcome, error) {
	cs, err := connect(ctx)
	if err != nil {
		return nil, fmt.Errorf("connecting to the gateway: %w", err)
	}
	defer cs.Close()
	out := &outcome{}
	var listed []*mcp.Tool
	for t, err := range cs.Tools(ctx, nil) {
		if err != nil {
			return nil, fmt.Errorf("listing tools: %w", err)
		}
		listed = append(listed, t)
	}
	body, err := json.Marshal(listed)
	if err != nil {
		return nil, err
	}
	out.listTokens = a.counter.Count(string(body))
	inList := map[string]bool{}
	// seenAs maps a catalog name to the name the agent saw it by.
	seenAs := map[string]string{}
	for _, t := range listed {
		inList[t.Name] = true
		if st := a.cat.lookup(t.Name); st != nil {
			seenAs[st.Name] = t.Name
		}
	}
	slots := q.Slots()
	out.reachList = reached(slots, seenAs)

	if inList[findTool] {
		for _, need := range needs(q.Text) {
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: findTool, Arguments: map[string]any{"query": need}})
			if err != nil {
				return nil, fmt.Errorf("find_capability %q: %w", need, err)
			}
			text := resultText(res)
			out.findTokens = append(out.findTokens, a.counter.Count(text))
			for _, n := range jsonNames(text) {
				if st := a.cat.lookup(n); st != nil {
					if _, ok := seenAs[st.Name]; !ok {
						seenAs[st.Name] = n
					}
				}
			}
			out.reachFind = append(out.reachFind, reached(slots, seenAs))
		}
	}

	through := inList[callTool]
	for _, alts := range slots {
		alt := alts[0]
		if i := slices.IndexFunc(alts, func(a string) bool { _, ok := seenAs[a]; return ok }); i >= 0 {
			alt = alts[i]
		}
		t := a.cat.byName[alt]
		if t == nil {
			continue
		}
		args := a.arguments(q.ID, t)
		if name, ok := seenAs[alt]; ok {
			o, msg := a.call(ctx, cs, name, args, t, through && !inList[name])
			a.count(&a.rep.Seen, "seen", o, name, msg)
		} else {
			o, msg := a.call(ctx, cs, t.Gateway, args, t, through)
			a.count(&a.rep.Unseen, "unseen", o, t.Gateway, msg)
			o, msg = a.call(ctx, cs, t.Gateway, args, t, false)
			a.count(&a.rep.UnseenDirect, "unseen_direct", o, t.Gateway, msg)
		}
		for _, v := range variants(t) {
			o, msg := a.call(ctx, cs, v.name, args, t, through)
			a.count(&a.rep.Forgiving, "forgiving_"+v.kind, o, v.name, msg)
			a.rep.Resolved.add(o != callFailed)
			r := a.rep.Variants[v.kind]
			r.count(o)
			a.rep.Variants[v.kind] = r
		}
	}
	return out, nil
}

func (a *agent) count(r *Ratio, kind string, o callOutcome, name, msg string) {
	r.count(o)
	if o == callFailed && len(a.rep.Failures[kind]) < 3 {
		if len(msg) > 300 {
			msg = msg[:300] + "…"
		}
		a.rep.Failures[kind] = append(a.rep.Failures[kind], name+": "+msg)
	}
}

// call calls the tool t by name, through call_capability or directly,
// and reports whether it ran, was held back or failed, with the answer's
// text. A refusal that says "held" and names the tool is a hold.
func (a *agent) call(ctx context.Context, cs *mcp.ClientSession, name string, args json.RawMessage, t *SessionTool, through bool) (callOutcome, string) {
	p := &mcp.CallToolParams{Name: name, Arguments: args}
	if through {
		p = &mcp.CallToolParams{Name: callTool, Arguments: map[string]any{"name": name, "arguments": args}}
	}
	res, err := cs.CallTool(ctx, p)
	if err != nil {
		return callFailed, err.Error()
	}
	text := resultText(res)
	if res.IsError {
		if strings.Contains(strings.ToLower(text), "held") && strings.Contains(text, `"`+t.Upstream+`"`) {
			return callHeld, text
		}
		return callFailed, text
	}
	if t.Canned && !strings.Contains(text, CannedResult(t.Upstream)) {
		return callFailed, text
	}
	return callRan, text
}

// arguments returns what the agent sends to t for query id: the task
// file's, else a placeholder for each required property.
func (a *agent) arguments(id string, t *SessionTool) json.RawMessage {
	if args := a.args[id][t.Name]; len(args) > 0 {
		return args
	}
	return PlaceholderArgs(t.InputSchema)
}

// PlaceholderArgs returns arguments for an input schema: a value of the
// declared type for each required property ("x", 1, true, [], {}).
func PlaceholderArgs(schema json.RawMessage) json.RawMessage {
	var s struct {
		Properties map[string]struct {
			Type any   `json:"type"`
			Enum []any `json:"enum"`
		} `json:"properties"`
		Required []string `json:"required"`
	}
	json.Unmarshal(schema, &s)
	args := map[string]any{}
	for _, r := range s.Required {
		p := s.Properties[r]
		if len(p.Enum) > 0 {
			args[r] = p.Enum[0]
			continue
		}
		typ, _ := p.Type.(string)
		if ts, ok := p.Type.([]any); ok && len(ts) > 0 {
			typ, _ = ts[0].(string)
		}
		switch typ {
		case "integer", "number", "float":
			args[r] = 1
		case "boolean":
			args[r] = true
		case "array", "list", "tuple":
			args[r] = []any{}
		case "object", "dict":
			args[r] = map[string]any{}
		default:
			args[r] = "x"
		}
	}
	b, _ := json.Marshal(args)
	return b
}

type variant struct{ kind, name string }

// variants returns the forgiving names of t: the bare upstream name, the
// client's prefix, a case slip and a separator slip (when the name has a
// separator or a case to slip).
func variants(t *SessionTool) []variant {
	vs := []variant{}
	if t.Upstream != t.Gateway {
		vs = append(vs, variant{VariantBare, t.Upstream})
	}
	vs = append(vs, variant{VariantPrefix, ClientPrefix + t.Gateway})
	if c := caseSlip(t.Upstream); c != t.Upstream {
		vs = append(vs, variant{VariantCase, strings.TrimSuffix(t.Gateway, t.Upstream) + c})
	}
	if s := sepSlip(t.Upstream); s != t.Upstream {
		vs = append(vs, variant{VariantSep, strings.TrimSuffix(t.Gateway, t.Upstream) + s})
	}
	return vs
}

// caseSlip writes a name as a person slipping on case would: all lower
// case when it has capitals, else its first letter upper case.
func caseSlip(s string) string {
	if lower := strings.ToLower(s); lower != s {
		return lower
	}
	r := []rune(s)
	for i, c := range r {
		if unicode.IsLetter(c) {
			r[i] = unicode.ToUpper(c)
			break
		}
	}
	return string(r)
}

// sepSlip swaps the separators of a name: _ for -, - and . for _.
func sepSlip(s string) string {
	if strings.Contains(s, "_") {
		return strings.ReplaceAll(s, "_", "-")
	}
	return strings.NewReplacer("-", "_", ".", "_").Replace(s)
}

// needs returns what the agent asks find_capability: the task's own
// words, then each step's when it has several.
func needs(task string) []string {
	out := []string{strings.TrimSpace(task)}
	st := steps.Split(task)
	if len(st) > 1 {
		for _, s := range st {
			if t := strings.TrimSpace(s.Text); t != "" && !slices.Contains(out, t) {
				out = append(out, t)
			}
		}
	}
	return out
}

// reached counts the slots one of whose tools the agent has seen.
func reached(slots [][]string, seen map[string]string) int {
	n := 0
	for _, alts := range slots {
		if slices.ContainsFunc(alts, func(a string) bool { _, ok := seen[a]; return ok }) {
			n++
		}
	}
	return n
}

// resultText joins a result's text contents.
func resultText(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			if b.Len() > 0 {
				b.WriteByte('\n')
			}
			b.WriteString(t.Text)
		}
	}
	return b.String()
}

// jsonNames returns every string under a "name" key anywhere in a JSON
// text, in order, so the agent reads any shape of find answer; a text
// that is not JSON gives none.
func jsonNames(text string) []string {
	var v any
	if json.Unmarshal([]byte(text), &v) != nil {
		return nil
	}
	var out []string
	var walk func(any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			if n, ok := x["name"].(string); ok {
				out = append(out, n)
			}
			keys := make([]string, 0, len(x))
			for k := range x {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				walk(x[k])
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(v)
	return out
}

// WriteText prints the report as a table.
func (r *SessionReport) WriteText(w io.Writer) error {
	p := func(format string, a ...any) { fmt.Fprintf(w, format, a...) }
	p("mode\tsession (%s)\n", r.Transport)
	p("queries\t%d (%d gold slots; %d left out for unknown gold)\n", r.Queries, r.Slots, r.UnknownGold)
	p("tools\t%d\n", r.Tools)
	p("reach after first list\t%.1f%%\n", 100*r.ReachList)
	for i, f := range r.ReachFind {
		if i >= 5 {
			break
		}
		p("reach after find %d\t%.1f%%\n", i+1, 100*f)
	}
	p("reach after every find\t%.1f%%\n", 100*r.ReachAll)
	p("find answers\t%d; tokens p50 %d, max %d, mean %.0f\n", r.Finds, r.FindP50, r.FindMax, r.FindMean)
	p("first list tokens\tmean %.0f (full list %d)\n", r.ListTokens, r.FullTokens)
	p("tokens carried\tturn 1 %.0f, turn %d %.0f; over %d turns %.1f%% saved against the full list\n", r.CarriedFirst, r.Turns, r.CarriedLast, r.Turns, 100*r.Saving)
	p("calls of tools seen\t%s\n", r.Seen)
	p("calls of unseen tools\tcall_capability %s; tools/call %s\n", r.Unseen, r.UnseenDirect)
	p("forgiving names\tran %s; resolved %s\n", r.Forgiving, r.Resolved)
	kinds := make([]string, 0, len(r.Variants))
	for k := range r.Variants {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	for _, k := range kinds {
		p("  %s\t%s\n", k, r.Variants[k])
	}
	kinds = kinds[:0]
	for k := range r.Failures {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	for _, k := range kinds {
		// One example a kind; --json has up to three.
		p("failed %s\te.g. %s\n", k, strings.ReplaceAll(r.Failures[k][0], "\n", " "))
	}
	return nil
}
