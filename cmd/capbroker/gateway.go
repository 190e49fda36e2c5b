package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/capbroker/capbroker/dense"
	"github.com/capbroker/capbroker/gateway"
	"github.com/capbroker/capbroker/index"
	"github.com/capbroker/capbroker/plan"
	"github.com/capbroker/capbroker/policy"
	"github.com/capbroker/capbroker/source"
	srcmcp "github.com/capbroker/capbroker/source/mcp"
	"github.com/capbroker/capbroker/store"
	"github.com/spf13/cobra"
)

func (m *Main) newGatewayCmd() *cobra.Command {
	var (
		configs                                                  []string
		mode, httpAddr, token, namespace, sessionKey, family     string
		task, tracePath, logLevel, indexDir                      string
		planFile, planTask                                       string
		dbf                                                      storeFlags
		timeout, startTimeout, startWait, sessionIdle, retention time.Duration
		maxSessions, maxListItems, maxListPages                  int
		findK, findBudget                                        int
		client                                                   string
		always                                                   []string
		maxClientSessions                                        int
		allowIrreversible, confirmUnasked, holdNew, inheritEnv   bool
		noLearn                                                  bool
		watchEvery                                               time.Duration
		plugins                                                  []string
		hf                                                       httpFlags
		ff                                                       fleetFlags
		yamlPath                                                 string
		profile                                                  string
	)
	cmd := &cobra.Command{
		Use:   "gateway [--mcp-config FILE]... [--mode auto|search|call|all] [--addr ADDR]",
		Short: "Serve one MCP server in front of all your MCP servers, exposing only what each session needs",
		Long: `gateway fronts your MCP servers and serves them as one MCP server, over stdio
or, with --addr, streamable HTTP at /mcp (plus /metrics and /status).

Which servers: with --mcp-config FILE (repeatable), the servers of those files
({"mcpServers": {...}}, any client's shape; ${VAR} expanded). Without it, the
servers your MCP clients are configured with: ./.mcp.json, ./.vscode/mcp.json,
./.cursor/mcp.json, ~/.claude.json (user and this project's), Claude Desktop,
VS Code and Cursor user configs, and what capbroker.yaml (./capbroker.yaml, or
--config FILE) names (mcp_configs, roots). An entry that runs "capbroker
gateway" itself is left out: its --mcp-config file is read instead. These
are the places every command reads (capbroker discover lists them).
"capbroker client add" writes the gateway into a client's config for you.
The gateway watches the files it serves from (--watch) and applies changes
without a restart: added servers start, removed ones stop, sessions get
list_changed ("capbroker server add|remove|disable" make such changes).

Modes:
  auto    the floor plus find_capability and call_capability(name, arguments);
          what find_capability finds is added to the session's list
          (notifications/tools/list_changed) and is callable through
          call_capability too: works with clients that refresh on list_changed
          and with those that do not  [default]
  search  the floor plus find_capability; what it finds is added to the session
          (list_changed), no call_capability
  call    the floor plus find_capability and call_capability; the list never
          changes (a stable prompt-cache prefix)
  all     every upstream tool, a plain pass-through

When plugin agents are installed (./.claude, ~/.claude, or the --plugins
folders), auto, search and call modes also list route_capability: a task or a phase
in, the plugin agent to delegate it to and its announcement out (read-only).

What an agent sees: the floor of the task family (none from MCP servers for a
client with file tools of its own), the pins, find_capability and, in auto and
call modes, call_capability. Pins are listed from the start: the tools of a
server with "alwaysLoad": true, tools whose _meta has "anthropic/alwaysLoad":
true, and what --always or always: in capbroker.yaml names. A find costs at
most --find-budget tokens (800): compact JSON, per match a name, one line,
a confidence, a short reason, and the input schema of the confident ones only,
which join the list; a task of several steps gets two matches a step. Any
allowed tool also runs when called by name, shown or not (directly or through
call_capability), and joins the list; names are forgiving (the bare tool name,
mcp__capbroker__server__tool, case and separator slips), a misspelt one gets
"did you mean", and bad arguments get the schema to send.

Profiles: --profile NAME serves only what that profile of
~/.config/capbroker/profiles.json allows ("capbroker profile"; client add
--profile writes it): its servers (the others are not started), its tool
patterns, its pins. A project's capbroker.yaml may choose one too (profile:
NAME), which only narrows; an identity may name one (profile: NAME), and an
HTTP client may ask for one (the Capbroker-Profile header, or ?profile=), each
narrowing its own sessions. Edits of the profiles file apply without a restart.

Tools are named server__tool (--namespace collisions keeps plain names unless
two servers offer the same one). Irreversible tools fit the client: with
--client claude-code, claude-desktop, vscode or cursor (capbroker client add
writes it), clients that ask their user before every tool call, they pass
through and the gateway does not ask again. Elsewhere they are held back unless
allowed (--allow-irreversible, or "allowIrreversible": true on a server); each
such call then asks the user through MCP elicitation (--confirm-unasked runs
them for clients that cannot be asked). Every refusal names the flag that
releases it. A tool whose description
or input schema changed since it was first seen (pins in the --index folder,
shared with capbroker discover) is held back until "capbroker approve"; so is
every tool when that pins file was deleted or is corrupt, and, with --hold-new,
every tool never seen before (a renamed tool is new). A held tool is not
absent: find_capability lists it under "held" with why and what releases it,
a call to it says the same, and /status lists every held tool.

Each session's tools and trace go to the session database (--db, as for
capbroker session): a client that reconnects under the same session name
(--session for stdio, the Capbroker-Session header over HTTP) gets the same
tools; "capbroker trace --session NAME" shows what it was given, found and
called. Sessions not updated for --retention (30 days), and traces as old, are
deleted at start and once a day, as serve does.

Plans: with --plan FILE, a session that names a task of the plan (--plan-task
ID over stdio, the Capbroker-Plan-Task header or plan_task parameter over HTTP)
starts with that task's capabilities (assembled as "capbroker assemble" does,
the plan's names first) plus the floor, instead of the selection for --task.
An agent moves to the next task by calling find_capability with task: its list
becomes that task's, and its finds rank the task's tools first.
"PLAN_ID/TASK_ID" names a task of a plan recorded in the session database
("capbroker plan" prints each plan's id).

Ranking: selections and find_capability rank as capbroker serve does, by
meaning and words with the built-in sentence encoder (or the embeddings endpoint
CAPBROKER_EMBED_MODEL names), card vectors cached in the data directory; tools
not embedded yet (a new upstream, a changed tool) are embedded in the
background while the gateway ranks by words. CAPBROKER_RANKER=lexical ranks by
words only. /status ("ranking") says how it ranks and how often it fell back.
Ranking learns from the gateway's own sessions (what a session asked before
calling a tool), read from the session database at start and once a day;
--no-learn or learn: false in capbroker.yaml turns that off.

The gateway answers a client's initialize at once and adds upstreams as they
start (list_changed); other requests wait for starting upstreams at most
--start-wait. Limits: --max-sessions open at once (HTTP), --session-idle before
an idle HTTP session ends, --max-upstream-tools and --max-list-pages per
upstream listing.

--addr binds loopback when ADDR has no host (":8080"); any other address needs
a bearer token (--token or $CAPBROKER_TOKEN, as for capbroker serve) or
--identities FILE (a token per identity, each with its session quota, request
rate and tools; capbroker identity new makes one).

A fleet: replicas started with one PostgreSQL --db serve any session, whichever
replica opened it, behind a balancer with no affinity; the card vectors are
shared too. /healthz and /readyz answer probes without a token; on SIGTERM a
replica drains (--drain-delay, --drain-timeout). See docs/fleet.md.`,
		Example: `  capbroker gateway                                   # stdio, the servers your clients have
  capbroker gateway --mcp-config ~/.config/capbroker/servers.json
  capbroker gateway --addr :8931 --log-level debug    # HTTP at http://127.0.0.1:8931/mcp
  capbroker gateway --addr 0.0.0.0:8080 --db postgres://capbroker@db/capbroker --identities ids.yaml --drain-delay 2s   # one replica of a fleet
  capbroker gateway --mode call --session my-agent
  capbroker gateway --client claude-code              # as client add claude-code wires it`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			md, err := gateway.ParseMode(mode)
			if err != nil {
				return usageError{fmt.Errorf("gateway: --mode: %w", err)}
			}
			ns, err := gateway.ParseNamespacing(namespace)
			if err != nil {
				return usageError{fmt.Errorf("gateway: --namespace: %w", err)}
			}
			fam, err := policy.ParseFamily(family)
			if err != nil {
				return usageError{fmt.Errorf("gateway: --family: %w", err)}
			}
			var level slog.Level
			if err := level.UnmarshalText([]byte(logLevel)); err != nil {
				return usageError{fmt.Errorf("gateway: --log-level: %w", err)}
			}
			if token == "" {
				token = m.envToken()
			}
			configs, yamlPath, err := m.gatewayConfigFlags(configs, yamlPath)
			if err != nil {
				return err
			}
			if httpAddr != "" {
				// Refuse a bad address before reading anything.
				if err := gateway.CheckAddr(httpAddr, ff.listenToken(token)); err != nil {
					if errors.Is(err, gateway.ErrTokenRequired) {
						return usageError{fmt.Errorf("gateway: --addr: %w: give --token (or $CAPBROKER_TOKEN) or --identities FILE (capbroker identity new), or listen on 127.0.0.1", err)}
					}
					return usageError{fmt.Errorf("gateway: --addr: %w", err)}
				}
				if err := hf.check(); err != nil {
					return err
				}
			}
			ctx := cmd.Context()
			warnedNone := false
			readServers := func(ctx context.Context) (*upstreams, error) {
				var up *upstreams
				var err error
				if len(configs) > 0 {
					up, err = m.explicitUpstreams(ctx, configs, yamlPath)
					if errors.Is(err, errFrontsNone) && watchEvery > 0 {
						// A servers file with no server yet (client add
						// had none to move): serve, and start what
						// "capbroker server add" writes into it.
						if !warnedNone {
							fmt.Fprintf(m.Stderr, "warning: %v; fronting none until one is added or enabled (capbroker server add NAME -- COMMAND, server enable NAME), applied live\n", err)
							warnedNone = true
						}
						err = nil
					}
				} else {
					up, err = m.discoveredUpstreams(ctx, yamlPath)
				}
				if err != nil {
					return nil, err
				}
				ps, watch, err := m.gatewayProfiles(profile, yamlPath)
				if err != nil {
					return nil, err
				}
				up.narrow(ps)
				up.profiles = ps
				for _, w := range watch {
					if !slices.Contains(up.watch, w) {
						up.watch = append(up.watch, w)
					}
				}
				return up, nil
			}
			up, err := readServers(ctx)
			if err != nil {
				return err
			}
			// stdout carries MCP in stdio mode: the log goes to stderr.
			logger := slog.New(slog.NewTextHandler(m.Stderr, &slog.HandlerOptions{Level: level}))
			for _, n := range up.notes {
				logger.Warn("upstream configuration", "note", n)
			}
			logger.Info("servers read", "servers", len(up.servers), "places", strings.Join(up.looked, "; "))
			for _, s := range up.servers {
				logger.Debug("upstream", "server", s.Name, "transport", s.Transport(), "from", s.Where())
			}

			if indexDir == "" {
				indexDir = up.index
			}
			if indexDir == "" {
				indexDir = index.DefaultDir(m.Getenv)
			}
			pins, err := index.Open(indexDir, &index.Options{HoldNew: holdNew})
			if err != nil {
				return fmt.Errorf("gateway: the pinned tool digests: %w", err)
			}

			var pf *plan.Plan
			if planFile != "" {
				if pf, err = m.readPlan(planFile); err != nil {
					return err
				}
			}
			opts := &gateway.Options{
				Mode: md, Namespace: ns, Family: fam, Task: task, PlanTask: planTask,
				CallTimeout: timeout, StartTimeout: startTimeout, StartWait: startWait, Pins: pins,
				MaxSessions: maxSessions, MaxListItems: maxListItems, MaxListPages: maxListPages,
				AllowIrreversible: allowIrreversible, ConfirmUnasked: confirmUnasked, Logger: logger,
				InheritEnv: inheritEnv, Tokens: m.tokenStore(), FindK: findK, FindBudget: findBudget,
			}
			if opts.Floors, err = m.configFloors(&discoveryFlags{}); err != nil {
				return err
			}
			if opts.Client, err = gateway.ParseClient(client); err != nil {
				return usageError{fmt.Errorf("gateway: --client: %w", err)}
			}
			pinnedNames, err := m.configAlways(&discoveryFlags{config: yamlPath})
			if err != nil {
				return err
			}
			opts.Always = append(pinnedNames, always...)
			router, routable, err := m.gatewayRouter(ctx, plugins)
			if err != nil {
				return err
			}
			if router != nil {
				opts.Router = router
				logger.Debug("route_capability listed", "agents and commands", routable)
			}
			closeRanking, err := m.gatewayRanking(ctx, opts, logger, &dbf)
			if err != nil {
				return err
			}
			defer closeRanking()
			var tracers gateway.Tracers
			st, err := m.gatewayStore(ctx, &dbf, logger)
			if err != nil {
				return err
			}
			if st != nil {
				defer st.Close()
				go keepPruned(ctx, st, retention, 24*time.Hour, logger)
				taskName := task
				if taskName == "" {
					taskName = "capbroker gateway (" + string(md) + " mode)"
				}
				if m.learning(&catalogFlags{noLearn: noLearn, discoveryFlags: discoveryFlags{config: yamlPath}}) {
					opts.Learn = st
				}
				ss := gateway.NewStoreSessions(st, &gateway.StoreOptions{Task: taskName, NoTask: task == "", Logger: logger, Durable: fleetStore(st)})
				defer ss.Close() // before st.Close: writes what is queued
				opts.Store = ss
				tracers = append(tracers, ss)
			}
			if tracePath != "" {
				f, err := os.OpenFile(tracePath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
				if err != nil {
					return fmt.Errorf("gateway: opening the trace: %w", err)
				}
				defer f.Close()
				tracers = append(tracers, gateway.NewJSONLTracer(f))
			}
			if len(tracers) > 0 {
				opts.Trace = tracers
			}
			if pf != nil || planTask != "" || st != nil {
				opts.PlanTasks = &gatewayPlans{file: pf, st: st, log: logger}
			}
			g, err := gateway.New(&gateway.Config{Servers: up.servers}, opts)
			if err != nil {
				return err
			}
			g.SetProfiles(*up.profiles)
			if len(up.profiles.ServeNames) > 0 {
				logger.Info("serving profiles", "profiles", strings.Join(up.profiles.ServeNames, ", "), "servers", len(up.servers))
			}
			fc := newFleetConfig(g, st, indexDir, logger) // nil: not a fleet
			if httpAddr != "" {
				ids, err := ff.loadIdentities()
				if err != nil {
					return err
				}
				if err := checkIdentityProfiles(ids, ff.identities, up.profiles); err != nil {
					return err
				}
				l, err := gateway.Listen(httpAddr, ff.listenToken(token))
				if err != nil {
					return usageError{fmt.Errorf("gateway: --addr: %w", err)}
				}
				defer l.Close()
				// The upstreams outlive the signal that stops serving: the
				// drain finishes the calls in flight on them; g.Close ends
				// them after.
				if err := g.Start(context.WithoutCancel(ctx)); err != nil {
					return err
				}
				defer g.Close()
				go watchServers(ctx, g, up.watch, watchEvery, readServers, logger, fc)
				go logReady(ctx, g, logger)
				if m.StderrTerminal {
					go showStart(ctx, g, m.progress(), 100*time.Millisecond)
				}
				logger.Info("gateway listening", "url", "http://"+l.Addr().String()+"/mcp", "mode", md,
					"servers", len(up.servers))
				h := g.Handler(ff.httpOptions(&gateway.HTTPOptions{SessionTimeout: sessionIdle, Token: token, AllowedHosts: hf.hosts, AllowedOrigins: hf.origins, MaxClientSessions: maxClientSessions, Identities: ids}))
				return gateway.Serve(ctx, l, h, ff.serveOptions(g, &gateway.ServeOptions{ReadTimeout: hf.readTimeout, WriteTimeout: hf.writeTimeout, IdleTimeout: hf.idleTO}))
			}
			if err := g.Start(ctx); err != nil {
				return err
			}
			defer g.Close()
			go watchServers(ctx, g, up.watch, watchEvery, readServers, logger, fc)
			go logReady(ctx, g, logger)
			if m.StderrTerminal {
				go showStart(ctx, g, m.progress(), 100*time.Millisecond)
			}
			key := sessionKey
			if key == "" {
				key = "stdio-" + time.Now().UTC().Format("20060102-150405") + "-" + randomHex(4)
			}
			logger.Info("gateway serving stdio", "mode", md, "session", key, "servers", len(up.servers))
			return g.ServeStdio(ctx, readCloser{m.Stdin}, writeCloser{m.Stdout}, key)
		},
	}
	hf.register(cmd, -1)
	f := cmd.Flags()
	f.StringArrayVar(&configs, "mcp-config", nil, `MCP servers file ({"mcpServers": {name: {command,args,env} | {url,headers}}}, any client's shape); repeatable; replaces the default places`)
	f.StringVar(&profile, "profile", "", "serve only what this profile allows: its servers, tool patterns and pins (capbroker profile; client add --profile writes it)")
	f.StringVar(&yamlPath, "config", "", "capbroker config file (default ./"+source.ConfigName+" when present): mcp_configs, roots, defaults")
	f.StringVar(&mode, "mode", "auto", "exposure mode: auto, search, call or all")
	f.StringVar(&httpAddr, "addr", "", "serve streamable HTTP at ADDR (path /mcp) instead of stdio")
	alias(f, "http", "addr")
	f.StringVar(&token, "token", "", "bearer token required on HTTP requests (default $CAPBROKER_TOKEN)")
	f.StringVar(&namespace, "namespace", "always", "tool names: always server__tool, or collisions (only names two servers share)")
	f.StringVar(&sessionKey, "session", "", "session name for the stdio client: the same name gets the same tools back (default: a new session each run)")
	f.StringVar(&family, "family", string(policy.Coding), "task family whose floor every session starts with")
	f.StringVar(&task, "task", "", "also select tools for this task when a session starts")
	f.StringVar(&planFile, "plan", "", "plan file whose tasks sessions may name (--plan-task, the Capbroker-Plan-Task header)")
	f.StringVar(&planTask, "plan-task", "", "start the stdio session (and HTTP sessions that name none) with this plan task's tools: ID of a --plan task, or PLAN_ID/TASK_ID of a stored plan")
	f.DurationVar(&timeout, "call-timeout", 60*time.Second, "per-call timeout for upstreams that set none")
	f.DurationVar(&watchEvery, "watch", time.Second, "how often to look for changes in the files the servers come from, applied without a restart (0: never)")
	alias(f, "timeout", "call-timeout")
	f.DurationVar(&startTimeout, "start-timeout", srcmcp.DefaultTimeout, "time limit to start an upstream and list its tools (as discovery's)")
	f.IntVar(&maxClientSessions, "max-client-sessions", gateway.DefaultMaxClientSessions, "most MCP sessions one client keeps open at once over HTTP (by session key, else bearer token, else address); one more is refused with 429 (-1: no bound but --max-sessions)")
	f.IntVar(&maxSessions, "max-sessions", gateway.DefaultMaxSessions, "most MCP sessions open at once over HTTP; one more is refused with 503 until one ends")
	f.DurationVar(&sessionIdle, "session-idle", gateway.DefaultSessionTimeout, "end an HTTP session idle this long")
	f.IntVar(&maxListItems, "max-upstream-tools", gateway.DefaultMaxListItems, "most tools (and prompts, resources) read from one upstream; more are left out with a warning")
	f.IntVar(&maxListPages, "max-list-pages", gateway.DefaultMaxListPages, "most pages of one upstream listing (an upstream that pages forever is read once, up to this)")
	f.DurationVar(&startWait, "start-wait", gateway.DefaultStartWait, "how long a client's first requests wait for upstreams still starting (initialize never waits; later upstreams are added as they come)")
	f.BoolVar(&allowIrreversible, "allow-irreversible", false, "expose irreversible tools of every server (each call asks the user)")
	f.BoolVar(&holdNew, "hold-new", false, "quarantine tools never seen before (a renamed tool is new) until capbroker approve")
	f.BoolVar(&confirmUnasked, "confirm-unasked", false, "run irreversible calls for clients that cannot be asked (no elicitation)")
	f.StringVar(&client, "client", "", "the client this gateway serves (claude-code, claude-desktop, vscode, cursor; client add writes it): one that asks its user before each call gets irreversible tools passed through, one with its own file tools no coding floor; over HTTP a session's ?client= or Capbroker-Client header names its own")
	f.StringArrayVar(&always, "always", nil, "pin a server (all its tools) or a tool into every session's list from the start; repeatable (also always: in capbroker.yaml)")
	f.IntVar(&findK, "find-k", 0, "matches a find_capability answer holds when the agent asks for no number (default 8, and two a step for a task of several)")
	f.IntVar(&findBudget, "find-budget", gateway.DefaultFindBudget, "most tokens of a find_capability answer (o200k): past it, matches lose their schema, then their place")
	f.StringVar(&tracePath, "trace", "", "also append selections, finds and calls as JSON lines to FILE")
	f.StringVar(&indexDir, "index", "", "folder of the pinned tool digests, shared with discover and approve (default: capbroker.yaml's index, else $CAPBROKER_INDEX, else $XDG_CACHE_HOME/capbroker, else ~/.cache/capbroker)")
	f.StringVar(&logLevel, "log-level", "info", "log level on stderr: debug, info, warn, error")
	f.StringArrayVar(&plugins, "plugins", nil, "folder of plugins whose agents route_capability delegates to; repeatable (default ./.claude and ~/.claude)")
	f.DurationVar(&retention, "retention", DefaultRetention, "delete sessions not updated for this long, and traces as old, at start and once a day (0: keep everything; capbroker prune does it by hand)")
	f.BoolVar(&inheritEnv, "inherit-env", false, `pass the whole environment to stdio upstreams (default: PATH, HOME, locale, TMPDIR... and what each server's "env" and "inheritEnv" name)`)
	f.BoolVar(&noLearn, "no-learn", false,
		"rank without what past sessions asked for before calling each tool (learning from use; learn: false in capbroker.yaml does the same)")
	dbf.register(cmd)
	ff.register(cmd)
	return cmd
}

