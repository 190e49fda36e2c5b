package main

import (
	"context"
	"errors"
	"fmt"
	"html"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/capbroker/capbroker/gateway"
	"github.com/capbroker/capbroker/internal/atomicfile"
)

// DefaultSharedAddr is where the shared gateway listens.
const DefaultSharedAddr = "127.0.0.1:8931"

// Names of the user service.
const (
	systemdUnit  = "capbroker-gateway.service"
	launchdLabel = "dev.capbroker.gateway"
)

// serviceRunner runs a service manager's command (systemctl, launchctl);
// tests replace it. The default runs the program when it is on $PATH and
// reports errNoManager otherwise.
var serviceRunner = func(ctx context.Context, name string, args ...string) ([]byte, error) {
	if _, err := exec.LookPath(name); err != nil {
		return nil, errNoManager
	}
	return exec.CommandContext(ctx, name, args...).CombinedOutput()
}

var errNoManager = errors.New("not installed here")

// serviceGOOS is the operating system whose service manager is used;
// tests replace it.
var serviceGOOS = runtime.GOOS

// serviceSteps are the service manager's commands for one operating
// system: each step a program and its arguments.
type serviceSteps struct {
	start       [][]string // after the file is written
	tolerant    bool       // whether start's first step may fail (launchctl bootout when not loaded)
	status      []string
	stop        [][]string // before the file is removed
	afterRemove [][]string
}

// serviceManagerSteps are the commands of this system's service manager
// for the service file at path.
func serviceManagerSteps(path string) serviceSteps {
	if serviceGOOS == "darwin" {
		domain := "gui/" + strconv.Itoa(os.Getuid())
		return serviceSteps{
			start:    [][]string{{"launchctl", "bootout", domain + "/" + launchdLabel}, {"launchctl", "bootstrap", domain, path}},
			tolerant: true,
			status:   []string{"launchctl", "print", domain + "/" + launchdLabel},
			stop:     [][]string{{"launchctl", "bootout", domain + "/" + launchdLabel}},
		}
	}
	return serviceSteps{
		start:       [][]string{{"systemctl", "--user", "daemon-reload"}, {"systemctl", "--user", "enable", "--now", systemdUnit}, {"systemctl", "--user", "restart", systemdUnit}},
		status:      []string{"systemctl", "--user", "is-active", systemdUnit},
		stop:        [][]string{{"systemctl", "--user", "disable", "--now", systemdUnit}},
		afterRemove: [][]string{{"systemctl", "--user", "daemon-reload"}},
	}
}

// newServiceSubcmd is a `service` subcommand without arguments whose run
// needs the service file's path.
func (m *Main) newServiceSubcmd(use, short, example string, run func(ctx context.Context, path string) error) *cobra.Command {
	return &cobra.Command{
		Use:     use,
		Short:   short,
		Example: example,
		Args:    exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			path, err := m.serviceFile()
			if err != nil {
				return err
			}
			return run(cmd.Context(), path)
		},
	}
}

// serviceFile is the unit (Linux: a systemd user unit under
// $XDG_CONFIG_HOME/systemd/user) or agent (macOS: a launchd agent under
// ~/Library/LaunchAgents) that runs the shared gateway.
func (m *Main) serviceFile() (string, error) {
	home := m.Getenv("HOME")
	switch serviceGOOS {
	case "linux":
		cfg := m.Getenv("XDG_CONFIG_HOME")
		if cfg == "" {
			if home == "" {
				return "", errors.New("service: no home folder ($HOME is not set)")
			}
			cfg = filepath.Join(home, ".config")
		}
		return filepath.Join(cfg, "systemd", "user", systemdUnit), nil
	case "darwin":
		if home == "" {
			return "", errors.New("service: no home folder ($HOME is not set)")
		}
		return filepath.Join(home, "Library", "LaunchAgents", launchdLabel+".plist"), nil
	}
	return "", fmt.Errorf("service: no user service manager capbroker knows on %s; run the shared gateway yourself at logon "+
		"(Windows: a Task Scheduler task \"At log on\" that runs: capbroker gateway --addr %s), then: capbroker client add CLIENT --shared", serviceGOOS, DefaultSharedAddr)
}

// systemdUnitText is the unit running command (absolute) with args.
func systemdUnitText(command string, args []string) string {
	quoted := []string{systemdQuote(command)}
	for _, a := range args {
		quoted = append(quoted, systemdQuote(a))
	}
	return `# Written by "capbroker service install"; "capbroker service uninstall" removes it.
[Unit]
Description=capbroker gateway shared by your MCP clients
After=network.target

[Service]
Type=simple
ExecStart=` + strings.Join(quoted, " ") + `
Restart=on-failure
RestartSec=2

[Install]
WantedBy=default.target
`
}

