package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"github.com/capbroker/capbroker/eval"
	"github.com/capbroker/capbroker/payload"
	"github.com/capbroker/capbroker/source/toolfile"
)

// evalChildEnv is added to the environment of every process the session
// eval starts (tests set it to run their own binary as capbroker).
var evalChildEnv map[string]string

// sessionEvalFlags are the flags of eval --mode session.
type sessionEvalFlags struct {
	mcpConfig  string
	gatewayBin string
	transport  string
	turns      int
	sample     int
	stdioMax   int
	ready      time.Duration
	gatewayArg []string
}

func (f *sessionEvalFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&f.mcpConfig, "upstreams", "", `with --mode session: MCP servers file ({"mcpServers": ...}) the gateway fronts instead of serving the --tools files`)
	fl.StringVar(&f.gatewayBin, "gateway-bin", "", "with --mode session: the capbroker binary that runs the gateway (default: this one)")
	fl.StringVar(&f.transport, "transport", "both", "with --mode session: http, stdio or both")
	fl.IntVar(&f.turns, "turns", 10, "with --mode session: turns over which the tokens carried are summed")
	fl.IntVar(&f.sample, "sample", 0, "at most this many queries, spread evenly over the file (after --filter; 0: all)")
	fl.IntVar(&f.stdioMax, "stdio-queries", 25, "with --mode session: at most this many of the queries also run over stdio (a gateway process each; 0: all)")
	fl.DurationVar(&f.ready, "ready-timeout", 15*time.Minute, "with --mode session: how long to wait for the gateway to start its upstreams and embed its cards")
	fl.StringArrayVar(&f.gatewayArg, "gateway-arg", nil, "with --mode session: one more argument for the gateway (repeatable)")
}

// newEvalUpstreamCmd is the upstream of the session eval: an MCP server
// over stdio serving a tool file, answering every call with a canned
// text. Hidden: the eval starts it.
func (m *Main) newEvalUpstreamCmd() *cobra.Command {
	var tools, name string
	cmd := &cobra.Command{
		Use:    "upstream --tools FILE",
		Short:  "Serve a tool file as an MCP server over stdio (the session eval's upstream)",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cards, err := toolfile.Load(tools)
			if err != nil {
				return err
			}
			if name == "" {
				name = serverName(tools)
			}
			return eval.ServeTools(cmd.Context(), name, cards, &mcp.IOTransport{Reader: readCloser{m.Stdin}, Writer: writeCloser{m.Stdout}})
		},
	}
	cmd.Flags().StringVar(&tools, "tools", "", "tool file to serve")
	cmd.Flags().StringVar(&name, "name", "", "server name (default: the file's name)")
	return cmd
}

// serverName is the upstream name of a tool file: its base name without
// extension, as eval names a tool file's source.
func serverName(path string) string {
	b := filepath.Base(path)
	return strings.TrimSuffix(b, filepath.Ext(b))
}

// upstreamDef is one server of an MCP servers file.
type upstreamDef struct {
	Command string            `json:"command"`
	Args    []string          `json:"args,omitempty"`
	Env     map[string]string `json:"env,omitempty"`
	canned  bool
}

