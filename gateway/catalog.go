package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"sync"

	capbroker "github.com/capbroker/capbroker"
	"github.com/capbroker/capbroker/card"
	"github.com/capbroker/capbroker/payload"
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
	tools     map[string]*toolEntry
	names     []string // tool names, sorted
	held      []card.Warning
	warnings  []card.Warning
	broker    *capbroker.Broker
	prompts   map[string]*promptEntry
	resources map[string]*resourceEntry
	templates map[string]*templateEntry
}

// buildCatalog merges the upstreams' listings.
func buildCatalog(ctx context.Context, ups []*upstream, opts *Options) (*catalog, error) {
	cat := &catalog{
		tools: map[string]*toolEntry{}, prompts: map[string]*promptEntry{},
		resources: map[string]*resourceEntry{}, templates: map[string]*templateEntry{},
	}
	var cards []card.Card
	byKey := map[string]*toolEntry{}
	var promptCards []card.Card
	promptByKey := map[string]*promptEntry{}
	for _, u := range ups {
		l := u.listing()
		for _, t := range l.tools {
			c := toolCard(u.cfg.Name, t, opts.Namespace)
			if c.Risk == card.RiskIrreversible && !(opts.AllowIrreversible || u.cfg.AllowIrreversible) {
				cat.held = append(cat.held, card.Warning{Name: t.Name, Source: u.cfg.Name,
					Message: "held back: irreversible (" + c.RiskFrom + "); allow it with allowIrreversible"})
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
	tc, warns := card.NewCatalog(cards)
	cat.warnings = append(cat.warnings, warns...)
	for _, c := range tc.Cards() {
		e := byKey[c.Meta["key"]]
		cc := c
		e.name, e.card, e.key = c.Name, &cc, jsonKey(e.tool)
		e.tokens = countTokens(&cc)
		cat.tools[c.Name] = e
		cat.names = append(cat.names, c.Name)
	}
	pc, warns := card.NewCatalog(promptCards)
	cat.warnings = append(cat.warnings, warns...)
	for _, c := range pc.Cards() {
		e := promptByKey[c.Meta["key"]]
		e.name, e.key = c.Name, jsonKey(e.prompt)
		cat.prompts[c.Name] = e
	}
	b, err := capbroker.New(ctx, &capbroker.Options{Cards: tc.Cards(), Logger: opts.Logger})
	if err != nil {
		return nil, fmt.Errorf("indexing the gateway catalog: %w", err)
	}
	cat.broker = b
	return cat, nil
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
