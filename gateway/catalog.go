package gateway

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"sync"

	capbroker "github.com/capbroker/capbroker"
	"github.com/capbroker/capbroker/card"
	"github.com/capbroker/capbroker/identity"
	"github.com/capbroker/capbroker/index"
	"github.com/capbroker/capbroker/payload"
	"github.com/capbroker/capbroker/policy"
	"github.com/capbroker/capbroker/rank"
	srcmcp "github.com/capbroker/capbroker/source/mcp"
	"github.com/capbroker/capbroker/source/mcpconfig"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Namespacing says how upstream tool and prompt names become gateway names.
type Namespacing string

// The namespacing rules.
const (
	// NamespaceAlways names every tool server__tool.
	NamespaceAlways Namespacing = "always"
	// NamespaceCollisions keeps a tool's own name unless two servers offer
	// it; then each becomes server__tool.
	NamespaceCollisions Namespacing = "collisions"
)

// ParseNamespacing reads a namespacing rule.
func ParseNamespacing(s string) (Namespacing, error) {
	switch Namespacing(s) {
	case NamespaceAlways, NamespaceCollisions:
		return Namespacing(s), nil
	case "":
		return NamespaceAlways, nil
	}
	return "", fmt.Errorf("unknown namespacing %q (want always or collisions)", s)
}

// toolEntry is one tool the gateway offers.
type toolEntry struct {
	name string // the gateway's name
	up   *upstream
	tool *mcp.Tool // as the upstream listed it
	card *card.Card
	key  string // changes when the definition changes
	// tokens is the size of the tool's definition as listed (MCP JSON, o200k).
	tokens int
}

type promptEntry struct {
	name   string
	up     *upstream
	prompt *mcp.Prompt
	key    string
}

type resourceEntry struct {
	up  *upstream
	res *mcp.Resource
	key string
}

type templateEntry struct {
	up   *upstream
	tmpl *mcp.ResourceTemplate
	re   *regexp.Regexp
	key  string
}

// catalog is an immutable snapshot of everything the upstreams offer.
type catalog struct {
	// asks: built for a client that asks its user before each call
	// (irreversible tools pass through); other is the same snapshot built
	// for a client that does not, or the reverse, built on first use by
	// a session of that kind (nil: none; see clientkind.go).
	asks     bool
	other    func() *catalog
	tools    map[string]*toolEntry
	names    []string // tool names, sorted
	held     []card.Warning
	warnings []card.Warning
	// heldTools are the tools held back (irreversible, changed since
	// approved, new, pins lost): by gateway name (server__tool, and the
	// plain name where it could be listed so). heldList has each once, in
	// name order; heldBroker finds among them (nil when none is held).
	heldTools  map[string]*Held
	heldList   []Held
	heldBroker *capbroker.Broker
	broker     *capbroker.Broker
	// ranker is the broker's ranker when it ranks by meaning too (nil:
	// lexical); learnt counts the cards learning from use taught.
	ranker *catalogRanker
	learnt int
	// fullTokens are the tokens of every tool's definition.
	fullTokens int
	prompts    map[string]*promptEntry
	resources  map[string]*resourceEntry
	templates  map[string]*templateEntry
	// listSig changes when the tools listed in all mode change. listing
	// is that list, made once per catalog for every all-mode session.
	listSig     string
	listingOnce sync.Once
	listing     []*mcp.Tool
	// nameIdx resolves the names agents call tools by (see resolveName),
	// built once, when first needed.
	nameOnce sync.Once
	nameIdx  *nameIndex
	// always are the tools pinned into every session (see
	// Gateway.pinned), found once, when first needed.
	alwaysOnce sync.Once
	always     []string
	// profileAlways are the pins of the profiles the gateway serves.
	profileAlways []string
}