// evalSession runs eval --mode session: the gateway binary fronts the
// upstreams (the --tools files served by this binary, or --upstreams),
// and a scripted agent plays each query through it over HTTP and stdio.
func (m *Main) evalSession(ctx context.Context, f *sessionEvalFlags, tools []string, queries string, filter func(*eval.Query) bool, limit int, ranker string, rankerSet bool, db string, asJSON bool) error {
	if (len(tools) == 0) == (f.mcpConfig == "") {
		return usageError{errors.New("eval --mode session needs --tools files or --upstreams, not both")}
	}
	switch f.transport {
	case "http", "stdio", "both":
	default:
		return usageError{fmt.Errorf("--transport %q: want http, stdio or both", f.transport)}
	}
	if f.turns < 1 {
		return usageError{fmt.Errorf("--turns %d: want at least 1", f.turns)}
	}
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("finding this binary: %w", err)
	}
	bin := f.gatewayBin
	if bin == "" {
		bin = self
	}
	tmp, err := os.MkdirTemp("", "capbroker-session-eval-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)

	servers := map[string]upstreamDef{}
	if f.mcpConfig != "" {
		var cfg struct {
			MCPServers map[string]upstreamDef `json:"mcpServers"`
		}
		b, err := os.ReadFile(f.mcpConfig)
		if err != nil {
			return fmt.Errorf("--upstreams: %w", err)
		}
		if err := json.Unmarshal(b, &cfg); err != nil {
			return fmt.Errorf("--upstreams %s: %w", f.mcpConfig, err)
		}
		if len(cfg.MCPServers) == 0 {
			return fmt.Errorf("--upstreams %s: no mcpServers", f.mcpConfig)
		}
		for n, s := range cfg.MCPServers {
			if s.Command == "" {
				return fmt.Errorf("--upstreams %s: server %q has no command (the session eval starts stdio servers only)", f.mcpConfig, n)
			}
			s.Command = os.ExpandEnv(s.Command)
			for k, v := range s.Env {
				s.Env[k] = os.ExpandEnv(v)
			}
			for i, a := range s.Args {
				s.Args[i] = os.ExpandEnv(a)
			}
			servers[n] = s
		}
	} else {
		for _, t := range tools {
			abs, err := filepath.Abs(t)
			if err != nil {
				return err
			}
			n := serverName(t)
			if _, dup := servers[n]; dup {
				return usageError{fmt.Errorf("--tools %s: two tool files are named %s", t, n)}
			}
			servers[n] = upstreamDef{Command: self, Args: []string{"eval", "upstream", "--tools", abs, "--name", n}, Env: evalChildEnv, canned: true}
		}
	}
	qs, err := eval.LoadQueries(queries)
	if err != nil {
		return err
	}
	args, err := loadCallArguments(queries)
	if err != nil {
		return err
	}
	if f.sample > 0 {
		qs = sampleQueries(qs, filter, f.sample)
		filter = nil
	}

	counter, err := payload.NewCounter(payload.O200k)
	if err != nil {
		return err
	}
	st, full, err := listUpstreams(ctx, servers, counter)
	if err != nil {
		return err
	}
	cfgPath := filepath.Join(tmp, "upstreams.json")
	cfg := map[string]any{"mcpServers": servers}
	b, _ := json.Marshal(cfg)
	if err := os.WriteFile(cfgPath, b, 0o644); err != nil {
		return err
	}
	if db == "" {
		db = filepath.Join(tmp, "capbroker.db")
	}
	env := gatewayEnv(tmp, db, ranker, rankerSet)
	opts := &eval.SessionOptions{Turns: f.turns, FullTokens: full, Counter: counter, Filter: filter, Limit: limit, Arguments: args}

	g := &evalGateway{bin: bin, args: append([]string{"gateway", "--mcp-config", cfgPath, "--no-learn", "--log-level", "info"}, f.gatewayArg...), env: env, dir: tmp, stderr: m.Stderr}
	var reports []*eval.SessionReport
	stopHTTP, url, cards, err := g.startHTTP(ctx, len(servers), f.ready)
	if err != nil {
		return err
	}
	if f.transport != "stdio" {
		opts.Transport = "http"
		rep, err := eval.RunSession(ctx, httpConnector(url), st, qs, opts)
		if err != nil {
			stopHTTP()
			return err
		}
		reports = append(reports, rep)
	}
	stopHTTP()
	if f.transport != "http" {
		o := *opts
		o.Transport = "stdio"
		if f.stdioMax > 0 && (o.Limit == 0 || o.Limit > f.stdioMax) {
			o.Limit = f.stdioMax
		}
		rep, err := eval.RunSession(ctx, g.stdioConnector(cards, f.ready), st, qs, &o)
		if err != nil {
			return err
		}
		reports = append(reports, rep)
	}
	if asJSON {
		if len(reports) == 1 {
			return writeJSON(m.Stdout, reports[0])
		}
		return writeJSON(m.Stdout, reports)
	}
	for i, r := range reports {
		if i > 0 {
			fmt.Fprintln(m.Stdout)
		}
		if err := r.WriteText(m.Stdout); err != nil {
			return err
		}
	}
	return nil
}

// sampleQueries keeps at most n of the queries that pass filter, spread
// evenly over the file (every len/n-th).
func sampleQueries(qs []eval.Query, filter func(*eval.Query) bool, n int) []eval.Query {
	var kept []eval.Query
	for i := range qs {
		if filter == nil || filter(&qs[i]) {
			kept = append(kept, qs[i])
		}
	}
	if len(kept) <= n {
		return kept
	}
	out := make([]eval.Query, 0, n)
	for i := range n {
		out = append(out, kept[i*len(kept)/n])
	}
	return out
}

