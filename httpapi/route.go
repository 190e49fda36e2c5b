package httpapi

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"time"

	"github.com/capbroker/capbroker/rank"
	"github.com/capbroker/capbroker/route"
	"github.com/capbroker/capbroker/trace"
)

// Router routes tasks and workflow phases to plugin agents over the
// discovered catalog. A *route.Cache is one: it scans again when its map
// is stale or a capability has no match.
type Router interface {
	// Map returns the capability map (GET /v1/capabilities).
	Map(ctx context.Context) (*route.Map, error)
	// RouteIn routes one request (POST /v1/route) and, when statePath
	// is set, writes the capability warnings of its fall-backs into that
	// Markdown file ([route.Cache.RouteIn]).
	RouteIn(ctx context.Context, req route.Request, statePath string) (route.Decision, error)
}

var _ Router = (*route.Cache)(nil)

// RouteRequest is the body of POST /v1/route: the flags of `capbroker
// route`. At least one of task, phase and capability is required.
type RouteRequest struct {
	Task string `json:"task,omitempty"`
	// Phase is a workflow phase: DISCUSS, PLAN, EXECUTE, VERIFY.
	Phase string `json:"phase,omitempty"`
	// Capability names the capability to delegate (wins over Phase).
	Capability string `json:"capability,omitempty"`
	// Project is a project folder on the server (an absolute path) whose
	// file names reveal the project type, as `route --project`. It must
	// lie under a folder the server was started for (serve --route-root);
	// any other is refused with 403 forbidden.
	Project string `json:"project,omitempty"`
	// ProjectTypes names the project types directly (dotnet, node,
	// python, ...), for clients whose project is not on the server.
	ProjectTypes []string `json:"project_types,omitempty"`
	// Session, if set, records the decision in that session's trace
	// (Options.Sessions must be set).
	Session string `json:"session,omitempty"`
	// State is the Markdown state file whose "## Capability Warnings"
	// section lists the capabilities that fell back to a built-in agent,
	// as `route --state`: an absolute path on the server, or "none". When
	// empty it is <project>/FLOW.md for a request with "project", and no
	// file otherwise. Like Project it must lie under a --route-root folder
	// (symlinks resolved), and an existing one must be a regular file.
	State string `json:"state,omitempty"`
}

// handleRoute answers POST /v1/route with the decision, the JSON of
// `capbroker route --json`.
func (s *Server) handleRoute(w http.ResponseWriter, r *http.Request) {
	if s.opts.Router == nil {
		writeError(w, errorf(CodeNotConfigured, "routing is not configured on this server (capbroker serve sets it up over the discovered plugins)"))
		return
	}
	var req RouteRequest
	if err := s.decode(w, r, &req); err != nil {
		writeError(w, err)
		return
	}
	ctx := r.Context()
	if strings.TrimSpace(req.Task+req.Phase+req.Capability) == "" {
		writeError(w, errorf(CodeInvalid, `one of "task", "phase" or "capability" is required`))
		return
	}
	if req.Project != "" && len(req.ProjectTypes) > 0 {
		writeError(w, errorf(CodeInvalid, `give "project" or "project_types", not both`))
		return
	}
	if req.Session != "" && s.opts.Sessions == nil {
		writeError(w, errorf(CodeNotConfigured, `"session": sessions are not configured on this server`))
		return
	}
	m, err := s.opts.Router.Map(ctx)
	if err != nil {
		writeError(w, errorf(CodeUnavailable, err.Error()))
		return
	}
	tax := m.Router().Taxonomy()
	if req.Phase != "" && tax.Phase(strings.TrimSpace(req.Phase)) == nil {
		writeError(w, errorf(CodeInvalid, fmt.Sprintf(`"phase" %q: unknown phase (known: %s)`, req.Phase, strings.Join(phaseNames(tax), ", "))))
		return
	}
	if req.Capability != "" && tax.Category(strings.TrimSpace(req.Capability)) == nil {
		writeError(w, errorf(CodeInvalid, fmt.Sprintf(`"capability" %q: unknown capability (see GET /v1/capabilities)`, req.Capability)))
		return
	}
	rr := route.Request{Task: rank.ClipQuery(req.Task), Phase: strings.TrimSpace(req.Phase), Capability: strings.TrimSpace(req.Capability)}
	projectDir := "" // the project folder, symlinks resolved
	switch {
	case req.Project != "":
		dir, err := s.confine("project", req.Project, true)
		if err != nil {
			writeError(w, err)
			return
		}
		p, err := route.DetectProject(ctx, dir, tax)
		if err != nil {
			writeError(w, errorf(CodeInvalid, fmt.Sprintf(`"project": %v`, err)))
			return
		}
		rr.Project = p
		projectDir = dir
		p.Dir = req.Project // as the client named it, as `route --project` prints it
	case len(req.ProjectTypes) > 0:
		for _, t := range req.ProjectTypes {
			if tax.Project(t) == nil {
				writeError(w, errorf(CodeInvalid, fmt.Sprintf(`"project_types": unknown project type %q (known: %s)`, t, strings.Join(projectNames(tax), ", "))))
				return
			}
		}
		rr.Project = route.NewProject(req.ProjectTypes...)
	}
	state := ""
	switch {
	case req.State == "none":
	case req.State != "":
		if !filepath.IsAbs(req.State) {
			writeError(w, errorf(CodeInvalid, fmt.Sprintf(`"state" %q: want an absolute path on the server, or "none"`, req.State)))
			return
		}
		p, err := s.confine("state", req.State, false)
		if err != nil {
			writeError(w, err)
			return
		}
		state = p
	case req.Project != "":
		p, err := s.confine("state", filepath.Join(projectDir, "FLOW.md"), false)
		if err != nil {
			writeError(w, err)
			return
		}
		state = p
	}
	begin := time.Now()
	d, err := s.opts.Router.RouteIn(ctx, rr, state)
	if err != nil {
		writeError(w, errorf(CodeUnavailable, err.Error()))
		return
	}
	if err := s.recordRoute(ctx, req, &d, time.Since(begin)); err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, d)
}

