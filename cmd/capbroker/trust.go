package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/capbroker/capbroker/clientconfig"
	"github.com/capbroker/capbroker/internal/termsafe"
	"github.com/capbroker/capbroker/source"
	"github.com/capbroker/capbroker/source/mcpconfig"
	"github.com/capbroker/capbroker/source/trust"
)

// dataDir is capbroker's data directory: $XDG_DATA_HOME/capbroker, else
// ~/.local/share/capbroker.
func (m *Main) dataDir() (string, error) {
	if v := m.Getenv("XDG_DATA_HOME"); v != "" && filepath.IsAbs(v) {
		return filepath.Join(v, "capbroker"), nil
	}
	if home := m.Getenv("HOME"); home != "" {
		return filepath.Join(home, ".local", "share", "capbroker"), nil
	}
	return "", errors.New("no data directory: set XDG_DATA_HOME or HOME")
}

// trustPolicy is who approved which project servers: Claude Code in
// ~/.claude.json, and capbroker approve --servers in the data directory.
// A store that cannot be read approves nothing, with a warning.
func (m *Main) trustPolicy() *trust.Policy {
	if m.trust != nil {
		return m.trust
	}
	p := &trust.Policy{}
	if cj := clientconfig.ClaudeJSON(m.clientEnv()); cj != "" {
		p.ClaudePath = cj
		c, err := trust.ReadClaude(p.ClaudePath)
		if err != nil {
			fmt.Fprintln(m.Stderr, "warning:", err)
		}
		p.Claude = c
	}
	if dir, err := m.dataDir(); err == nil {
		st, err := trust.OpenStore(dir)
		if err != nil {
			fmt.Fprintln(m.Stderr, "warning:", err)
		}
		p.Store = st
	}
	m.trust = p
	return p
}

// noteUnapproved tells, once, which project servers were not started and
// how to approve them.
func (m *Main) noteUnapproved(list []source.Unapproved) {
	if len(list) == 0 || m.notedUnapproved {
		return
	}
	m.notedUnapproved = true
	var names []string
	for _, u := range list {
		names = append(names, fmt.Sprintf("%s (%s)", termsafe.String(u.Name), termsafe.String(u.Path)))
	}
	fmt.Fprintf(m.Stderr, "note: %d project MCP servers not started until approved: %s; review and approve them with: %s\n",
		len(list), strings.Join(names, ", "), trust.Fix)
}

// approveServers shows the project's unapproved MCP servers, exactly as
// they would run, and approves them when the user says so (or --yes).
// names, when given, restricts it to those servers.
func (m *Main) approveServers(ctx context.Context, names []string, listOnly, yes, asJSON bool) error {
	up, err := m.plannedUpstreams(ctx, "")
	if err != nil {
		return err
	}
	var pending, refused []source.Unapproved
	for _, u := range up.unapproved {
		if len(names) > 0 && !slices.Contains(names, u.Name) {
			continue
		}
		if strings.Contains(u.Reason, "disabledMcpjsonServers") {
			refused = append(refused, u)
			continue
		}
		pending = append(pending, u)
	}
	for _, n := range names {
		if !slices.ContainsFunc(up.unapproved, func(u source.Unapproved) bool { return u.Name == n }) {
			return usageError{fmt.Errorf("approve --servers: no unapproved project server named %q (capbroker approve --servers --list shows them)", n)}
		}
	}
	if asJSON && (listOnly || len(pending) == 0) {
		if pending == nil {
			pending = []source.Unapproved{}
		}
		return writeJSON(m.Stdout, map[string]any{"unapproved": pending, "approved": []string{}})
	}
	for _, u := range refused {
		fmt.Fprintf(m.Stderr, "not approvable here: %s\n", termsafe.String(u.String()))
	}
	if len(pending) == 0 {
		fmt.Fprintln(m.Stdout, "no project MCP server waits for approval")
		return nil
	}
	w := m.Stdout
	if asJSON {
		w = m.Stderr
	}
	fmt.Fprintf(w, "%d project MCP servers wait for approval; approving lets capbroker run them as you:\n", len(pending))
	for _, u := range pending {
		where := u.Path
		if u.Line > 0 {
			where = fmt.Sprintf("%s:%d", u.Path, u.Line)
		}
		verb := "runs"
		if u.Server.Transport != mcpconfig.Stdio {
			verb = "connects to"
		}
		fmt.Fprintf(w, "\n  %s  (%s)\n    %s: %s\n", termsafe.String(u.Name), termsafe.String(where), verb, termsafe.String(u.CommandLine))
		if u.Server.Dir != "" {
			fmt.Fprintf(w, "    in: %s\n", termsafe.String(u.Server.Redact(u.Server.Dir)))
		}
		if len(u.Server.Env) > 0 {
			fmt.Fprintf(w, "    env: %s (values not shown)\n", strings.Join(termsafe.Strings(slices.Sorted(maps.Keys(u.Server.Env))), ", "))
		}
		if len(u.Server.Headers) > 0 {
			fmt.Fprintf(w, "    headers: %s (values not shown)\n", strings.Join(termsafe.Strings(slices.Sorted(maps.Keys(u.Server.Headers))), ", "))
		}
		if strings.Contains(u.Reason, "changed since") {
			what, _, _ := strings.Cut(u.Reason, "; review and approve")
			fmt.Fprintf(w, "    (%s)\n", termsafe.String(what))
		}
	}
	fmt.Fprintln(w)
	if listOnly {
		return nil
	}
	if !yes {
		fmt.Fprintf(m.Stderr, "approve these %d servers? [y/N] ", len(pending))
		line, _ := bufio.NewReader(m.Stdin).ReadString('\n')
		switch strings.ToLower(strings.TrimSpace(line)) {
		case "y", "yes":
		default:
			return errors.New("approve --servers: not approved (answer y to approve, or pass --yes)")
		}
	}
	st := m.trustPolicy().Store
	if st == nil {
		dir, err := m.dataDir()
		if err != nil {
			return err
		}
		st, _ = trust.OpenStore(dir)
	}
	srvs := make([]mcpconfig.Server, len(pending))
	approved := make([]string, len(pending))
	for i, u := range pending {
		srvs[i], approved[i] = u.Server, u.Name
	}
	if err := st.Approve(srvs, time.Now()); err != nil {
		return err
	}
	if asJSON {
		return writeJSON(m.Stdout, map[string]any{"approved": approved, "store": st.Path()})
	}
	fmt.Fprintf(m.Stdout, "approved %d: %s (recorded in %s)\n", len(approved), strings.Join(termsafe.Strings(approved), ", "), st.Path())
	return nil
}
