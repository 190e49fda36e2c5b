package httpapi_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/capbroker/capbroker/httpapi"
)

// TestExplorerCatalogNote: the explorer page says when its catalog is
// the embedded example catalog (serve fell back to it), and only then;
// the note is escaped.
func TestExplorerCatalogNote(t *testing.T) {
	get := func(opts *httpapi.Options) string {
		t.Helper()
		ts := newTestServer(t, opts)
		resp, err := http.Get(ts.URL + "/")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	page := get(&httpapi.Options{CatalogNote: "the example catalog <not yours>"})
	if !strings.Contains(page, `<p id="catalog-note" class="catalog-note">the example catalog &lt;not yours&gt;</p>`) {
		t.Errorf("the page lacks the note:\n%.600s", page)
	}
	if page := get(nil); strings.Contains(page, `id="catalog-note"`) {
		t.Error("a note without CatalogNote")
	}
}
