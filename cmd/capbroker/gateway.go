package main

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/capbroker/capbroker/gateway"
	"github.com/capbroker/capbroker/policy"
	"github.com/spf13/cobra"
)

func (m *Main) newGatewayCmd() *cobra.Command {
	var (
		configPath, mode, httpAddr, token, namespace, sessionKey string
		family, task, tracePath, logLevel                        string
		timeout, startTimeout                                    time.Duration
		allowIrreversible, confirmUnasked                        bool
	)
	cmd := &cobra.Command{
		Use:   "gateway --config FILE [--mode all|search|call] [--http ADDR]",
		Short: "Serve one MCP server in front of all your MCP servers, exposing only what each session needs",
		Long: `gateway fronts the MCP servers of an .mcp.json-style file ({"mcpServers": {...}})
and serves them as one MCP server, over stdio or, with --http, streamable HTTP at
/mcp (plus /metrics and /status).

Modes:
  all     every upstream tool, a plain pass-through
  search  the floor plus find_capability; what it finds is added to the session
          (notifications/tools/list_changed)  [default]
  call    the floor plus find_capability and call_capability(name, arguments),
          for clients that ignore list_changed

Tools are named server__tool (--namespace collisions keeps plain names unless
two servers offer the same one). Irreversible tools are held back unless
allowed (--allow-irreversible, or "allowIrreversible": true on a server); each
such call then asks the user through MCP elicitation.

--http binds loopback when ADDR has no host (":8080"); any other address needs
a bearer token (--token or $CAPBROKER_GATEWAY_TOKEN).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if configPath == "" {
				return usageError{errors.New("gateway: --config FILE is required")}
			}
			md, err := gateway.ParseMode(mode)
			if err != nil {
				return usageError{fmt.Errorf("gateway: --mode: %w", err)}
			}
			ns, err := gateway.ParseNamespacing(namespace)
			if err != nil {
				return usageError{fmt.Errorf("gateway: --namespace: %w", err)}
			}
			var level slog.Level
			if err := level.UnmarshalText([]byte(logLevel)); err != nil {
				return usageError{fmt.Errorf("gateway: --log-level: %w", err)}
			}
			cfg, err := gateway.LoadConfig(configPath)
			if err != nil {
				return err
			}
			if token == "" {
				token = m.Getenv("CAPBROKER_GATEWAY_TOKEN")
			}
			// stdout carries MCP in stdio mode: the log goes to stderr.
			logger := slog.New(slog.NewTextHandler(m.Stderr, &slog.HandlerOptions{Level: level}))
			opts := &gateway.Options{
				Mode: md, Namespace: ns, Family: policy.ParseFamily(family), Task: task,
				CallTimeout: timeout, StartTimeout: startTimeout,
				AllowIrreversible: allowIrreversible, ConfirmUnasked: confirmUnasked, Logger: logger,
			}
			if tracePath != "" {
				f, err := os.OpenFile(tracePath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
				if err != nil {
					return fmt.Errorf("gateway: opening the trace: %w", err)
				}
				defer f.Close()
				opts.Trace = gateway.NewJSONLTracer(f)
			}
			g, err := gateway.New(cfg, opts)
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			var ln interface{ Close() error }
			if httpAddr != "" {
				// Refuse a bad address before starting any upstream.
				l, err := gateway.Listen(httpAddr, token)
				if err != nil {
					return usageError{fmt.Errorf("gateway: --http: %w", err)}
				}
				ln = l
				defer ln.Close()
				if err := g.Start(ctx); err != nil {
					return err
				}
				defer g.Close()
				logger.Info("gateway listening", "url", "http://"+l.Addr().String()+"/mcp", "mode", md, "tools", len(g.Tools()))
				return gateway.Serve(ctx, l, g.Handler(&gateway.HTTPOptions{Token: token}))
			}
			if err := g.Start(ctx); err != nil {
				return err
			}
			defer g.Close()
			logger.Info("gateway serving stdio", "mode", md, "tools", len(g.Tools()))
			return g.ServeStdio(ctx, readCloser{m.Stdin}, writeCloser{m.Stdout}, sessionKey)
		},
	}
	f := cmd.Flags()
	f.StringVar(&configPath, "config", "", `MCP servers file ({"mcpServers": {name: {command,args,env} | {url,headers}}})`)
	f.StringVar(&mode, "mode", "search", "exposure mode: all, search or call")
	f.StringVar(&httpAddr, "http", "", "serve streamable HTTP at ADDR (path /mcp) instead of stdio")
	f.StringVar(&token, "token", "", "bearer token required on HTTP requests (default $CAPBROKER_GATEWAY_TOKEN)")
	f.StringVar(&namespace, "namespace", "always", "tool names: always server__tool, or collisions (only names two servers share)")
	f.StringVar(&sessionKey, "session", "", "session name for the stdio client (keeps its exposed tools across reconnects)")
	f.StringVar(&family, "family", string(policy.Coding), "task family whose floor every session starts with")
	f.StringVar(&task, "task", "", "also select tools for this task when a session starts")
	f.DurationVar(&timeout, "timeout", 60*time.Second, "per-call timeout for upstreams that set none")
	f.DurationVar(&startTimeout, "start-timeout", 30*time.Second, "timeout to start an upstream and list its tools")
	f.BoolVar(&allowIrreversible, "allow-irreversible", false, "expose irreversible tools of every server (each call asks the user)")
	f.BoolVar(&confirmUnasked, "confirm-unasked", false, "run irreversible calls for clients that cannot be asked (no elicitation)")
	f.StringVar(&tracePath, "trace", "", "append selections, finds and calls as JSON lines to FILE")
	f.StringVar(&logLevel, "log-level", "info", "log level on stderr: debug, info, warn, error")
	return cmd
}

type readCloser struct{ io.Reader }

func (readCloser) Close() error { return nil }

type writeCloser struct{ io.Writer }

func (writeCloser) Close() error { return nil }