// gatewayRanking sets the gateway's ranking as serve's: hybrid by default,
// with the built-in sentence encoder or the embeddings endpoint
// CAPBROKER_EMBED_MODEL names, card vectors cached in the data
// directory's database; CAPBROKER_RANKER=lexical turns meaning off. A
// cache that cannot be opened costs the caching only. The returned
// function closes the cache.
func (m *Main) gatewayRanking(ctx context.Context, opts *gateway.Options, log *slog.Logger, dbf *storeFlags) (func(), error) {
	kind, e, why, err := m.rankerEmbedder()
	if err != nil {
		return nil, err
	}
	if why != "" {
		log.Warn(why)
	}
	if e == nil {
		log.Debug("ranking by words only", "ranker", kind)
		return func() {}, nil
	}
	opts.Embedder, opts.Dense = e, kind == dense.KindDense
	if dsn, err := m.dbPath(dbf); err == nil && store.Driver(dsn) == "postgres" {
		// A fleet: the replicas share the card vectors, so a card is
		// embedded once for all of them.
		if opts.EmbedCache, err = dense.OpenPostgresCache(ctx, dsn); err == nil {
			return func() { opts.EmbedCache.Close() }, nil
		}
		log.Warn("card vectors are not shared with the other replicas: each caches its own", "error", err)
	}
	path, err := m.embedCachePath("")
	if err == nil {
		opts.EmbedCache, err = dense.OpenCache(ctx, path)
	}
	if err != nil {
		log.Warn("card vectors are not cached: every start embeds the cards again", "error", err)
		return func() {}, nil
	}
	return func() { opts.EmbedCache.Close() }, nil
}

