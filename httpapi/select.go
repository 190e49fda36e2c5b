package httpapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/capbroker/capbroker/payload"
	"github.com/capbroker/capbroker/policy"
)

// SelectRequest is the body of POST /v1/select.
type SelectRequest struct {
	Task   string `json:"task"`
	Max    int    `json:"max,omitempty"`
	Budget int    `json:"budget,omitempty"`
	Family string `json:"family,omitempty"`
	// Format, if set, adds the exposed tools in that provider format as
	// "payload" and counts tokens in it.
	Format string `json:"format,omitempty"`
}

// SelectResponse is the selection, as `capbroker select --json` prints
// it, plus the rendered payload when a format was asked for.
type SelectResponse struct {
	*policy.Selection
	Payload json.RawMessage `json:"payload,omitempty"`
}

func (s *Server) handleSelect(w http.ResponseWriter, r *http.Request) {
	var req SelectRequest
	if err := s.decode(w, r, &req); err != nil {
		writeError(w, err)
		return
	}
	if strings.TrimSpace(req.Task) == "" {
		writeError(w, errorf(CodeInvalid, `"task" is required`))
		return
	}
	if req.Max < 0 || req.Budget < 0 {
		writeError(w, errorf(CodeInvalid, `"max" and "budget" must not be negative`))
		return
	}
	fam, err := policy.ParseFamily(req.Family)
	if err != nil {
		writeError(w, errorf(CodeInvalid, `"family": `+err.Error()))
		return
	}
	opts := &policy.Options{MaxSelected: req.Max, TokenBudget: req.Budget, Family: fam}
	if req.Format != "" {
		f, err := payload.ParseFormat(req.Format)
		if err != nil {
			writeError(w, errorf(CodeInvalid, fmt.Sprintf(`"format": %v`, err)))
			return
		}
		opts.Format = f
	}
	sel := s.broker.Select(r.Context(), req.Task, opts)
	s.metrics.observeSelection(sel)
	resp := SelectResponse{Selection: sel}
	if req.Format != "" {
		rendered, err := s.broker.Render(opts.Format, sel.Names(), true)
		if err != nil {
			writeError(w, err)
			return
		}
		resp.Payload = rendered.Body
	}
	writeJSON(w, http.StatusOK, resp)
}

// FindRequest is the body of POST /v1/find.
type FindRequest struct {
	Query string `json:"query"`
	K     int    `json:"k,omitempty"`
}

func (s *Server) handleFind(w http.ResponseWriter, r *http.Request) {
	var req FindRequest
	if err := s.decode(w, r, &req); err != nil {
		writeError(w, err)
		return
	}
	if err := checkQuery(req.Query, req.K); err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, s.broker.Find(r.Context(), req.Query, req.K))
}

// checkQuery validates the query and k of a find, in a session or not.
func checkQuery(query string, k int) error {
	if strings.TrimSpace(query) == "" {
		return errorf(CodeInvalid, `"query" is required`)
	}
	if k < 0 || k > 100 {
		return errorf(CodeInvalid, fmt.Sprintf(`"k" must be between 1 and 100 (0: default %d)`, policy.DefaultFindK))
	}
	return nil
}