// loadCallArguments reads the optional "arguments" field of each query:
// {"gold tool": {arguments}}, what the agent sends when it calls it.
func loadCallArguments(path string) (map[string]map[string]json.RawMessage, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string]map[string]json.RawMessage{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for line := 1; sc.Scan(); line++ {
		if !strings.Contains(sc.Text(), `"arguments"`) {
			continue
		}
		var q struct {
			ID        string                     `json:"id"`
			Arguments map[string]json.RawMessage `json:"arguments"`
		}
		if err := json.Unmarshal(sc.Bytes(), &q); err != nil {
			return nil, fmt.Errorf("%s:%d: arguments: %w", path, line, err)
		}
		if q.ID == "" {
			q.ID = "line " + strconv.Itoa(line)
		}
		for k, v := range q.Arguments {
			// ${VAR} in arguments, as in --upstreams: paths under a
			// folder of the run.
			q.Arguments[k] = json.RawMessage(os.ExpandEnv(string(v)))
		}
		if len(q.Arguments) > 0 {
			out[q.ID] = q.Arguments
		}
	}
	return out, sc.Err()
}

// listUpstreams connects to each upstream directly, as a client without
// the gateway would, and returns their tools as the session eval knows
// them and the tokens of the full list (every tool, as listed).
func listUpstreams(ctx context.Context, servers map[string]upstreamDef, counter *payload.Counter) ([]eval.SessionTool, int, error) {
	names := make([]string, 0, len(servers))
	for n := range servers {
		names = append(names, n)
	}
	sort.Strings(names)
	var all []*mcp.Tool
	var st []eval.SessionTool
	count := map[string]int{}
	for _, n := range names {
		s := servers[n]
		cmd := exec.CommandContext(ctx, s.Command, s.Args...)
		cmd.Env = os.Environ()
		for k, v := range s.Env {
			cmd.Env = append(cmd.Env, k+"="+v)
		}
		c := mcp.NewClient(&mcp.Implementation{Name: "capbroker-eval", Version: "1"}, nil)
		cs, err := c.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
		if err != nil {
			return nil, 0, fmt.Errorf("starting upstream %s: %w", n, err)
		}
		for t, err := range cs.Tools(ctx, nil) {
			if err != nil {
				cs.Close()
				return nil, 0, fmt.Errorf("listing upstream %s: %w", n, err)
			}
			all = append(all, t)
			schema, _ := json.Marshal(t.InputSchema)
			st = append(st, eval.SessionTool{Name: t.Name, Server: n, Upstream: t.Name, Gateway: n + "__" + t.Name, InputSchema: schema, Canned: s.canned})
			count[t.Name]++
		}
		cs.Close()
	}
	for i := range st {
		if count[st[i].Upstream] > 1 {
			st[i].Name = st[i].Gateway
		}
	}
	body, err := json.Marshal(all)
	if err != nil {
		return nil, 0, err
	}
	return st, counter.Count(string(body)), nil
}

// gatewayEnv is the environment of the gateway under test: this one's,
// with a home, config, cache and data directory of its own (so it
// discovers nothing and learns from nothing), the embedding cache db,
// and the ranker when one was asked for.
func gatewayEnv(tmp, db, ranker string, rankerSet bool) []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME", "CAPBROKER_DB", "CAPBROKER_RANKER", "CAPBROKER_INDEX", "CLAUDE_CONFIG_DIR":
			continue
		}
		env = append(env, kv)
	}
	for _, d := range []string{"home", "config", "cache", "data"} {
		os.MkdirAll(filepath.Join(tmp, d), 0o755)
	}
	env = append(env, "HOME="+filepath.Join(tmp, "home"), "XDG_CONFIG_HOME="+filepath.Join(tmp, "config"),
		"XDG_CACHE_HOME="+filepath.Join(tmp, "cache"), "XDG_DATA_HOME="+filepath.Join(tmp, "data"), "CAPBROKER_DB="+db)
	if rankerSet {
		env = append(env, "CAPBROKER_RANKER="+ranker)
	}
	for k, v := range evalChildEnv {
		env = append(env, k+"="+v)
	}
	return env
}

// evalGateway runs the gateway under test.
type evalGateway struct {
	bin    string
	args   []string
	env    []string
	dir    string
	stderr io.Writer
}

func (g *evalGateway) command(ctx context.Context, extra ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, g.bin, append(append([]string{}, g.args...), extra...)...)
	cmd.Env, cmd.Dir = g.env, g.dir
	return cmd
}

// evalGatewayStatus is what the session eval reads of /status.
type evalGatewayStatus struct {
	Upstreams []struct {
		Name      string `json:"name"`
		Connected bool   `json:"connected"`
		Error     string `json:"error"`
	} `json:"upstreams"`
	Ranking struct {
		Ranker    string `json:"ranker"`
		ByMeaning bool   `json:"by_meaning"`
		Cards     int    `json:"cards"`
	} `json:"ranking"`
}

