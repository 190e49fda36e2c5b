package httpapi

import (
	"context"
	"fmt"
	"net/http"
	"strconv"

	"github.com/capbroker/capbroker/store"
	"github.com/capbroker/capbroker/trace"
)

// TraceStore lists trace records and appends new ones. A store.Store is
// one.
type TraceStore interface {
	Traces(ctx context.Context, q *store.TraceQuery) ([]trace.Record, error)
	AppendTraces(ctx context.Context, recs ...trace.Record) error
}

var _ TraceStore = store.Store(nil)

// Trace listing limits.
const (
	DefaultTraceLimit = 100
	MaxTraceLimit     = 10000
)

// handleTraces answers GET /v1/traces?session=&kind=&after=&limit= with
// the records, oldest first, as `capbroker trace --json` prints them.
// limit defaults to DefaultTraceLimit; after (a record ID) pages on.
func (s *Server) handleTraces(w http.ResponseWriter, r *http.Request) {
	if s.opts.Traces == nil {
		if s.opts.StoreError != nil {
			writeError(w, errorf(CodeUnavailable, "traces are unavailable: "+s.opts.StoreError.Error()))
			return
		}
		writeError(w, errorf(CodeNotConfigured, "traces are not configured on this server (capbroker serve reads them from --db)"))
		return
	}
	q := r.URL.Query()
	tq := &store.TraceQuery{SessionID: q.Get("session"), Limit: DefaultTraceLimit}
	if k := q.Get("kind"); k != "" {
		kind, err := trace.ParseKind(k)
		if err != nil {
			writeError(w, errorf(CodeInvalid, "kind: "+err.Error()))
			return
		}
		tq.Kind = kind
	}
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > MaxTraceLimit {
			writeError(w, errorf(CodeInvalid, fmt.Sprintf("limit %q: want 1 to %d", v, MaxTraceLimit)))
			return
		}
		tq.Limit = n
	}
	if v := q.Get("after"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			writeError(w, errorf(CodeInvalid, fmt.Sprintf("after %q: want a record ID (0 or more)", v)))
			return
		}
		tq.AfterID = n
	}
	recs, err := s.opts.Traces.Traces(r.Context(), tq)
	if err != nil {
		writeError(w, errorf(CodeUnavailable, err.Error()))
		return
	}
	if recs == nil {
		recs = []trace.Record{}
	}
	writeJSON(w, http.StatusOK, recs)
}
