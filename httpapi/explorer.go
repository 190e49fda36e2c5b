package httpapi

import (
	"bytes"
	"embed"
	"html"
	"io/fs"
	"net/http"
)

// static holds the explorer page: plain HTML, CSS and JavaScript, no
// build step.
//
//go:embed static
var static embed.FS

func (s *Server) handleExplorer(w http.ResponseWriter, r *http.Request) {
	page, err := static.ReadFile("static/index.html")
	if err != nil {
		writeError(w, err)
		return
	}
	if s.opts.CatalogNote != "" {
		note := `<p id="catalog-note" class="catalog-note">` + html.EscapeString(s.opts.CatalogNote) + `</p>`
		page = bytes.Replace(page, []byte("<!--catalog-note-->"), []byte(note), 1)
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Write(page)
}

func (s *Server) handleStatic(w http.ResponseWriter, r *http.Request) {
	sub, _ := fs.Sub(static, "static")
	http.StripPrefix("/static/", http.FileServer(http.FS(sub))).ServeHTTP(w, r)
}
