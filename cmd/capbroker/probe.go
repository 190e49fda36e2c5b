package main

import (
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/spf13/cobra"
)

// newProbeCmd is "capbroker probe URL": a health check for images without
// a shell or curl (the distroless image), as Docker's and Compose's
// HEALTHCHECK run it.
func (m *Main) newProbeCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "probe URL",
		Short: "GET URL and exit 0 on a 2xx answer (a container health check: /healthz, /readyz)",
		Example: `  capbroker probe http://127.0.0.1:8080/readyz
  # compose.yaml: healthcheck: {test: ["CMD", "/usr/local/bin/capbroker", "probe", "http://127.0.0.1:8080/readyz"]}`,
		Args: exactArgs(1, "the URL to GET"),
		RunE: func(cmd *cobra.Command, args []string) error {
			c := &http.Client{Timeout: 3 * time.Second} // a health check's own timeout bounds it too
			res, err := c.Get(args[0])
			if err != nil {
				return fmt.Errorf("probe: %w", err)
			}
			defer res.Body.Close()
			body, _ := io.ReadAll(io.LimitReader(res.Body, 4096))
			if res.StatusCode/100 != 2 {
				return fmt.Errorf("probe: %s answered %s: %s", args[0], res.Status, body)
			}
			return nil
		},
	}
	return cmd
}
