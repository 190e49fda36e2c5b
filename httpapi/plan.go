package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/capbroker/capbroker/llm"
	"github.com/capbroker/capbroker/plan"
	"github.com/capbroker/capbroker/session"
	"github.com/capbroker/capbroker/trace"
)

// PlanRequest is the body of POST /v1/plan.
type PlanRequest struct {
	Goal string `json:"goal"`
	// BlockTokens is the token budget of the "Capabilities available"
	// block (0: the default; negative: none).
	BlockTokens int `json:"block_tokens,omitempty"`
	// NoCatalog plans with the plain prompt, naming no capabilities.
	NoCatalog bool `json:"no_catalog,omitempty"`
}

func (s *Server) handlePlan(w http.ResponseWriter, r *http.Request) {
	if s.opts.Planner == nil {
		writeError(w, errorf(CodeNotConfigured, "no language model is configured for planning: start the server with CAPBROKER_LLM=openai|anthropic|replay (see capbroker plan --help)"))
		return
	}
	var req PlanRequest
	if err := s.decode(w, r, &req); err != nil {
		writeError(w, err)
		return
	}
	if strings.TrimSpace(req.Goal) == "" {
		writeError(w, errorf(CodeInvalid, `"goal" is required`))
		return
	}
	begin := time.Now()
	opts := &plan.PromptOptions{BlockTokens: req.BlockTokens, Ranker: s.broker}
	if !req.NoCatalog {
		opts.Catalog = s.broker.Catalog()
	}
	res, err := plan.NewPlanner(s.opts.Planner, opts).Plan(r.Context(), req.Goal)
	var pe *plan.ParseError
	switch {
	case errors.As(err, &pe):
		writeError(w, errorf(CodeBadReply, fmt.Sprintf("the model's reply is not a valid plan: %v; reply: %.2000s", err, pe.Raw)))
		return
	case errors.Is(err, llm.ErrNotConfigured):
		writeError(w, errorf(CodeNotConfigured, err.Error()))
		return
	case err != nil:
		writeError(w, errorf(CodeUnavailable, err.Error()))
		return
	}
	s.recordPlan(r.Context(), session.PlanRecord("planned", res.Plan, nil, res.Warnings), begin)
	writeJSON(w, http.StatusOK, res)
}

// recordPlan appends a plan record to the trace store, when one is
// configured. A store failure is logged: the answer stands.
func (s *Server) recordPlan(ctx context.Context, rec trace.Record, begin time.Time) {
	if s.opts.Traces == nil {
		return
	}
	rec.At, rec.Latency = begin, time.Since(begin)
	if err := s.opts.Traces.AppendTraces(ctx, rec); err != nil {
		s.opts.Logger.WarnContext(ctx, "the plan was not recorded in the trace", "error", err)
	}
}

// AssembleRequest is the body of POST /v1/assemble.
type AssembleRequest struct {
	// Plan is a plan as `capbroker plan` writes it.
	Plan json.RawMessage `json:"plan"`
	// Min is how many capabilities each task should have (0: 1).
	Min int `json:"min,omitempty"`
	// MaxInferred bounds the capabilities inference adds to a task (0: 3).
	MaxInferred int `json:"max_inferred,omitempty"`
}

func (s *Server) handleAssemble(w http.ResponseWriter, r *http.Request) {
	var req AssembleRequest
	if err := s.decode(w, r, &req); err != nil {
		writeError(w, err)
		return
	}
	if len(req.Plan) == 0 {
		writeError(w, errorf(CodeInvalid, `"plan" is required`))
		return
	}
	if req.MaxInferred < 0 {
		writeError(w, errorf(CodeInvalid, `"max_inferred" must not be negative`))
		return
	}
	p, err := plan.Parse(req.Plan)
	if err != nil {
		writeError(w, errorf(CodeInvalid, "plan: "+err.Error()))
		return
	}
	begin := time.Now()
	a := plan.Assemble(r.Context(), p, s.broker.Catalog(), &plan.AssembleOptions{MinCapabilities: req.Min, MaxInferred: req.MaxInferred, Ranker: s.broker})
	s.recordPlan(r.Context(), session.PlanRecord("assembled", nil, a, a.Warnings), begin)
	writeJSON(w, http.StatusOK, a)
}
