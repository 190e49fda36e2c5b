package progress

import (
	"github.com/capbroker/capbroker/internal/termsafe"

	"fmt"
	"io"
	"os"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/mattn/go-isatty"
)

// Width is the most runes a progress line takes, so that it does not wrap
// on an 80-column terminal (a wrapped line cannot be rewritten in place).
const Width = 79

// IsTerminal reports whether w is a terminal.
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && (isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd()))
}

// Reporter shows one progress line on a terminal. Its methods are safe for
// concurrent use; a nil *Reporter does nothing.
type Reporter struct {
	mu    sync.Mutex
	w     io.Writer
	on    bool
	shown bool
	last  time.Time
	// Every is the least time between two rewrites of the line (a count
	// that reaches its total is always shown). New sets 50ms.
	Every time.Duration
}

// New returns a Reporter writing to w when terminal is true, and writing
// nothing otherwise.
func New(w io.Writer, terminal bool) *Reporter {
	return &Reporter{w: w, on: terminal, Every: 50 * time.Millisecond}
}

// Count shows "what done/total", then ": item" when item is not empty.
func (r *Reporter) Count(what string, done, total int, item string) {
	if r == nil || !r.on {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	now := time.Now()
	if r.shown && done < total && now.Sub(r.last) < r.Every {
		return
	}
	r.last = now
	line := fmt.Sprintf("%s %d/%d", what, done, total)
	if item != "" {
		line += ": " + termsafe.String(item)
	}
	if n := utf8.RuneCountInString(line); n > Width {
		rs := []rune(line)
		line = string(rs[:Width-1]) + "…"
	}
	fmt.Fprint(r.w, "\r\033[K"+line)
	r.shown = true
}

// Done clears the line.
func (r *Reporter) Done() {
	if r == nil || !r.on {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.shown {
		fmt.Fprint(r.w, "\r\033[K")
		r.shown = false
	}
}
