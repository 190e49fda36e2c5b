package httpapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"

	"github.com/capbroker/capbroker/payload"
	"github.com/capbroker/capbroker/plan"
	"github.com/capbroker/capbroker/policy"
	"github.com/capbroker/capbroker/session"
	"github.com/capbroker/capbroker/store"
)

// SessionStartRequest is the body of POST /v1/sessions: the arguments of
// `capbroker session start`.
type SessionStartRequest struct {
	// Task is what the session is for. Leave it out with Plan.
	Task string `json:"task,omitempty"`
	// Plan and PlanTask start the session from a plan's task (as
	// `capbroker session start --plan --plan-task` does): the task's text
	// comes from the plan, and the session exposes the task's assembled
	// capabilities plus the floor and the hatch.
	Plan     json.RawMessage `json:"plan,omitempty"`
	PlanTask string          `json:"plan_task,omitempty"`
	// ID names the session; if empty, one is made. A taken ID is refused
	// with the code "conflict".
	ID string `json:"id,omitempty"`
	// MaxIterations is the iteration budget (0: the server's default).
	MaxIterations int `json:"max_iterations,omitempty"`
}

// SessionFindRequest is the body of POST /v1/sessions/{id}/find: a
// find_capability call.
type SessionFindRequest struct {
	Query string `json:"query"`
	// K is how many capabilities to return (0: the default, 5).
	K int `json:"k,omitempty"`
}

// SessionCallRequest is the body of POST /v1/sessions/{id}/call: a tool
// call to check against the exposed tools.
type SessionCallRequest struct {
	Tool string `json:"tool"`
}

// SessionResumeRequest is the optional body of POST
// /v1/sessions/{id}/resume.
type SessionResumeRequest struct {
	// Format, if set, adds the exposed tools present in the catalog (and
	// the hatch) in that provider format as "payload".
	Format string `json:"format,omitempty"`
}

// SessionResponse is a session as `capbroker session ... --json` prints
// it, plus the rendered payload when a resume asked for a format.
type SessionResponse struct {
	*session.View
	Payload json.RawMessage `json:"payload,omitempty"`
	// Warnings are what checking the plan of a plan start said: names
	// dropped, cards changed since the plan was made (with what changed).
	Warnings []plan.Warning `json:"warnings,omitempty"`
}

// SessionsResponse is the body of GET /v1/sessions.
type SessionsResponse struct {
	Count    int             `json:"count"`
	Sessions []*session.View `json:"sessions"`
}

// validID is what session IDs given by clients may look like: they appear
// in URL paths.
var validID = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)

// sessionError maps an error of the session manager to an API error.
func sessionError(err error) error {
	switch {
	case errors.Is(err, store.ErrNotFound):
		return errorf(CodeNotFound, err.Error())
	case errors.Is(err, store.ErrExists):
		return errorf(CodeConflict, err.Error())
	case errors.Is(err, session.ErrBudgetExhausted):
		return errorf(CodeBudgetExhausted, err.Error())
	}
	return errorf(CodeUnavailable, err.Error())
}

// sessions returns the session manager, or answers 501 and returns nil.
func (s *Server) sessions(w http.ResponseWriter) *session.Manager {
	if s.opts.Sessions == nil && s.opts.StoreError != nil {
		writeError(w, errorf(CodeUnavailable, "sessions are unavailable: "+s.opts.StoreError.Error()))
	} else if s.opts.Sessions == nil {
		writeError(w, errorf(CodeNotConfigured, "sessions are not configured on this server (capbroker serve sets them up with --db)"))
	}
	return s.opts.Sessions
}

// loadSession loads the session named in the path, answering the error
// itself; resume records the resume in the trace.
func (s *Server) loadSession(w http.ResponseWriter, r *http.Request, resume bool) *session.Session {
	mgr := s.sessions(w)
	if mgr == nil {
		return nil
	}
	id := r.PathValue("id")
	if !validID.MatchString(id) {
		writeError(w, errorf(CodeNotFound, fmt.Sprintf("no session %q: session IDs are letters, digits, '.', '_' and '-'", id)))
		return nil
	}
	var sess *session.Session
	var err error
	if resume {
		sess, err = mgr.Resume(r.Context(), id)
	} else {
		sess, err = mgr.Load(r.Context(), id)
	}
	if err != nil {
		writeError(w, sessionError(err))
		return nil
	}
	return sess
}

