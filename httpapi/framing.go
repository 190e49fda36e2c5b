package httpapi

import "net/http"

// noFraming tells browsers never to show a response of this server in a
// frame of another page (Content-Security-Policy frame-ancestors 'none',
// and X-Frame-Options DENY for older browsers), so a site the user visits
// cannot overlay the explorer and trick clicks on it, and not to guess
// content types (X-Content-Type-Options nosniff). Set on every response,
// refusals included.
func noFraming(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", "frame-ancestors 'none'")
		h.Set("X-Frame-Options", "DENY")
		h.Set("X-Content-Type-Options", "nosniff")
		next.ServeHTTP(w, r)
	})
}
