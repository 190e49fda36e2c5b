package replay

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// WriteText writes the report: a line per call and find of each session
// (what it was then, what it would be now), then the totals.
func (r *Report) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, s := range r.Sessions {
		task := s.Task
		if task == "" {
			task = "(no task)"
		}
		fmt.Fprintf(tw, "session %s\t%s\n", s.ID, task)
		for _, c := range s.Calls {
			by := ""
			if c.By != "" {
				by = fmt.Sprintf("by %q", c.By)
			}
			fmt.Fprintf(tw, "  call %s\t%s -> %s\t%s\n", c.Tool, c.Then, c.Now, by)
		}
		for _, f := range s.Finds {
			fmt.Fprintf(tw, "  find %q\t%s -> %s\t\n", f.Query, f.Then, f.Now)
		}
		fmt.Fprintf(tw, "  tokens\t%d -> %d\t\n", s.TokensThen, s.TokensNow)
	}
	t := r.Totals
	fmt.Fprintf(tw, "\n%d sessions\t\n", t.Sessions)
	fmt.Fprintf(tw, "calls\t%s\n", counts(t.Calls, UpFront, Found, Lost, Gone))
	fmt.Fprintf(tw, "finds\t%s\n", counts(t.Finds, UpFront, Found, Lost, NoCall))
	fmt.Fprintf(tw, "calls worse / better\t%d / %d\n", t.Regressed, t.Improved)
	fmt.Fprintf(tw, "tokens then -> now\t%d -> %d\n", t.TokensThen, t.TokensNow)
	return tw.Flush()
}

func counts(m map[string]int, keys ...string) string {
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%d %s", m[k], k))
	}
	return strings.Join(parts, ", ")
}
