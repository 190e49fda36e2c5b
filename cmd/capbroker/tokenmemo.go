package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/capbroker/capbroker/payload"
)

// tokenMemo returns the run's memo of token counts of vocabulary enc:
// the file tokens-<enc>.bin of the cache directory, read once a run and
// saved when the run ends (saveTokenMemos). Nil when there is no cache
// directory or enc is not a vocabulary (the broker reports that). A file
// that cannot be read is said once and replaced.
func (m *Main) tokenMemo(enc payload.Encoding) *payload.CountMemo {
	c, err := payload.NewCounter(enc)
	if err != nil {
		return nil
	}
	enc = c.Encoding()
	if v, ok := m.tokenMemos.Load(enc); ok {
		return v.(*payload.CountMemo)
	}
	dir := m.cacheDir()
	if dir == "" {
		return nil
	}
	memo, err := payload.OpenCountMemo(filepath.Join(dir, "tokens-"+string(enc)+".bin"), enc)
	if err != nil {
		fmt.Fprintf(m.Stderr, "note: %v; counting again\n", err)
	}
	v, _ := m.tokenMemos.LoadOrStore(enc, memo)
	return v.(*payload.CountMemo)
}

// saveTokenMemos saves the token counts the run added; a failure is a
// note, never the command's error (the counts are only a cache).
func (m *Main) saveTokenMemos() {
	m.tokenMemos.Range(func(_, v any) bool {
		memo := v.(*payload.CountMemo)
		if err := os.MkdirAll(filepath.Dir(memo.Path()), 0o700); err != nil {
			fmt.Fprintf(m.Stderr, "note: not remembering token counts: %v\n", err)
			return true
		}
		if err := memo.Save(); err != nil {
			fmt.Fprintf(m.Stderr, "note: not remembering token counts: %v\n", err)
		}
		return true
	})
}
