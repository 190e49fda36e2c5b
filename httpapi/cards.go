package httpapi

import (
	"fmt"
	"net/http"

	"github.com/capbroker/capbroker/card"
)

// CardsResponse is the body of GET /v1/cards.
type CardsResponse struct {
	Count int         `json:"count"`
	Cards []card.Card `json:"cards"`
}

func (s *Server) handleCards(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	kind, source := q.Get("kind"), q.Get("source")
	if kind != "" && !card.Kind(kind).Valid() {
		writeError(w, errorf(CodeInvalid, fmt.Sprintf("kind %q: want tool, agent, command or skill", kind)))
		return
	}
	out := []card.Card{}
	for _, c := range s.broker.Catalog().Cards() {
		if (kind == "" || string(c.Kind) == kind) && (source == "" || c.Source == source) {
			out = append(out, c)
		}
	}
	writeJSON(w, http.StatusOK, CardsResponse{Count: len(out), Cards: out})
}

func (s *Server) handleHealth(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{"status": "ok", "cards": s.broker.Catalog().Len()})
}