// recordRoute appends the decision to the trace: the session's when the
// request names one, else the trace store's when one is configured. A
// store failure becomes a warning of the decision; an unknown session is
// an error.
func (s *Server) recordRoute(ctx context.Context, req RouteRequest, d *route.Decision, latency time.Duration) error {
	if req.Session == "" && s.opts.Traces == nil {
		return nil
	}
	detail, err := json.Marshal(d)
	if err != nil {
		return fmt.Errorf("encoding the decision: %w", err)
	}
	task := req.Task
	if task == "" {
		task = strings.TrimSpace(req.Phase + " " + req.Capability)
	}
	rec := trace.Record{Kind: trace.KindRoute, At: begin(latency), Task: task, CapabilityReason: d.Line, Latency: latency, Detail: detail}
	if req.Session != "" {
		sess, err := s.opts.Sessions.Load(ctx, req.Session)
		if err != nil {
			return sessionError(err)
		}
		rec, err = sess.Record(ctx, rec)
		if err != nil {
			return err
		}
		for _, f := range rec.Failures {
			d.Warnings = append(d.Warnings, "trace: "+f.String())
		}
		return nil
	}
	if err := s.opts.Traces.AppendTraces(ctx, rec); err != nil {
		d.Warnings = append(d.Warnings, "trace: the decision was not recorded: "+err.Error())
	}
	return nil
}

// begin returns when an event that took latency started.
func begin(latency time.Duration) time.Time { return time.Now().Add(-latency) }

// handleCapabilities answers GET /v1/capabilities with the capability
// map, the JSON of `capbroker capabilities --json`.
func (s *Server) handleCapabilities(w http.ResponseWriter, r *http.Request) {
	if s.opts.Router == nil {
		writeError(w, errorf(CodeNotConfigured, "routing is not configured on this server (capbroker serve sets it up over the discovered plugins)"))
		return
	}
	m, err := s.opts.Router.Map(r.Context())
	if err != nil {
		writeError(w, errorf(CodeUnavailable, err.Error()))
		return
	}
	writeJSON(w, http.StatusOK, m.Summary())
}

func phaseNames(tax *route.Taxonomy) []string {
	var names []string
	for _, p := range tax.Phases {
		names = append(names, p.Name)
	}
	return names
}

func projectNames(tax *route.Taxonomy) []string {
	var names []string
	for _, p := range tax.Projects {
		names = append(names, p.Name)
	}
	return names
}