func systemdQuote(s string) string {
	if s != "" && !strings.ContainsAny(s, " \t\"'\\$%;") {
		return s
	}
	return strconv.Quote(strings.ReplaceAll(s, "%", "%%"))
}

// launchdPlist is the agent running command with args at logon.
func launchdPlist(command string, args []string, logDir string) string {
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<!-- Written by "capbroker service install"; "capbroker service uninstall" removes it. -->
<plist version="1.0">
<dict>
  <key>Label</key><string>` + launchdLabel + `</string>
  <key>ProgramArguments</key>
  <array>
`)
	for _, a := range append([]string{command}, args...) {
		b.WriteString("    <string>" + html.EscapeString(a) + "</string>\n")
	}
	b.WriteString(`  </array>
  <key>RunAtLoad</key><true/>
  <key>KeepAlive</key><true/>
  <key>StandardErrorPath</key><string>` + html.EscapeString(filepath.Join(logDir, "gateway.log")) + `</string>
</dict>
</plist>
`)
	return b.String()
}

func (m *Main) newServiceCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "service install|status|uninstall",
		Short: "Run one shared gateway as a user service, for every client window to connect to",
		Long: `service runs capbroker's gateway once, as a user service started at logon,
listening on ` + DefaultSharedAddr + ` (streamable HTTP at /mcp), so that every
client window shares one set of upstream servers instead of starting its own
gateway and servers. Wire clients to it with "capbroker client add CLIENT --shared".

  install    writes the service and starts it: a systemd user unit on Linux
             (~/.config/systemd/user/` + systemdUnit + `; systemctl --user
             enable --now), a launchd agent on macOS
             (~/Library/LaunchAgents/` + launchdLabel + `.plist; launchctl
             bootstrap). On Windows, create a Task Scheduler task that runs
             "capbroker gateway --addr ` + DefaultSharedAddr + `" at log on.
             Each client "client add --shared" wires says which it is in its
             URL (?client=claude-code): Claude Code, VS Code and Cursor ask
             you before each tool call, so irreversible tools pass through
             for them. A client whose URL names none gets the gateway's gate
             (irreversible tools held), or what --client NAME says.
  status     whether the service is written and running, and the gateway's
             /status (upstreams, tools, sessions)
  uninstall  stops the service and removes it

The gateway reads what every command reads (the servers files "client add"
wrote, ~/.claude.json, ...; see capbroker discover) and applies changes to
them live. A user service does not inherit your shell's variables: put what a
server needs under its "env" (capbroker server add --env K=V).`,
		Example: `  capbroker service install
  capbroker client add claude-code --shared
  capbroker service status
  capbroker service uninstall`,
	}
	cmd.AddCommand(m.newServiceInstallCmd(), m.newServiceStatusCmd(), m.newServiceUninstallCmd())
	return cmd
}

func (m *Main) newServiceInstallCmd() *cobra.Command {
	var (
		addr    string
		client  string
		command string
		configs []string
	)
	cmd := m.newServiceSubcmd("install", "Write the shared gateway's user service and start it",
		"  capbroker service install\n  capbroker service install --addr 127.0.0.1:9000",
		func(ctx context.Context, path string) error {
			bin, warns, err := m.gatewayCommand(command)
			if err != nil {
				return err
			}
			for _, w := range warns {
				fmt.Fprintln(m.Stderr, "warning:", w)
			}
			args := []string{"gateway", "--addr", addr}
			if client != "" {
				if _, err := gateway.ParseClient(client); err != nil {
					return usageError{fmt.Errorf("--client: %w", err)}
				}
				args = append(args, "--client", client)
			}
			for _, c := range configs {
				a, err := filepath.Abs(c)
				if err != nil {
					return err
				}
				args = append(args, "--mcp-config", a)
			}
			if old, err := os.ReadFile(path); err == nil && client == "" && strings.Contains(string(old), "--client") {
				fmt.Fprintln(m.Stderr, "note: the service ran with --client for every client; now each client says which it is in its URL: wire those added with --shared before again (capbroker client add CLIENT --shared), or their irreversible tools are held")
			}
			var text string
			if serviceGOOS == "darwin" {
				logDir := filepath.Join(m.Getenv("HOME"), "Library", "Logs", "capbroker")
				if err := os.MkdirAll(logDir, 0o700); err != nil {
					return err
				}
				text = launchdPlist(bin, args, logDir)
			} else {
				text = systemdUnitText(bin, args)
			}
			if err := atomicfile.WriteFile(path, []byte(text)); err != nil {
				return fmt.Errorf("service: writing %s: %w", path, err)
			}
			fmt.Fprintf(m.Stdout, "wrote %s\n", path)
			steps := serviceManagerSteps(path)
			for i, s := range steps.start {
				out, err := serviceRunner(ctx, s[0], s[1:]...)
				if errors.Is(err, errNoManager) {
					fmt.Fprintf(m.Stdout, "%s is %v: start the gateway yourself (%s %s), or run %s where it is\n", s[0], err, bin, strings.Join(args, " "), strings.Join(s, " "))
					return nil
				}
				if err != nil && !(steps.tolerant && i == 0) {
					said := strings.TrimSpace(string(out))
					hint := ""
					if strings.Contains(said, "Failed to connect to bus") || strings.Contains(said, "DBUS_SESSION_BUS_ADDRESS") {
						// A shell with no user session: over ssh or su, in a
						// container, or as root without lingering.
						hint = "; this session has no systemd user manager (log in to a desktop or an ssh session of the user, or run loginctl enable-linger $USER), then capbroker service install again"
					}
					return fmt.Errorf("service: install wrote %s but could not start it: %s: %v: %s%s; or start the gateway yourself: %s %s",
						path, strings.Join(s, " "), err, firstLine(said, 200), hint, bin, strings.Join(args, " "))
				}
			}
			fmt.Fprintf(m.Stdout, "the shared gateway runs at http://%s/mcp; wire a client to it with: capbroker client add CLIENT --shared\n", addr)
			return nil
		})
	cmd.Flags().StringVar(&addr, "addr", DefaultSharedAddr, "address the shared gateway listens on (loopback)")
	cmd.Flags().StringVar(&client, "client", "", "the kind of client a URL without ?client= is served as (claude-code: irreversible tools pass through, no MCP coding floor); by default such clients keep the gateway's gate, and those client add --shared wires say which they are in their URL")
	cmd.Flags().StringVar(&command, "command", "", "the capbroker the service runs (default: this executable, or the capbroker on $PATH)")
	cmd.Flags().StringArrayVar(&configs, "mcp-config", nil, "servers file the gateway serves (repeatable; default: the places every command reads)")
	return cmd
}

// serviceStartHint says how to start the shared gateway, or read why it
// stopped, given its service file (path).
func serviceStartHint(path string) string {
	if !fileExists(path) {
		return "capbroker service install starts it"
	}
	if strings.HasSuffix(path, ".plist") {
		return "launchctl kickstart gui/$UID/" + strings.TrimSuffix(filepath.Base(path), ".plist") + " starts it; its log is ~/Library/Logs/capbroker/gateway.log"
	}
	return "systemctl --user restart " + filepath.Base(path) + " starts it; journalctl --user -u " + filepath.Base(path) + " says why it stopped"
}

// sharedGatewayStatus reads a gateway's /status.
func sharedGatewayStatus(ctx context.Context, addr string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/status", nil)
	if err != nil {
		return "", err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("/status answered %s", resp.Status)
	}
	return firstLine(string(body), 200), nil
}

func (m *Main) newServiceUninstallCmd() *cobra.Command {
	return m.newServiceSubcmd("uninstall", "Stop the shared gateway's service and remove it", "  capbroker service uninstall",
		func(ctx context.Context, path string) error {
			if !fileExists(path) {
				fmt.Fprintf(m.Stdout, "service: not installed (no %s); nothing to do\n", path)
				return nil
			}
			steps := serviceManagerSteps(path)
			for _, s := range steps.stop {
				if out, err := serviceRunner(ctx, s[0], s[1:]...); err != nil && !errors.Is(err, errNoManager) {
					fmt.Fprintf(m.Stderr, "warning: %s: %v: %s\n", strings.Join(s, " "), err, strings.TrimSpace(string(out)))
				}
			}
			if err := os.Remove(path); err != nil {
				return fmt.Errorf("service: removing %s: %w", path, err)
			}
			for _, s := range steps.afterRemove {
				serviceRunner(ctx, s[0], s[1:]...)
			}
			fmt.Fprintf(m.Stdout, "removed %s; clients wired with --shared need: capbroker client remove CLIENT (or client add CLIENT without --shared)\n", path)
			return nil
		})
}