// allTools returns every tool as all mode lists it (gateway names, an
// input schema with type object), built once per catalog and shared by
// every all-mode session: a session in front of a huge upstream costs no
// per-tool work.
func (c *catalog) allTools() []*mcp.Tool {
	c.listingOnce.Do(func() {
		c.listing = make([]*mcp.Tool, 0, len(c.names))
		for _, e := range c.sortedTools() {
			c.listing = append(c.listing, listedTool(e))
		}
	})
	return c.listing
}

// buildCatalog merges the upstreams' listings.
// rk (nil: lexical, no learning) supplies the ranker and what learning
// from use teaches.
func buildCatalog(ctx context.Context, ups []*upstream, opts *Options, rk *ranking, serve []identity.Profile) (*catalog, error) {
	cat := &catalog{
		tools: map[string]*toolEntry{}, prompts: map[string]*promptEntry{},
		resources: map[string]*resourceEntry{}, templates: map[string]*templateEntry{},
		heldTools: map[string]*Held{},
		asks:      opts.client().AsksEachCall,
	}
	var heldCards []card.Card
	pinned := holdChanged(ups, opts, cat, &heldCards)
	var cards []card.Card
	byKey := map[string]*toolEntry{}
	var promptCards []card.Card
	promptByKey := map[string]*promptEntry{}
	for _, p := range serve {
		cat.profileAlways = append(cat.profileAlways, p.Always...)
	}
	for _, u := range ups {
		if !serves(serve, u.cfg.Name, "") {
			continue // a server outside the gateway's profile: nothing of it is served
		}
		l := u.listing()
		for _, t := range l.tools {
			if pinned[u.cfg.Name+"\x00"+t.Name] {
				continue
			}
			c := toolCard(u.cfg.Name, t, opts.Namespace)
			if !serves(serve, u.cfg.Name, c.Name) {
				continue // outside the gateway's profile
			}
			if c.Risk == card.RiskIrreversible && !(opts.AllowIrreversible || u.cfg.AllowIrreversible || opts.client().AsksEachCall) {
				cat.held = append(cat.held, card.Warning{Name: t.Name, Source: u.cfg.Name,
					Message: "held back: irreversible (" + c.RiskFrom + "); allow it with --allow-irreversible or allowIrreversible on the server"})
				cat.hold(&heldCards, c, opts.Namespace, Held{Server: u.cfg.Name, Tool: t.Name, Kind: HeldIrreversible,
					Why: fmt.Sprintf("tool %q of server %q is held back: it is irreversible (%s), and the gateway exposes irreversible tools only when allowed; "+
						"start the gateway with --allow-irreversible, or set \"allowIrreversible\": true on server %q (each call then asks the user), "+
						"or, for a client that asks its user before each call, start it with --client NAME (capbroker client add writes it; on a shared gateway, ?client=NAME in the client's URL)", t.Name, u.cfg.Name, c.RiskFrom, u.cfg.Name),
					Release: fmt.Sprintf("--allow-irreversible, \"allowIrreversible\": true on server %q, or --client claude-code|claude-desktop|vscode|cursor", u.cfg.Name)})
				continue
			}
			k := u.cfg.Name + "\x00" + t.Name
			if _, dup := byKey[k]; dup {
				cat.warnings = append(cat.warnings, card.Warning{Name: t.Name, Source: u.cfg.Name, Message: "listed twice; kept the first"})
				continue
			}
			c.Meta["key"] = k
			cards = append(cards, c)
			byKey[k] = &toolEntry{up: u, tool: t}
		}
		for _, p := range l.prompts {
			c := card.Card{Name: p.Name, Kind: card.KindCommand, Source: u.cfg.Name, Description: p.Description,
				Meta: map[string]string{"key": u.cfg.Name + "\x00" + p.Name}}
			if opts.Namespace == NamespaceAlways {
				c.Name, c.OriginalName = card.Namespaced(u.cfg.Name, p.Name), p.Name
			}
			promptCards = append(promptCards, c)
			promptByKey[c.Meta["key"]] = &promptEntry{up: u, prompt: p}
		}
		for _, r := range l.resources {
			if prev, ok := cat.resources[r.URI]; ok {
				cat.warnings = append(cat.warnings, card.Warning{Name: r.URI, Source: u.cfg.Name,
					Message: "resource URI also offered by " + prev.up.cfg.Name + "; kept " + prev.up.cfg.Name + "'s"})
				continue
			}
			cat.resources[r.URI] = &resourceEntry{up: u, res: r, key: jsonKey(r)}
		}
		for _, t := range l.templates {
			if prev, ok := cat.templates[t.URITemplate]; ok {
				cat.warnings = append(cat.warnings, card.Warning{Name: t.URITemplate, Source: u.cfg.Name,
					Message: "resource template also offered by " + prev.up.cfg.Name + "; kept " + prev.up.cfg.Name + "'s"})
				continue
			}
			cat.templates[t.URITemplate] = &templateEntry{up: u, tmpl: t, re: templateRegexp(t.URITemplate), key: jsonKey(t)}
		}
	}
	sig := sha256.New()
	tc, warns := card.NewCatalog(cards)
	cat.warnings = append(cat.warnings, warns...)
	for _, c := range tc.Cards() {
		e := byKey[c.Meta["key"]]
		cc := c
		e.name, e.card, e.key = c.Name, &cc, jsonKey(e.tool)
		e.tokens = countTokens(&cc)
		cat.tools[c.Name] = e
		cat.names = append(cat.names, c.Name)
		cat.fullTokens += e.tokens
		sig.Write([]byte(c.Name + "\x00" + e.key + "\x00"))
	}
	cat.listSig = string(sig.Sum(nil))
	pc, warns := card.NewCatalog(promptCards)
	cat.warnings = append(cat.warnings, warns...)
	for _, c := range pc.Cards() {
		e := promptByKey[c.Meta["key"]]
		e.name, e.key = c.Name, jsonKey(e.prompt)
		cat.prompts[c.Name] = e
	}
	bo := &capbroker.Options{Cards: tc.Cards(), Logger: opts.Logger, Select: policy.Options{Floors: opts.Floors}}
	if u := rk.usage(tc.Cards()); len(u) > 0 {
		bo.Rank = &rank.Options{Usage: u}
		cat.learnt = len(u)
	}
	if rk != nil && rk.e != nil && len(cat.names) > 0 {
		bo.NewRanker = func(ctx context.Context, cards []card.Card, lex *rank.Index) (policy.Ranker, error) {
			r, err := rk.newRanker(ctx, cards, lex)
			if cr, ok := r.(*catalogRanker); ok {
				cat.ranker = cr
			}
			return r, err
		}
	}
	b, err := capbroker.New(ctx, bo)
	if err != nil {
		return nil, fmt.Errorf("indexing the gateway catalog: %w", err)
	}
	cat.broker = b
	if len(heldCards) > 0 {
		hc, _ := card.NewCatalog(heldCards)
		ho := &capbroker.Options{Cards: hc.Cards(), Logger: opts.Logger}
		if rk != nil && rk.e != nil {
			ho.NewRanker = rk.newHeldRanker
		}
		if cat.heldBroker, err = capbroker.New(ctx, ho); err != nil {
			return nil, fmt.Errorf("indexing the held-back tools: %w", err)
		}
	}
	seen := map[*Held]bool{}
	for _, n := range sortedKeys(cat.heldTools) {
		if h := cat.heldTools[n]; !seen[h] {
			seen[h] = true
			cat.heldList = append(cat.heldList, *h)
		}
	}
	return cat, nil
}

