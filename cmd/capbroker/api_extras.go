package main

import (
	"context"
	"net/http"
)

// apiExtras returns the HTTP endpoints of the parts beyond selection
// (routing, planning, sessions, traces), keyed by ServeMux pattern.
// Endpoints not listed answer 501 not_configured.
func (m *Main) apiExtras(ctx context.Context, cf *catalogFlags) map[string]http.Handler {
	return map[string]http.Handler{}
}
