package gateway

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/capbroker/capbroker/route"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// RouteName is the tool that routes a task or a workflow phase to a
// plugin agent (see [Options.Router]).
const RouteName = "route_capability"

// Router routes a task or a workflow phase to the installed plugin agent
// that should take it. A *route.Cache is one.
type Router interface {
	Route(ctx context.Context, req route.Request) (route.Decision, error)
}

var _ Router = (*route.Cache)(nil)

const routeDescription = "Decide which installed plugin agent should take a task or a workflow phase (DISCUSS, PLAN, EXECUTE, VERIFY), and why. " +
	"Give the task in plain words, a phase, or both (or a capability such as code-review). " +
	"Returns the capability, the agent to delegate to (or the built-in default when no plugin fits), and an announcement to show the user. Changes nothing."

const routeSchema = `{"type":"object","properties":{` +
	`"task":{"type":"string","description":"The task, in plain words."},` +
	`"phase":{"type":"string","description":"Workflow phase: DISCUSS, PLAN, EXECUTE or VERIFY."},` +
	`"capability":{"type":"string","description":"A capability to delegate directly, e.g. code-review or tdd-implementation (wins over phase)."}}}`

// routeArgs are route_capability's arguments.
type routeArgs struct {
	Task       string `json:"task"`
	Phase      string `json:"phase"`
	Capability string `json:"capability"`
}

// routed is one decision as the model reads it.
type routed struct {
	Capability     string   `json:"capability"`
	CapabilityFrom string   `json:"capability_from"`
	Agent          string   `json:"agent"`
	Default        bool     `json:"default"`
	Confidence     string   `json:"confidence"`
	Score          int      `json:"score"`
	Reasons        []string `json:"reasons,omitempty"`
	Announcement   string   `json:"announcement,omitempty"`
	Line           string   `json:"line"`
	Unsure         string   `json:"unsure,omitempty"`
	Secondary      []routed `json:"secondary,omitempty"`
}

func routedOf(d *route.Decision, full bool) routed {
	r := routed{Capability: d.Capability, CapabilityFrom: d.CapabilityFrom, Agent: d.Agent, Default: d.Default,
		Confidence: string(d.Confidence), Score: d.Score, Line: d.Line}
	if full {
		r.Reasons, r.Announcement = d.Reasons, d.Announcement
		for i := range d.Secondary {
			r.Secondary = append(r.Secondary, routedOf(&d.Secondary[i], false))
		}
	}
	return r
}

// addRouteTool lists route_capability in the session when the gateway
// has a router.
func (s *session) addRouteTool() {
	if s.g.opts.Router == nil {
		return
	}
	s.server.AddTool(&mcp.Tool{Name: RouteName, Description: routeDescription, InputSchema: json.RawMessage(routeSchema),
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, Title: "Route to a plugin agent"}}, s.route)
}

// routes reports whether name is route_capability and this session lists it.
func (s *session) routes(name string) bool { return name == RouteName && s.g.opts.Router != nil }

// route answers route_capability: the decision of the gateway's router,
// with its announcement. It only reads.
func (s *session) route(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var a routeArgs
	if len(req.Params.Arguments) > 0 {
		if err := json.Unmarshal(req.Params.Arguments, &a); err != nil {
			return errorResult(RouteName + `: arguments must be {"task": string, "phase": string, "capability": string}: ` + err.Error()), nil
		}
	}
	rr := route.Request{Task: a.Task, Phase: strings.TrimSpace(a.Phase), Capability: strings.TrimSpace(a.Capability)}
	if strings.TrimSpace(rr.Task+rr.Phase+rr.Capability) == "" {
		return errorResult(RouteName + ": give a task in plain words, a phase (DISCUSS, PLAN, EXECUTE, VERIFY) or a capability"), nil
	}
	d, err := s.g.opts.Router.Route(ctx, rr)
	if err != nil {
		return errorResult(RouteName + ": " + err.Error()), nil
	}
	out := routedOf(&d, true)
	out.Unsure = d.Unsure
	data, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		return errorResult(RouteName + ": encoding the decision: " + err.Error()), nil
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(data)}}}, nil
}