func (s *Server) handleSessionStart(w http.ResponseWriter, r *http.Request) {
	mgr := s.sessions(w)
	if mgr == nil {
		return
	}
	var req SessionStartRequest
	if err := s.decode(w, r, &req); err != nil {
		writeError(w, err)
		return
	}
	withPlan := len(req.Plan) > 0 || req.PlanTask != ""
	switch {
	case withPlan && strings.TrimSpace(req.Task) != "":
		writeError(w, errorf(CodeInvalid, `"task" and "plan": give one (with "plan" the task comes from the plan's task)`))
		return
	case withPlan && (len(req.Plan) == 0 || strings.TrimSpace(req.PlanTask) == ""):
		writeError(w, errorf(CodeInvalid, `"plan" and "plan_task" go together: the plan and the id of its task`))
		return
	case !withPlan && strings.TrimSpace(req.Task) == "":
		writeError(w, errorf(CodeInvalid, `"task" is required (or "plan" and "plan_task")`))
		return
	case req.ID != "" && !validID.MatchString(req.ID):
		writeError(w, errorf(CodeInvalid, fmt.Sprintf(`"id" %q: want 1 to 128 letters, digits, '.', '_' or '-', starting with a letter or digit`, req.ID)))
		return
	case req.MaxIterations < 0:
		writeError(w, errorf(CodeInvalid, `"max_iterations" must not be negative`))
		return
	}
	opts := &session.StartOptions{ID: req.ID, MaxIterations: req.MaxIterations}
	var (
		sess  *session.Session
		err   error
		warns []plan.Warning
	)
	if withPlan {
		p, perr := plan.Parse(req.Plan)
		if perr != nil {
			writeError(w, errorf(CodeInvalid, "plan: "+perr.Error()))
			return
		}
		if _, ok := p.Task(req.PlanTask); !ok {
			writeError(w, errorf(CodeInvalid, fmt.Sprintf(`"plan_task": the plan has no task %q`, req.PlanTask)))
			return
		}
		var a *plan.Assembly
		sess, a, err = mgr.StartFromPlan(r.Context(), p, req.PlanTask, opts)
		if a != nil {
			warns = a.Warnings
		}
	} else {
		sess, err = mgr.Start(r.Context(), req.Task, opts)
	}
	if err != nil {
		writeError(w, sessionError(err))
		return
	}
	w.Header().Set("Location", "/v1/sessions/"+sess.ID())
	status := http.StatusCreated
	if sess.InMemory() {
		// Only with session.Options.KeepInMemory: started, not stored.
		status = http.StatusAccepted
	}
	writeJSON(w, status, SessionResponse{View: session.NewView(sess), Warnings: warns})
}

func (s *Server) handleSessionList(w http.ResponseWriter, r *http.Request) {
	mgr := s.sessions(w)
	if mgr == nil {
		return
	}
	limit := 20
	if v := r.URL.Query().Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			writeError(w, errorf(CodeInvalid, fmt.Sprintf("limit %q: want 0 (all) or more", v)))
			return
		}
		limit = n
	}
	st := mgr.Store()
	if st == nil {
		writeError(w, errorf(CodeNotConfigured, "sessions are kept in memory on this server: there is no store to list"))
		return
	}
	list, err := st.Sessions(r.Context(), &store.SessionQuery{Limit: limit})
	if err != nil {
		writeError(w, errorf(CodeUnavailable, err.Error()))
		return
	}
	out := SessionsResponse{Count: len(list), Sessions: make([]*session.View, len(list))}
	for i := range list {
		out.Sessions[i] = session.StoredView(&list[i])
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) handleSessionShow(w http.ResponseWriter, r *http.Request) {
	if sess := s.loadSession(w, r, false); sess != nil {
		writeJSON(w, http.StatusOK, SessionResponse{View: session.NewView(sess)})
	}
}

func (s *Server) handleSessionFind(w http.ResponseWriter, r *http.Request) {
	if s.sessions(w) == nil {
		return
	}
	var req SessionFindRequest
	if err := s.decode(w, r, &req); err != nil {
		writeError(w, err)
		return
	}
	if err := checkQuery(req.Query, req.K); err != nil {
		writeError(w, err)
		return
	}
	sess := s.loadSession(w, r, false)
	if sess == nil {
		return
	}
	res, err := sess.Find(r.Context(), req.Query, req.K)
	if err != nil {
		writeError(w, sessionError(err))
		return
	}
	v := session.NewView(sess)
	v.Find = session.NewFindView(res)
	writeJSON(w, http.StatusOK, SessionResponse{View: v})
}

func (s *Server) handleSessionCall(w http.ResponseWriter, r *http.Request) {
	if s.sessions(w) == nil {
		return
	}
	var req SessionCallRequest
	if err := s.decode(w, r, &req); err != nil {
		writeError(w, err)
		return
	}
	if strings.TrimSpace(req.Tool) == "" {
		writeError(w, errorf(CodeInvalid, `"tool" is required`))
		return
	}
	if req.Tool == policy.HatchName {
		writeError(w, errorf(CodeInvalid, fmt.Sprintf(`"tool": %s is answered by POST /v1/sessions/{id}/find`, policy.HatchName)))
		return
	}
	sess := s.loadSession(w, r, false)
	if sess == nil {
		return
	}
	callErr := sess.Call(r.Context(), req.Tool)
	if callErr != nil && !errors.Is(callErr, session.ErrNotExposed) {
		writeError(w, sessionError(callErr))
		return
	}
	v := session.NewView(sess)
	v.Call = &session.CallView{Tool: req.Tool, Allowed: callErr == nil}
	var ne *session.NotExposedError
	if errors.As(callErr, &ne) {
		v.Call.Error, v.Call.Suggestions = ne.Error(), ne.Suggestions
	}
	writeJSON(w, http.StatusOK, SessionResponse{View: v})
}

func (s *Server) handleSessionResume(w http.ResponseWriter, r *http.Request) {
	if s.sessions(w) == nil {
		return
	}
	var req SessionResumeRequest
	if r.ContentLength != 0 {
		if err := s.decode(w, r, &req); err != nil {
			writeError(w, err)
			return
		}
	}
	var format payload.Format
	if req.Format != "" {
		f, err := payload.ParseFormat(req.Format)
		if err != nil {
			writeError(w, errorf(CodeInvalid, fmt.Sprintf(`"format": %v`, err)))
			return
		}
		format = f
	}
	sess := s.loadSession(w, r, true)
	if sess == nil {
		return
	}
	resp := SessionResponse{View: session.NewView(sess)}
	if format != "" {
		var present []string
		for _, n := range resp.ExposedTools {
			if !contains(resp.Missing, n) {
				present = append(present, n)
			}
		}
		rendered, err := s.broker.Render(format, present, true)
		if err != nil {
			writeError(w, err)
			return
		}
		resp.Payload = rendered.Body
	}
	writeJSON(w, http.StatusOK, resp)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
