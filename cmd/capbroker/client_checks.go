package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"sort"
	"strings"

	"github.com/capbroker/capbroker/clientconfig"
	"github.com/capbroker/capbroker/source/mcpconfig"
)

// gatewayCommand is the capbroker a client will run, as an absolute path,
// and warnings about it. named is --command ("" for this executable). It
// fails when the client could not start it: a name not on $PATH, a path
// that does not exist or is not executable, or a "go run" (or test)
// build, which Go removes when it exits, with no installed capbroker to
// use instead. A capbroker built into the temporary folder is used, with
// a warning: it lasts until the folder is cleared.
func (m *Main) gatewayCommand(named string) (string, []string, error) {
	var warns []string
	path := named
	if path == "" {
		executable := m.executable
		if executable == nil {
			executable = os.Executable
		}
		exe, err := executable()
		if err != nil {
			return "", nil, fmt.Errorf("finding this executable: %w; give the capbroker the client should run with --command", err)
		}
		if r, err := filepath.EvalSymlinks(exe); err == nil {
			exe = r
		}
		path = exe
		if base := strings.TrimSuffix(filepath.Base(exe), ".exe"); base != "capbroker" || goBuildDir(exe) {
			// A "go run" or test build: the installed capbroker, if any.
			p, err := lookPath("capbroker", m.Getenv("PATH"))
			if err != nil {
				return "", nil, fmt.Errorf("this capbroker is a temporary build (%s) that will be gone when the client starts, and no capbroker is on $PATH; "+
					"install it (go install github.com/capbroker/capbroker/cmd/capbroker@latest, or go build -o ~/.local/bin/capbroker ./cmd/capbroker), "+
					"or give its path with --command; nothing written", exe)
			}
			path = p
			warns = append(warns, fmt.Sprintf("this capbroker is a temporary build (%s); the client will run %s, found on $PATH", exe, p))
		}
	}
	if !filepath.IsAbs(path) && !strings.ContainsRune(path, filepath.Separator) {
		p, err := lookPath(path, m.Getenv("PATH"))
		if err != nil {
			return "", nil, fmt.Errorf("--command %s: not found on $PATH, so the client could not start it; give its absolute path; nothing written", path)
		}
		path = p
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", nil, fmt.Errorf("--command %s: %w", path, err)
	}
	st, err := os.Stat(abs)
	switch {
	case err != nil:
		return "", nil, fmt.Errorf("--command %s: %w; the client could not start it; nothing written", abs, unwrapPath(err))
	case st.IsDir():
		return "", nil, fmt.Errorf("--command %s is a folder, not the capbroker executable; nothing written", abs)
	case runtime.GOOS != "windows" && st.Mode().Perm()&0o111 == 0:
		return "", nil, fmt.Errorf("--command %s is not executable (%v); the client could not start it; nothing written", abs, st.Mode().Perm())
	}
	if underTemp(abs, m.Getenv) {
		warns = append(warns, fmt.Sprintf("%s is under the temporary folder and may be gone after a reboot; the client would then fail to start capbroker", abs))
	}
	return abs, warns, nil
}

// goBuildDir reports whether path lies in a work folder of the go
// command ("go run" builds into $GOTMPDIR/go-build123/b001/exe/), which it
// removes when the program exits.
func goBuildDir(path string) bool {
	for _, part := range strings.Split(filepath.ToSlash(filepath.Dir(path)), "/") {
		if strings.HasPrefix(part, "go-build") {
			return true
		}
	}
	return false
}

// underTemp reports whether path is inside the temporary folder ($TMPDIR,
// else os.TempDir()).
func underTemp(path string, getenv func(string) string) bool {
	var dirs []string
	if t := getenv("TMPDIR"); t != "" {
		dirs = append(dirs, t)
	}
	dirs = append(dirs, os.TempDir())
	for _, d := range dirs {
		if r, err := filepath.EvalSymlinks(d); err == nil {
			d = r
		}
		rel, err := filepath.Rel(d, path)
		if err == nil && rel != "." && !strings.HasPrefix(rel, "..") {
			return true
		}
	}
	return false
}

