package gateway

import (
	"slices"
	"sort"
	"strings"

	"github.com/capbroker/capbroker/card"
	sessions "github.com/capbroker/capbroker/session"
)

// Names an agent calls a tool by are resolved forgivingly: agents copy a
// tool's name from wherever they saw it, and a client lists a server's
// tools under its own prefix (Claude Code: mcp__<server>__<tool>, so
// mcp__capbroker__fs__write_file through the gateway), drops the
// gateway's namespace, or slips on case and separators.

// nameIndex resolves called names against a catalog's offered and held
// tools. It is built once per catalog.
type nameIndex struct {
	// loose maps looseKey of a gateway name to the gateway names with it.
	loose map[string][]string
	// bare maps looseKey of an upstream tool's own name to the gateway
	// names of the tools so named.
	bare map[string][]string
	// all are the gateway names of every offered and held tool, sorted.
	all []string
}

// looseKey folds the slips a name may carry: case, and the separators
// "_", "-", ".", "/", ":" and spaces (so "fs.write-file", "FS__WriteFile"
// and "fs_write_file" are one).
func looseKey(name string) string {
	var b strings.Builder
	b.Grow(len(name))
	for _, r := range strings.ToLower(name) {
		switch r {
		case '_', '-', '.', '/', ':', ' ':
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

func (cat *catalog) nameIndex() *nameIndex {
	cat.nameOnce.Do(func() {
		ix := &nameIndex{loose: map[string][]string{}, bare: map[string][]string{}}
		add := func(name, tool string) {
			k := looseKey(name)
			if !slices.Contains(ix.loose[k], name) {
				ix.loose[k] = append(ix.loose[k], name)
				ix.all = append(ix.all, name)
			}
			b := looseKey(tool)
			if !slices.Contains(ix.bare[b], name) {
				ix.bare[b] = append(ix.bare[b], name)
			}
		}
		for _, n := range cat.names {
			add(n, cat.tools[n].tool.Name)
		}
		for _, h := range cat.heldList {
			add(h.key(), h.Tool)
		}
		sort.Strings(ix.all)
		cat.nameIdx = ix
	})
	return cat.nameIdx
}

// resolveName finds the tool an agent meant by name: the gateway name
// itself; else, for the name and what is left of it without a client's
// prefix ("mcp__<server>__", "functions."), the one tool whose gateway
// name or upstream name is the same but for case and separators. It
// returns the gateway name (of an offered or a held tool), or "" and the
// candidates: the tools the name could mean when it is ambiguous, else
// the closest names, best first (none when nothing is close).
//
// allow, when not nil, says which gateway names the caller may reach (a
// session kept within profiles): a loose or bare name resolves among
// those only, and the candidates are those only, so that a name an
// agent could not call exactly is not reached, nor shown, through a
// forgiving form. An exact name (or one with a client's prefix) still
// resolves to its tool, allowed or not, for the caller to refuse.
func (cat *catalog) resolveName(name string, allow func(string) bool) (string, []string) {
	if _, ok := cat.tools[name]; ok {
		return name, nil
	}
	if _, ok := cat.heldTools[name]; ok {
		return name, nil
	}
	ix := cat.nameIndex()
	forms := nameForms(name)
	var ambiguous []string
	for _, f := range forms {
		if _, ok := cat.tools[f]; ok {
			return f, nil
		}
		if _, ok := cat.heldTools[f]; ok {
			return f, nil
		}
	}
	for _, f := range forms {
		k := looseKey(f)
		if k == "" {
			continue
		}
		for _, m := range []map[string][]string{ix.loose, ix.bare} {
			switch c := allowedNames(m[k], allow); len(c) {
			case 0:
			case 1:
				return c[0], nil
			default:
				for _, n := range c {
					if !slices.Contains(ambiguous, n) {
						ambiguous = append(ambiguous, n)
					}
				}
			}
		}
	}
	if len(ambiguous) > 0 {
		sort.Strings(ambiguous)
		return "", ambiguous
	}
	return "", sessions.CloseNames(forms[len(forms)-1], allowedNames(ix.all, allow), 3)
}

// allowedNames are the names allow allows (all of them when allow is
// nil), in their order.
func allowedNames(names []string, allow func(string) bool) []string {
	if allow == nil {
		return names
	}
	var out []string
	for _, n := range names {
		if allow(n) {
			out = append(out, n)
		}
	}
	return out
}

// nameForms are the names name may stand for, the most specific first:
// itself, then without a client's prefix: "mcp__capbroker__fs__read"
// gives "capbroker__fs__read" and "fs__read"; "mcp__fs__read" gives
// "fs__read" and "read".
func nameForms(name string) []string {
	forms := []string{name}
	rest := name
	for _, p := range []string{"functions.", "mcp__", "mcp_", "mcp."} {
		if len(rest) > len(p) && strings.EqualFold(rest[:len(p)], p) {
			rest = rest[len(p):]
			forms = append(forms, rest)
			break
		}
	}
	if rest != name {
		if _, tail, ok := strings.Cut(rest, card.Separator); ok && tail != "" {
			forms = append(forms, tail)
		}
		return forms
	}
	// A client's own prefix for the gateway without "mcp": Goose's
	// extension__tool makes capbroker__fs__read; a name of three parts
	// stands for its last two. A two-part name keeps its server: a
	// misspelt or missing server is not guessed at.
	if _, tail, ok := strings.Cut(name, card.Separator); ok && strings.Contains(tail, card.Separator) {
		return append(forms, tail)
	}
	// The gateway's entry name with any separator: capbroker:fs:read,
	// capbroker.read.
	if len(name) > len(gatewayEntry)+1 && strings.EqualFold(name[:len(gatewayEntry)], gatewayEntry) {
		if tail := strings.TrimLeft(name[len(gatewayEntry):], "_-.:/ "); tail != "" && len(tail) < len(name)-len(gatewayEntry) {
			forms = append(forms, tail)
		}
	}
	return forms
}

// gatewayEntry is the name "capbroker client add" gives the gateway in a
// client's config, which clients prefix its tools with.
const gatewayEntry = "capbroker"
