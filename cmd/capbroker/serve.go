package main

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/capbroker/capbroker/httpapi"
	"github.com/capbroker/capbroker/internal/httpguard"
	"github.com/capbroker/capbroker/llm"
	"github.com/capbroker/capbroker/route"
	"github.com/capbroker/capbroker/session"
	"github.com/capbroker/capbroker/store"
)

func (m *Main) newServeCmd() *cobra.Command {
	var (
		cf    catalogFlags
		rf    routeFlags
		dbf   storeFlags
		addr  string
		token string
		hf    httpFlags
		mem   bool
		keep  time.Duration
		roots []string
	)
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve the HTTP JSON API, metrics and the explorer page",
		Long: `Serve runs the HTTP JSON API (POST /v1/select, /v1/find, /v1/route,
/v1/sessions, GET /v1/cards, /v1/capabilities, /v1/traces, ...), Prometheus
metrics at /metrics, the OpenAPI document at /openapi.json and the explorer page
at /. It binds 127.0.0.1 unless told otherwise; any other address requires a
bearer token (--token or CAPBROKER_TOKEN). Ctrl-C shuts it down gracefully,
finishing requests in flight.

Web pages cannot use it: a Host that is not localhost or an IP address (DNS
rebinding) and requests from pages of another origin are refused with 403;
--allow-host and --allow-origin widen that. The explorer page loads without
the token and asks for it. Slow clients are cut off by --read-timeout,
--write-timeout and --idle-timeout.

The catalog comes from the same flags as select (--tools, or discovery with
--root, --mcp-config, ...). Routing scans the discovered plugin agents and
commands (as capbroker route does, sharing its cache). Sessions and traces live
in the database --db names (as the session commands). POST /v1/plan needs a
language model (CAPBROKER_LLM, or the llm: section of the --config file; see
capbroker plan --help); without one it answers 501. A session is acknowledged
(201) only once stored: with the database down, POST /v1/sessions answers 503,
unless --keep-in-memory. Sessions and traces older than --retention (30 days)
are deleted at start and once a day. A corrupt SQLite database does not stop
serve: the session and trace endpoints answer 503 with the fix (capbroker prune
--reset).`,
		Example: `  capbroker serve
  capbroker serve --root ~/.claude/plugins --db postgres://capbroker@db/capbroker
  capbroker serve --addr 0.0.0.0:8080 --token "$(openssl rand -hex 16)"`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			if token == "" {
				token = m.Getenv("CAPBROKER_TOKEN")
			}
			if err := hf.check(); err != nil {
				return err
			}
			// A bad address is refused before discovery starts servers.
			if err := httpapi.CheckAddr(addr, token); err != nil {
				return usageError{fmt.Errorf("serve: --addr: %w", err)}
			}
			for i, r := range roots {
				abs, err := filepath.Abs(r)
				if err == nil {
					var fi os.FileInfo
					if fi, err = os.Stat(abs); err == nil && !fi.IsDir() {
						err = errors.New("not a folder")
					}
				}
				if err != nil {
					return usageError{fmt.Errorf("--route-root %s: %w", r, err)}
				}
				roots[i] = abs
			}
			planner, err := m.servePlanner(cf.config)
			if err != nil {
				return err
			}
			cf.background = true // embed new cards without holding up start-up
			cf.learnDB = &dbf
			b, err := m.broker(ctx, &cf, brokerOptions(&selectFlags{encoding: "o200k"}))
			if err != nil {
				return err
			}
			first := b.Catalog().Cards()
			if len(cf.tools) > 0 {
				first = nil // the catalog is tool files; routing discovers the plugins
			}
			gaps := &route.GapLog{}
			if d := m.cacheDir(); d != "" {
				gaps.Path = filepath.Join(d, "route-gaps.json")
			}
			_, router, err := m.routing(&cf.discoveryFlags, &rf, gaps, first)
			if err != nil {
				return err
			}
			logger := slog.New(slog.NewJSONHandler(m.Stderr, nil))
			var (
				mgr    *session.Manager
				traces httpapi.TraceStore
			)
			st, storeErr := m.openStore(ctx, &dbf)
			switch {
			case errors.Is(storeErr, store.ErrCorrupt):
				// Select, find, route and plan need no database: serve
				// them, and answer the session and trace endpoints 503
				// with the error (which names the file and the fix).
				logger.Error("serving without sessions and traces", "error", storeErr)
			case storeErr != nil:
				return storeErr
			default:
				defer st.Close()
				mgr = session.NewManager(b.Selector(), st, &session.Options{Logger: logger, Ranker: b, KeepInMemory: mem})
				traces = st
				go keepPruned(ctx, st, keep, 24*time.Hour, logger)
			}
			srv, err := httpapi.New(b, &httpapi.Options{
				Addr: addr, Token: token, Logger: logger,
				Planner: planner, Router: router, Sessions: mgr, Traces: traces, StoreError: storeErr,
				AllowedHosts: hf.hosts, AllowedOrigins: hf.origins, CatalogNote: catalogNote(&cf),
				ReadTimeout: hf.readTimeout, WriteTimeout: hf.writeTimeout, IdleTimeout: hf.idleTO,
				RouteRoots: roots,
			})
			if err != nil {
				return usageError{err}
			}
			return srv.Run(ctx, func(a string) {
				what := fmt.Sprintf("%d cards", b.Catalog().Len())
				if cf.fellBack {
					what += " of the embedded example catalog (none of yours found: capbroker discover lists where it looked)"
				}
				fmt.Fprintf(m.Stdout, "capbroker serving %s on http://%s (explorer at /, API under /v1/)\n", what, a)
			})
		},
	}
	cf.register(cmd)
	rf.register(cmd)
	dbf.register(cmd)
	hf.register(cmd, httpguard.DefaultTimeouts.Write)
	cmd.Flags().DurationVar(&keep, "retention", DefaultRetention, "delete sessions not updated for this long, and traces as old, at start and once a day (0: keep everything; capbroker prune does it by hand)")
	cmd.Flags().BoolVar(&mem, "keep-in-memory", false, "when the session database fails, start sessions in memory anyway (answered 202 with in_memory: true, lost if serve stops first) instead of refusing them with 503")
	cmd.Flags().StringArrayVar(&roots, "route-root", nil, "a folder whose projects and state files POST /v1/route may read and write (repeat for more); without it \"project\" and \"state\" are refused with 403")
	cmd.Flags().StringVar(&addr, "addr", httpapi.DefaultAddr, "listen address")
	cmd.Flags().StringVar(&token, "token", "", "bearer token clients must send (default $CAPBROKER_TOKEN)")
	return cmd
}

// servePlanner returns the language model behind POST /v1/plan, or nil
// when none is configured (no CAPBROKER_LLM, no llm: provider in the
// settings file). A model that is configured but unusable is an error.
func (m *Main) servePlanner(config string) (llm.Provider, error) {
	explicit := config != ""
	if !explicit {
		config = defaultConfig
	}
	if !explicit && !fileExists(config) {
		config = ""
	}
	cfg, err := llm.LoadConfig(config, m.Getenv)
	if err != nil {
		return nil, fmt.Errorf("planner: %w", err)
	}
	if cfg.Provider == "" {
		return nil, nil
	}
	p, err := llm.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("planner: %w", err)
	}
	return p, nil
}

// catalogNote is what the explorer page says about the catalog when it
// is not the user's own.
func catalogNote(cf *catalogFlags) string {
	if !cf.fellBack {
		return ""
	}
	return "This is capbroker's embedded example catalog (112 tools of 19 typical MCP servers): no capabilities of yours were found. " +
		"capbroker discover lists the places it looked; capbroker client add claude-code puts capbroker in front of your servers."
}