// gatewayStore opens the session database for the gateway. An explicit
// --db (or $CAPBROKER_DB) that cannot be opened is an error; when the
// default one cannot be, or any one is corrupt, the gateway keeps
// sessions in memory and says so (nil store): proxying needs no database.
func (m *Main) gatewayStore(ctx context.Context, f *storeFlags, log *slog.Logger) (store.Store, error) {
	explicit := f.db != "" || m.Getenv("CAPBROKER_DB") != ""
	dsn, err := m.dbPath(f)
	if err == nil {
		var st store.Store
		if st, err = store.Open(ctx, dsn); err == nil {
			return st, nil
		}
		if errors.Is(err, store.ErrCorrupt) {
			// Proxying needs no database: serve, keep sessions in memory,
			// and say which file is corrupt and how to reset it.
			log.Error("sessions are kept in memory only: the session database is corrupt (the error names the file and the command that resets it)", "error", err)
			return nil, nil
		}
		if explicit {
			return nil, fmt.Errorf("gateway: --db: %w", err)
		}
	}
	log.Warn("sessions are kept in memory only: the session database cannot be opened (pass --db)", "error", err)
	return nil, nil
}

// logReady logs once every upstream has started (or failed once): the
// gateway serves before that, adding upstreams as they come.
func logReady(ctx context.Context, g *gateway.Gateway, logger *slog.Logger) {
	if g.Ready(ctx) != nil {
		return
	}
	up := 0
	for _, s := range g.Status() {
		if s.Connected {
			up++
		}
	}
	logger.Info("upstreams started", "connected", up, "servers", len(g.Status()), "tools", len(g.Tools()), "held", len(g.Held()))
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

type readCloser struct{ io.Reader }

func (readCloser) Close() error { return nil }

type writeCloser struct{ io.Writer }

func (writeCloser) Close() error { return nil }