// lookPath finds a program on the PATH given (exec.LookPath reads the
// process's own).
func lookPath(name, path string) (string, error) {
	if path == "" {
		return exec.LookPath(name)
	}
	for _, dir := range filepath.SplitList(path) {
		if dir == "" {
			continue
		}
		p := filepath.Join(dir, name)
		if st, err := os.Stat(p); err == nil && !st.IsDir() && (runtime.GOOS == "windows" || st.Mode().Perm()&0o111 != 0) {
			return filepath.Abs(p)
		}
	}
	return "", errors.New("not found")
}

// genericWords are parts of a server's name or command that say nothing
// about which variables it reads.
var genericWords = []string{"mcp", "server", "servers", "modelcontextprotocol", "npx", "uvx", "node", "python", "python3",
	"docker", "run", "the", "latest", "stdio", "com", "org", "io", "src", "bin", "index", "dist", "main", "local"}

var wordRE = regexp.MustCompile(`[A-Za-z][A-Za-z0-9]+`)

// lostVariables lists, for each stdio server moved behind the gateway,
// the variables of environ (the environment "client add" runs in, which
// the client's own resembles) that the server inherited from the client
// and will not get from the gateway: not in the safe set, not named by
// its entry, and named like it (a word of the server's name, command or
// arguments: MEMORY_FILE_PATH for server-memory) or like a credential
// (*_TOKEN, *_API_KEY, *_SECRET). servers are the moved entries.
func lostVariables(servers map[string]json.RawMessage, environ []string) map[string][]string {
	out := map[string][]string{}
	for name, raw := range servers {
		s, ok := parseEntry(name, raw)
		if !ok || s.Command == "" || s.InheritEnv {
			continue
		}
		words := map[string]bool{}
		for _, part := range append([]string{name, s.Command}, s.Args...) {
			for _, w := range wordRE.FindAllString(filepath.Base(part), -1) {
				w = strings.ToUpper(w)
				if len(w) >= 3 && !slices.Contains(genericWords, strings.ToLower(w)) {
					words[w] = true
				}
			}
		}
		var lost []string
		for _, kv := range environ {
			k, _, _ := strings.Cut(kv, "=")
			if k == "" || slices.Contains(mcpconfig.SafeEnv, k) || strings.HasPrefix(k, "LC_") || strings.HasPrefix(k, "CAPBROKER_") {
				continue
			}
			if _, own := s.Env[k]; own || slices.Contains(s.InheritVars, k) {
				continue
			}
			related := false
			for _, part := range strings.Split(k, "_") {
				if words[part] {
					related = true
				}
			}
			if related {
				lost = append(lost, k)
			}
		}
		if len(lost) > 0 {
			sort.Strings(lost)
			out[name] = lost
		}
	}
	return out
}

// parseEntry reads one server entry as the gateway will.
func parseEntry(name string, raw json.RawMessage) (mcpconfig.Server, bool) {
	doc, err := json.Marshal(map[string]map[string]json.RawMessage{"mcpServers": {name: raw}})
	if err != nil {
		return mcpconfig.Server{}, false
	}
	servers, _, err := mcpconfig.Parse("entry", doc, &mcpconfig.Options{Getenv: func(string) string { return "" }})
	if err != nil || len(servers) != 1 {
		return mcpconfig.Server{}, false
	}
	return servers[0], true
}

// noteLostVariables warns, per server, about the variables it loses
// behind the gateway, and how to keep them.
func (m *Main) noteLostVariables(lost map[string][]string, serversFile string) {
	names := make([]string, 0, len(lost))
	for n := range lost {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		vars := lost[n]
		q, _ := json.Marshal(vars)
		fmt.Fprintf(m.Stderr, "warning: server %s ran with the client's whole environment; behind the gateway it gets only PATH, HOME and the like plus what its entry names, "+
			"so it will not see %s set here; to keep them, add \"inheritEnv\": %s to its entry in %s (or put their values under \"env\")\n",
			n, strings.Join(vars, ", "), q, serversFile)
	}
}

