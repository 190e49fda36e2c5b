package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/capbroker/capbroker/payload"
	"github.com/capbroker/capbroker/rank"
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

// rankMemo returns the run's memo of how cards were read for ranking:
// the file rankmemo.bin of the cache directory, read once a run and
// saved when the run ends (saveMemos). Nil when there is no cache
// directory. A file that cannot be read is said once and replaced.
func (m *Main) rankMemo() *rank.Memo {
	m.rankMemoOnce.Do(func() {
		dir := m.cacheDir()
		if dir == "" {
			return
		}
		memo, err := rank.OpenMemo(filepath.Join(dir, "rankmemo.bin"))
		if err != nil {
			fmt.Fprintf(m.Stderr, "note: %v; reading them again\n", err)
		}
		m.rankMemoVal = memo
	})
	return m.rankMemoVal
}

// saveMemos saves what the run's memos (token counts, the words of
// cards) added; a failure is a note, never the command's error (they
// are only caches).
func (m *Main) saveMemos() {
	save := func(path string, save func() error) {
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			fmt.Fprintf(m.Stderr, "note: not remembering %s: %v\n", filepath.Base(path), err)
			return
		}
		if err := save(); err != nil {
			fmt.Fprintf(m.Stderr, "note: not remembering %s: %v\n", filepath.Base(path), err)
		}
	}
	m.tokenMemos.Range(func(_, v any) bool {
		memo := v.(*payload.CountMemo)
		save(memo.Path(), memo.Save)
		return true
	})
	if m.rankMemoVal != nil {
		save(m.rankMemoVal.Path(), m.rankMemoVal.Save)
	}
}
