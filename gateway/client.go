package gateway

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/capbroker/capbroker/policy"
)

// ClientProfile is what the gateway knows of a client it serves
// (Options.Client): whether the client asks its user before every tool
// call, and whether it has file tools of its own.
type ClientProfile struct {
	// AsksEachCall: the client asks its user before each tool call (its
	// own permission prompt), so the gateway passes irreversible tools
	// through and does not ask again.
	AsksEachCall bool
	// FileTools: the client reads, writes and edits files with tools of
	// its own, so sessions get no MCP coding floor unless pinned.
	FileTools bool
}

// Clients are the clients the gateway knows, by the name "capbroker
// client add" takes. Each asks its user before an MCP tool call unless
// the user turned that off in the client:
//
//   - claude-code: a permission prompt per tool (unless allowed in its
//     settings' permissions, or --dangerously-skip-permissions); Read,
//     Write, Edit of its own.
//   - claude-desktop: "Allow this tool call?" per call (or per chat).
//   - vscode: GitHub Copilot's agent mode confirms each MCP tool call
//     (unless auto-approved, chat.tools.autoApprove); file edits of its own.
//   - cursor: the agent asks before running an MCP tool (unless auto-run
//     is on); file edits of its own.
//
// Other clients (Windsurf, Cline with auto-approve, SDK agents) keep the
// gateway's gate: irreversible tools held unless allowed, and each call
// asked through elicitation.
var Clients = map[string]ClientProfile{
	"claude-code":    {AsksEachCall: true, FileTools: true},
	"claude-desktop": {AsksEachCall: true},
	"vscode":         {AsksEachCall: true, FileTools: true},
	"cursor":         {AsksEachCall: true, FileTools: true},
}

// ParseClient checks a client name for Options.Client ("" is none).
func ParseClient(name string) (string, error) {
	if name == "" {
		return "", nil
	}
	if _, ok := Clients[name]; ok {
		return name, nil
	}
	names := make([]string, 0, len(Clients))
	for n := range Clients {
		names = append(names, n)
	}
	sort.Strings(names)
	return "", fmt.Errorf("unknown client %q (want %s)", name, strings.Join(names, ", "))
}

// client is the profile of Options.Client (zero when none).
func (o *Options) client() ClientProfile { return Clients[o.Client] }

// noFileFloor returns floors without the coding family's floor, for a
// client with file tools of its own: what the floor would add, the client
// has already. Pins (Options.Always, alwaysLoad) still list MCP file tools.
func noFileFloor(floors map[policy.Family][]string) map[policy.Family][]string {
	out := map[policy.Family][]string{}
	for f, names := range policy.DefaultFloors {
		out[f] = slices.Clone(names)
	}
	for f, names := range floors {
		out[f] = slices.Clone(names)
	}
	out[policy.Coding] = []string{}
	return out
}
