package main

import (
	"fmt"
	"log/slog"

	"github.com/spf13/cobra"

	"github.com/capbroker/capbroker/httpapi"
)

func (m *Main) newServeCmd() *cobra.Command {
	var (
		cf    catalogFlags
		addr  string
		token string
	)
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve the HTTP JSON API, metrics and the explorer page",
		Long: `Serve runs the HTTP JSON API (POST /v1/select, /v1/find, GET /v1/cards, ...),
Prometheus metrics at /metrics, the OpenAPI document at /openapi.json and the
explorer page at /. It binds 127.0.0.1 unless told otherwise; any other
address requires a bearer token (--token or CAPBROKER_TOKEN). Ctrl-C shuts it
down gracefully, finishing requests in flight.`,
		Example: `  capbroker serve
  capbroker serve --addr 0.0.0.0:8080 --token "$(openssl rand -hex 16)"`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			if token == "" {
				token = m.Getenv("CAPBROKER_TOKEN")
			}
			b, err := m.broker(ctx, &cf, nil)
			if err != nil {
				return err
			}
			logger := slog.New(slog.NewJSONHandler(m.Stderr, nil))
			srv, err := httpapi.New(b, &httpapi.Options{Addr: addr, Token: token, Logger: logger, Extra: m.apiExtras(ctx, &cf)})
			if err != nil {
				return usageError{err}
			}
			return srv.Run(ctx, func(a string) {
				fmt.Fprintf(m.Stdout, "capbroker serving %d cards on http://%s (explorer at /, API under /v1/)\n", b.Catalog().Len(), a)
			})
		},
	}
	cf.register(cmd)
	cmd.Flags().StringVar(&addr, "addr", httpapi.DefaultAddr, "listen address")
	cmd.Flags().StringVar(&token, "token", "", "bearer token clients must send (default $CAPBROKER_TOKEN)")
	return cmd
}
