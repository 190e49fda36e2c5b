package mcpconfig

import (
	"net/url"
	"sort"
	"strings"
)

// minSecret is the shortest value [Redactor] hides: shorter values (a port,
// "1", "true") are no secret and would garble every message they occur in.
const minSecret = 4

// Redactor replaces the values of secrets in text by their ${VAR}
// reference. The zero value and a nil *Redactor redact nothing.
type Redactor struct {
	r *strings.Replacer
}

// NewRedactor returns a Redactor for the secrets, also catching their
// URL-escaped forms (a secret in a URL query shows escaped in errors).
func NewRedactor(secrets ...Secret) *Redactor {
	type pair struct{ old, new string }
	var pairs []pair
	seen := map[string]bool{}
	for _, s := range secrets {
		if len(s.Value) < minSecret || s.Value == "true" || s.Value == "false" {
			continue
		}
		ref := "${" + s.Var + "}"
		for _, v := range []string{s.Value, url.QueryEscape(s.Value), url.PathEscape(s.Value)} {
			if !seen[v] {
				seen[v] = true
				pairs = append(pairs, pair{v, ref})
			}
		}
	}
	if len(pairs) == 0 {
		return &Redactor{}
	}
	// Longer values first, so a secret that contains another is replaced
	// whole.
	sort.SliceStable(pairs, func(i, j int) bool { return len(pairs[i].old) > len(pairs[j].old) })
	args := make([]string, 0, 2*len(pairs))
	for _, p := range pairs {
		args = append(args, p.old, p.new)
	}
	return &Redactor{r: strings.NewReplacer(args...)}
}

// Redact returns text with every secret replaced by its ${VAR}.
func (r *Redactor) Redact(text string) string {
	if r == nil || r.r == nil {
		return text
	}
	return r.r.Replace(text)
}

// Redact returns text with the server's secrets replaced by their ${VAR}.
func (s *Server) Redact(text string) string {
	if len(s.Secrets) == 0 {
		return text
	}
	return NewRedactor(s.Secrets...).Redact(text)
}

// CommandLine is what the server runs, or the URL it is reached at, as a
// person reads it: the command and its arguments quoted for a POSIX shell
// when needed, with secrets shown as ${VAR}.
func (s *Server) CommandLine() string {
	if s.Transport != Stdio {
		return s.Redact(s.URL)
	}
	parts := make([]string, 0, 1+len(s.Args))
	for _, a := range append([]string{s.Command}, s.Args...) {
		parts = append(parts, shellQuote(a))
	}
	return s.Redact(strings.Join(parts, " "))
}

// shellQuote quotes a for a POSIX shell when it holds anything but
// letters, digits and -_./:=@%+,
func shellQuote(a string) string {
	if a == "" {
		return "''"
	}
	for _, c := range a {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("-_./:=@%+,${}", c)) {
			return "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
	}
	return a
}
