package gateway

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/capbroker/capbroker/card"
	"github.com/capbroker/capbroker/policy"
	"github.com/capbroker/capbroker/route"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestRouteCapability routes through the gateway with the Go SDK client:
// route_capability is listed next to find_capability when the gateway has
// a router (and only then), is read-only, and answers a task or a phase
// with the delegation and its announcement.
func TestRouteCapability(t *testing.T) {
	cards := []card.Card{
		{Name: "review-kit:security-reviewer", Kind: card.KindAgent, Source: "review-kit", Meta: map[string]string{"plugin": "review-kit"},
			Description: "Security code review specialist. Reviews pull requests for vulnerabilities and code quality."},
		{Name: "ops-kit:deployer", Kind: card.KindAgent, Source: "ops-kit", Meta: map[string]string{"plugin": "ops-kit"},
			Description: "DevOps engineer. Builds CI/CD pipelines and deploys to Kubernetes."},
	}
	scans := 0
	cache := route.NewCache(route.New(nil, nil), func(context.Context) ([]card.Card, error) {
		scans++
		return cards, nil
	}, nil)
	g := startGateway(t, []ServerConfig{testServer("alpha")}, &Options{Mode: ModeSearch, Family: policy.General, Router: cache})
	url := serveHTTP(t, g, nil)

	for _, mode := range []string{"search", "call"} {
		cs := connect(t, url, nil, map[string]string{ModeHeader: mode})
		var tool *mcp.Tool
		var names []string
		for tl, err := range cs.Tools(context.Background(), nil) {
			if err != nil {
				t.Fatal(err)
			}
			names = append(names, tl.Name)
			if tl.Name == RouteName {
				tool = tl
			}
		}
		if tool == nil || !slices.Contains(names, policy.HatchName) {
			t.Fatalf("%s mode lists %v, want %s next to %s", mode, names, RouteName, policy.HatchName)
		}
		if tool.Annotations == nil || !tool.Annotations.ReadOnlyHint {
			t.Errorf("%s mode: %s is not marked read-only: %+v", mode, RouteName, tool.Annotations)
		}
	}

	cs := connect(t, url, nil, nil)
	for _, tc := range []struct {
		args              map[string]any
		capability, agent string
		announce          string
		secondary         int
	}{
		{map[string]any{"task": "review the pull request for security issues"}, "code-review", "review-kit:security-reviewer",
			"**Delegating code-review** → review-kit:security-reviewer", 0},
		{map[string]any{"phase": "execute", "task": "deploy it to the cluster"}, "infrastructure", "ops-kit:deployer",
			"**Delegating infrastructure** → ops-kit:deployer", 2},
		{map[string]any{"capability": "requirements-gathering"}, "requirements-gathering", "defaults/interviewer",
			"**Using built-in agent** for requirements-gathering", 0},
	} {
		text, isErr := callText(t, cs, RouteName, tc.args)
		if isErr {
			t.Fatalf("%v: %s", tc.args, text)
		}
		var got routed
		if err := json.Unmarshal([]byte(text), &got); err != nil {
			t.Fatalf("%v: %v in %s", tc.args, err, text)
		}
		if got.Capability != tc.capability || got.Agent != tc.agent || !strings.HasPrefix(got.Announcement, tc.announce) ||
			len(got.Secondary) != tc.secondary || got.Line == "" || len(got.Reasons) == 0 {
			t.Errorf("%v: got %+v, want %s → %s announced %q with %d secondary", tc.args, got, tc.capability, tc.agent, tc.announce, tc.secondary)
		}
	}
	for _, tc := range []struct {
		args any
		want string
	}{
		{map[string]any{}, "give a task"},
		{map[string]any{"phase": "DEPLOY"}, `unknown phase "DEPLOY"`},
		{map[string]any{"capability": "cooking"}, `unknown capability "cooking"`},
		{map[string]any{"task": 42}, "arguments must be"},
	} {
		if text, isErr := callText(t, cs, RouteName, tc.args); !isErr || !strings.Contains(text, tc.want) {
			t.Errorf("%v: isError=%v %q, want an error containing %q", tc.args, isErr, text, tc.want)
		}
	}

	plain := startGateway(t, []ServerConfig{testServer("alpha")}, &Options{Mode: ModeSearch, Family: policy.General})
	if got := listNames(t, connect(t, serveHTTP(t, plain, nil), nil, nil)); slices.Contains(got, RouteName) {
		t.Errorf("a gateway without a router lists %v", got)
	}
}