// The kinds of [Held] tools.
const (
	// HeldIrreversible: an irreversible tool, not allowed
	// (Options.AllowIrreversible, a server's allowIrreversible).
	HeldIrreversible = "irreversible"
	// HeldChanged: its description or input schema changed since approved.
	HeldChanged = "changed"
	// HeldNew: never seen before, quarantined (--hold-new).
	HeldNew = "new"
	// HeldDistrust: the pins file was lost, is corrupt or cannot be read.
	HeldDistrust = "distrust"
)

// Held is an upstream tool the gateway holds back: not listed, not
// callable; find_capability reports it when it matches, and a call to it
// is answered with Why.
type Held struct {
	// Name is the gateway's name for it.
	Name   string `json:"name"`
	Server string `json:"server"`
	Tool   string `json:"tool"`
	// Kind is HeldIrreversible, HeldChanged, HeldNew or HeldDistrust.
	Kind string `json:"kind"`
	// Why says why it is held and what releases it, in a sentence a
	// person and a model can act on.
	Why string `json:"why"`
	// Release is the flag, setting or command that releases it.
	Release string `json:"release"`
}

func (h *Held) key() string { return card.Namespaced(h.Server, h.Tool) }

// hold records h, for the card c of the held tool, under its gateway
// name(s), and adds the card (named as the gateway would list it) to the
// held cards find searches.
func (cat *catalog) hold(cards *[]card.Card, c card.Card, ns Namespacing, h Held) {
	h.Name = h.key()
	if ns == NamespaceCollisions {
		h.Name = h.Tool
		if _, taken := cat.heldTools[h.Tool]; taken {
			h.Name = h.key()
		}
	}
	hp := &h
	cat.heldTools[h.key()] = hp
	if _, taken := cat.heldTools[h.Tool]; !taken && ns == NamespaceCollisions {
		cat.heldTools[h.Tool] = hp
	}
	c.Name, c.OriginalName = h.Name, h.Tool
	c.Meta = map[string]string{"server": h.Server, "tool": h.Tool}
	*cards = append(*cards, c)
}

