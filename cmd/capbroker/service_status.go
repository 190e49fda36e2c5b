package main

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
)

// serviceStatus is what "capbroker service status" finds, as --json
// prints it. The field names are stable (docs/commands.md).
type serviceStatus struct {
	// Installed: the unit or agent file is written.
	Installed bool `json:"installed"`
	// File is the unit (Linux) or agent (macOS) file, written or not.
	File string `json:"file"`
	// Manager is what the service manager says of it ("active",
	// "inactive", "failed", ...; "unknown" when none is installed here);
	// "" when the file is not written.
	Manager string `json:"manager,omitempty"`
	// Answering: the gateway answers /status at Addr.
	Answering bool   `json:"answering"`
	Addr      string `json:"addr"`
	// URL is what clients connect to (streamable HTTP).
	URL string `json:"url"`
	// Status is the first line of the gateway's /status when answering;
	// Error why it does not answer otherwise.
	Status string `json:"status,omitempty"`
	Error  string `json:"error,omitempty"`
	// Log is where the gateway's log is: a file (macOS), or the command
	// that shows it (Linux: journalctl).
	Log string `json:"log"`
	// Start says how to start it when it does not answer.
	Start string `json:"start,omitempty"`
	// ExitCode is the command's exit code: 1 when the gateway does not
	// answer (installed or not), 0 when it does.
	ExitCode int `json:"exit_code"`
}

// serviceLog is where the service's gateway logs, given its file.
func (m *Main) serviceLog(path string) string {
	if strings.HasSuffix(path, ".plist") {
		return filepath.Join(m.Getenv("HOME"), "Library", "Logs", "capbroker", "gateway.log")
	}
	return "journalctl --user -u " + filepath.Base(path)
}

// serviceStatusOf finds the service's state and whether its gateway
// answers at addr.
func (m *Main) serviceStatusOf(ctx context.Context, path, addr string) serviceStatus {
	st := serviceStatus{Installed: fileExists(path), File: path, Addr: addr, URL: "http://" + addr + "/mcp", Log: m.serviceLog(path)}
	if st.Installed {
		cmd := serviceManagerSteps(path).status
		out, err := serviceRunner(ctx, cmd[0], cmd[1:]...)
		state := strings.TrimSpace(string(out))
		if errors.Is(err, errNoManager) {
			state = "unknown (the service manager is not installed here)"
		} else if state == "" && err != nil {
			state = err.Error()
		}
		st.Manager = firstLine(state, 100)
	}
	said, err := sharedGatewayStatus(ctx, addr)
	if err != nil {
		// As systemctl status does, a gateway that is not running is a
		// failure scripts can see.
		st.Error, st.Start, st.ExitCode = err.Error(), serviceStartHint(path), 1
		return st
	}
	st.Answering, st.Status = true, said
	return st
}

func (m *Main) newServiceStatusCmd() *cobra.Command {
	var (
		addr   string
		asJSON bool
	)
	cmd := m.newServiceSubcmd("status", "Whether the shared gateway's service is installed and running", "  capbroker service status\n  capbroker service status --json",
		func(ctx context.Context, path string) error {
			st := m.serviceStatusOf(ctx, path, addr)
			var failed error
			if !st.Answering {
				failed = fmt.Errorf("the shared gateway is not answering at http://%s: %s", addr, st.Start)
			}
			if asJSON {
				if err := writeJSON(m.Stdout, st); err != nil {
					return err
				}
				return failed
			}
			if !st.Installed {
				fmt.Fprintf(m.Stdout, "service: not installed (no %s); capbroker service install writes it\n", path)
			} else {
				fmt.Fprintf(m.Stdout, "service: installed (%s)\n", path)
				fmt.Fprintf(m.Stdout, "manager: %s\n", st.Manager)
			}
			if !st.Answering {
				fmt.Fprintf(m.Stdout, "gateway: not answering at http://%s (%s)\n", addr, st.Error)
				return failed
			}
			fmt.Fprintf(m.Stdout, "gateway: answering at %s: %s\n", st.URL, st.Status)
			return nil
		})
	cmd.Flags().StringVar(&addr, "addr", DefaultSharedAddr, "address of the shared gateway")
	cmd.Flags().BoolVar(&asJSON, "json", false, `print the status as one JSON object ({"installed","file","manager","answering","url","log","exit_code",...}); the exit code is the same`)
	return cmd
}