// clientGateway is the entry "client add" writes: a gateway the client
// starts (command checked, see gatewayCommand), or, shared, the URL of
// the one gateway "capbroker service install" runs.
func (m *Main) clientGateway(f clientconfig.File, command string, shared bool, addr string) (clientconfig.Gateway, error) {
	if !shared {
		command, warns, err := m.gatewayCommand(command)
		if err != nil {
			return clientconfig.Gateway{}, err
		}
		for _, w := range warns {
			fmt.Fprintln(m.Stderr, "warning:", w)
		}
		return clientconfig.Gateway{Command: command, Args: []string{"gateway"}}, nil
	}
	if f.Client == clientconfig.ClaudeDesktop {
		return clientconfig.Gateway{}, usageError{fmt.Errorf("--shared: Claude Desktop's config starts stdio servers only; add it without --shared")}
	}
	if err := gatewayCheckLoopback(addr); err != nil {
		return clientconfig.Gateway{}, usageError{fmt.Errorf("--addr: %w", err)}
	}
	if p, err := m.serviceFile(); err == nil && !fileExists(p) {
		fmt.Fprintf(m.Stderr, "warning: no shared gateway service is installed (no %s); run capbroker service install, or the client will find nothing at http://%s/mcp\n", p, addr)
	}
	return clientconfig.Gateway{URL: "http://" + addr + "/mcp"}, nil
}

// gatewayCheckLoopback refuses a shared address that is not HOST:PORT on
// loopback (the shared gateway has no token).
func gatewayCheckLoopback(addr string) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil || port == "" {
		return fmt.Errorf("%q: want HOST:PORT on loopback, such as %s", addr, DefaultSharedAddr)
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return fmt.Errorf("%q: the shared gateway listens on loopback only (127.0.0.1)", addr)
	}
	return nil
}

// noteNothingFronted warns when client add moved no server and the
// servers file holds none: the client's entry would start a gateway
// fronting nothing. For Claude Code it names the servers of its projects
// (local scope) in ~/.claude.json, which stay where they are.
func (m *Main) noteNothingFronted(f clientconfig.File, p *clientconfig.Plan) {
	if len(p.Moved) > 0 {
		return
	}
	if order, _, err := clientconfig.Servers(p.Servers); err == nil && len(order) > 0 {
		return
	}
	where := ""
	if f.Client == clientconfig.ClaudeCode {
		projects := clientconfig.ClaudeProjectServers(f.Path)
		dirs := make([]string, 0, len(projects))
		for d := range projects {
			dirs = append(dirs, d)
		}
		sort.Strings(dirs)
		var parts []string
		for _, d := range dirs {
			parts = append(parts, fmt.Sprintf("%s (%s)", d, strings.Join(projects[d], ", ")))
		}
		if len(parts) > 0 {
			where = fmt.Sprintf("; the servers of projects in %s stay there, Claude Code starts them itself in their folder: %s", f.Path, strings.Join(parts, "; "))
		}
	}
	fmt.Fprintf(m.Stderr, "warning: %s has no user servers to move, so its gateway fronts none yet%s; add one behind the gateway with: capbroker server add NAME -- COMMAND [ARGS]\n", f.Path, where)
}

// gatewayCommandProblem says why a client could not run command, the
// capbroker its gateway entry names ("" when it could): a path that is
// gone or not executable, a bare name not on $PATH.
func (m *Main) gatewayCommandProblem(command string) string {
	if !filepath.IsAbs(command) {
		if _, err := lookPath(command, m.Getenv("PATH")); err != nil {
			return fmt.Sprintf("its entry runs %s, which is not on $PATH", command)
		}
		return ""
	}
	st, err := os.Stat(command)
	switch {
	case err != nil:
		return fmt.Sprintf("its entry runs %s, which does not exist", command)
	case st.IsDir() || (runtime.GOOS != "windows" && st.Mode().Perm()&0o111 == 0):
		return fmt.Sprintf("its entry runs %s, which is not an executable file", command)
	}
	return ""
}