// heldTool returns the held tool a name stands for, unless the name is
// that of a tool the gateway offers.
// serverOf is the server of the offered or held tool name, "" when the
// catalog has no such tool.
func (cat *catalog) serverOf(name string) string {
	if e, ok := cat.tools[name]; ok {
		return e.up.cfg.Name
	}
	if h, ok := cat.heldTools[name]; ok {
		return h.Server
	}
	return ""
}

func (cat *catalog) heldTool(name string) (*Held, bool) {
	if _, live := cat.tools[name]; live {
		return nil, false
	}
	h, ok := cat.heldTools[name]
	return h, ok
}

// holdChanged asks opts.Pins which upstream tools it holds back (changed
// since approved, new, pins lost), and returns them by server and tool
// name; it records each in cat (held, heldTools) and adds its card to
// heldCards. Without Pins nothing is held.
func holdChanged(ups []*upstream, opts *Options, cat *catalog, heldCards *[]card.Card) map[string]bool {
	if opts.Pins == nil || len(ups) == 0 {
		return nil
	}
	var cards []card.Card
	for _, u := range ups {
		srv := mcpconfig.Server{Name: u.cfg.Name, Transport: u.cfg.Transport(), File: u.cfg.File, Line: u.cfg.Line}
		for _, t := range u.listing().tools {
			c, err := srcmcp.ToolCard(srv, t)
			if err != nil {
				continue // a nameless tool; buildCatalog's card.NewCatalog reports it
			}
			cards = append(cards, c)
		}
	}
	if len(cards) == 0 {
		return nil
	}
	_, held, err := opts.Pins.Hold(cards)
	if err != nil {
		opts.Logger.Error("reading or saving the pinned tool digests", "error", err)
	}
	out := map[string]bool{}
	for _, c := range held {
		tool := c.OriginalName
		out[c.Source+"\x00"+tool] = true
		kind, why := c.Meta[index.HeldKindMeta], c.Meta[index.HeldMeta]
		if why == "" {
			kind = HeldChanged
			why = fmt.Sprintf("its description or input schema changed since it was approved; a person must review the change (capbroker approve --list) and approve it (capbroker approve %s)", c.Name)
		}
		release := "capbroker approve " + c.Name
		switch kind {
		case HeldDistrust:
			release = "capbroker approve --all (after capbroker approve --list)"
		case HeldChanged, HeldNew:
		default:
			kind = HeldChanged
		}
		cat.held = append(cat.held, card.Warning{Name: tool, Source: c.Source, Message: "held back: " + why})
		cat.hold(heldCards, c, opts.Namespace, Held{Server: c.Source, Tool: tool, Kind: kind,
			Why:     fmt.Sprintf("tool %q of server %q is held back: %s", tool, c.Source, why),
			Release: release})
	}
	return out
}