// startHTTP starts the gateway over HTTP on a free loopback port and
// waits until every upstream is connected and, unless it ranks by words,
// its catalog ranks by meaning. It returns what stops it, the MCP URL and
// the catalog's cards (0 when it ranks by words).
func (g *evalGateway) startHTTP(ctx context.Context, servers int, wait time.Duration) (func(), string, int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, "", 0, err
	}
	addr := l.Addr().String()
	l.Close()
	cctx, cancel := context.WithCancel(ctx)
	cmd := g.command(cctx, "--addr", addr)
	var logBuf tail
	cmd.Stderr = &logBuf
	if err := cmd.Start(); err != nil {
		cancel()
		return nil, "", 0, fmt.Errorf("starting the gateway %s: %w", g.bin, err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	stop := func() { cancel(); <-done }
	deadline := time.Now().Add(wait)
	var st evalGatewayStatus
	stable := 0
	for {
		select {
		case <-done:
			return nil, "", 0, fmt.Errorf("the gateway exited while starting: %s", logBuf.String())
		case <-time.After(250 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			stop()
			return nil, "", 0, fmt.Errorf("the gateway was not ready within %s (status %+v): %s", wait, st, logBuf.String())
		}
		resp, err := http.Get("http://" + addr + "/status")
		if err != nil {
			continue
		}
		err = json.NewDecoder(resp.Body).Decode(&st)
		resp.Body.Close()
		if err != nil {
			continue
		}
		up := 0
		for _, u := range st.Upstreams {
			if u.Connected {
				up++
			}
		}
		if up < servers || (st.Ranking.Ranker != "lexical" && !st.Ranking.ByMeaning) {
			stable = 0
			continue
		}
		// Ready twice in a row: a catalog rebuilt as the last upstream
		// came is embedded too.
		if stable++; stable >= 2 {
			cards := st.Ranking.Cards
			if st.Ranking.Ranker == "lexical" {
				cards = 0 // no ranking line to wait for over stdio
			}
			return stop, "http://" + addr + "/mcp", cards, nil
		}
	}
}

// agentClient is the scripted agent's MCP client: it calls itself
// claude-code, as Claude Code does, and ignores list_changed (it sets no
// handler for it).
func agentClient() *mcp.Client {
	return mcp.NewClient(&mcp.Implementation{Name: "claude-code", Version: "2.0.0"}, nil)
}

func httpConnector(url string) eval.Connector {
	return func(ctx context.Context) (*mcp.ClientSession, error) {
		return agentClient().Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url}, nil)
	}
}

var rankingLine = regexp.MustCompile(`msg="ranking by meaning and words".* cards=(\d+)`)

// stdioConnector starts a gateway process over stdio for each session
// and waits until its catalog of cards ranks by meaning (or, ranking by
// words, until its upstreams started).
func (g *evalGateway) stdioConnector(cards int, wait time.Duration) eval.Connector {
	return func(ctx context.Context) (*mcp.ClientSession, error) {
		cmd := g.command(context.WithoutCancel(ctx))
		ready := make(chan struct{})
		w := &lineWatch{match: func(line string) bool {
			if m := rankingLine.FindStringSubmatch(line); m != nil {
				n, _ := strconv.Atoi(m[1])
				return n >= cards
			}
			return cards == 0 && strings.Contains(line, `msg="upstreams started"`)
		}, ready: ready}
		cmd.Stderr = w
		cs, err := agentClient().Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
		if err != nil {
			return nil, fmt.Errorf("starting the gateway over stdio: %w: %s", err, w.log.String())
		}
		select {
		case <-ready:
			return cs, nil
		case <-time.After(wait):
			cs.Close()
			return nil, fmt.Errorf("the stdio gateway did not rank its %d cards by meaning within %s: %s", cards, wait, w.log.String())
		case <-ctx.Done():
			cs.Close()
			return nil, ctx.Err()
		}
	}
}

// lineWatch closes ready at the first line of a log that matches, and
// keeps the log's tail.
type lineWatch struct {
	mu    sync.Mutex
	match func(string) bool
	ready chan struct{}
	done  bool
	part  strings.Builder
	log   tail
}

func (w *lineWatch) Write(p []byte) (int, error) {
	w.log.Write(p)
	w.mu.Lock()
	defer w.mu.Unlock()
	w.part.Write(p)
	s := w.part.String()
	for {
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			break
		}
		if !w.done && w.match(s[:i]) {
			w.done = true
			close(w.ready)
		}
		s = s[i+1:]
	}
	w.part.Reset()
	w.part.WriteString(s)
	return len(p), nil
}

// tail keeps the last 4 KiB written to it.
type tail struct {
	mu sync.Mutex
	b  []byte
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > 4096 {
		t.b = t.b[len(t.b)-4096:]
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.b)
}