// toolCard turns an upstream tool into a card.
func toolCard(server string, t *mcp.Tool, ns Namespacing) card.Card {
	c := card.Card{
		Name: t.Name, Kind: card.KindTool, Source: server, Description: t.Description,
		Meta: map[string]string{"server": server, "tool": t.Name},
	}
	if ns == NamespaceAlways {
		c.Name, c.OriginalName = card.Namespaced(server, t.Name), t.Name
	}
	if t.InputSchema != nil {
		if b, err := json.Marshal(t.InputSchema); err == nil {
			c.InputSchema = b
		}
	}
	if a := t.Annotations; a != nil {
		// Only what the server stated: the SDK fills unset booleans with false.
		m := map[string]any{}
		if a.ReadOnlyHint {
			m["readOnlyHint"] = true
		}
		if a.DestructiveHint != nil {
			m["destructiveHint"] = *a.DestructiveHint
		}
		if a.Title != "" {
			m["title"] = a.Title
		}
		if len(m) > 0 {
			c.Annotations, _ = json.Marshal(m)
		}
	}
	c.ResolveRisk()
	return c
}

// jsonKey is a value's JSON, used to notice changed definitions.
func jsonKey(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// templateRegexp compiles an RFC 6570 URI template into a matcher (each
// expression matches one path segment, or anything for reserved and
// fragment expansions).
func templateRegexp(tmpl string) *regexp.Regexp {
	var b strings.Builder
	b.WriteString("^")
	for {
		i := strings.IndexByte(tmpl, '{')
		if i < 0 {
			b.WriteString(regexp.QuoteMeta(tmpl))
			break
		}
		j := strings.IndexByte(tmpl[i:], '}')
		if j < 0 {
			b.WriteString(regexp.QuoteMeta(tmpl))
			break
		}
		b.WriteString(regexp.QuoteMeta(tmpl[:i]))
		expr := tmpl[i+1 : i+j]
		if strings.HasPrefix(expr, "+") || strings.HasPrefix(expr, "#") {
			b.WriteString(".*")
		} else {
			b.WriteString("[^/]*")
		}
		tmpl = tmpl[i+j+1:]
	}
	b.WriteString("$")
	re, err := regexp.Compile(b.String())
	if err != nil {
		return regexp.MustCompile("^$")
	}
	return re
}

// resourceOwner returns the upstream that serves uri: the one that listed
// it, else the one whose template matches it (first in template order).
func (c *catalog) resourceOwner(uri string) *upstream {
	if r, ok := c.resources[uri]; ok {
		return r.up
	}
	keys := sortedKeys(c.templates)
	for _, k := range keys {
		if t := c.templates[k]; t.re.MatchString(uri) {
			return t.up
		}
	}
	return nil
}

// sortedTools returns the entries in name order.
func (c *catalog) sortedTools() []*toolEntry {
	out := make([]*toolEntry, 0, len(c.names))
	for _, n := range c.names {
		out = append(out, c.tools[n])
	}
	return out
}

// tokens counts the tokens of the named tools' definitions in MCP form.
func (c *catalog) tokens(names []string) int {
	n := 0
	for _, name := range names {
		if e, ok := c.tools[name]; ok {
			n += e.tokens
		}
	}
	return n
}

var (
	counterOnce sync.Once
	counter     *payload.Counter
)

// countTokens counts the tokens of c's definition in MCP form (o200k).
func countTokens(c *card.Card) int {
	counterOnce.Do(func() { counter, _ = payload.NewCounter("") })
	if counter == nil {
		return 0
	}
	r, err := payload.Render(payload.MCP, []*card.Card{c})
	if err != nil {
		return 0
	}
	return counter.Count(string(r.Body))
}
