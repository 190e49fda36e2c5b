package llm

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"

	"github.com/capbroker/capbroker/internal/atomicfile"
)

// Replay answers from recorded replies instead of a model, for tests and
// demos that must run offline and give the same answer every time.
//
// Path is a file or a folder. A file is the reply to every request. In a
// folder, the reply to a request is the file named [Key](req) + ".json";
// a [Recorder] writes such folders, and a person can write a reply by
// hand: the error for a missing reply names the file it looked for.
type Replay struct {
	Path string
}

var _ Provider = (*Replay)(nil)

// Key identifies a request: the first 16 hex digits of the SHA-256 of its
// system message, user message, schema name and schema, each
// length-prefixed. MaxTokens is not part of it.
func Key(req Request) string {
	h := sha256.New()
	for _, s := range []string{req.System, req.User, req.SchemaName, string(req.Schema)} {
		h.Write([]byte(strconv.Itoa(len(s)) + ":" + s + "\n"))
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// Complete returns the recorded reply for req. It fails with an error
// wrapping ErrNoReply when there is none.
func (r *Replay) Complete(ctx context.Context, req Request) (Response, error) {
	if err := ctx.Err(); err != nil {
		return Response{}, err
	}
	if r.Path == "" {
		return Response{}, fmt.Errorf("%w: replay: no file or folder of replies (set CAPBROKER_LLM_REPLAY or llm.replay)", ErrNotConfigured)
	}
	st, err := os.Stat(r.Path)
	if err != nil {
		return Response{}, fmt.Errorf("replay: %w", err)
	}
	file := r.Path
	if st.IsDir() {
		file = filepath.Join(r.Path, Key(req)+".json")
	}
	data, err := os.ReadFile(file)
	if errors.Is(err, fs.ErrNotExist) {
		return Response{}, fmt.Errorf("replay: %w for this request in %s: write the reply to %s (or record one: CAPBROKER_LLM_RECORD=%s with a real provider)",
			ErrNoReply, r.Path, file, r.Path)
	}
	if err != nil {
		return Response{}, fmt.Errorf("replay: %w", err)
	}
	return Response{Text: string(data), Raw: data, Model: "replay"}, nil
}

// Recorder passes requests to Provider and writes each reply's text to
// Dir/<Key>.json, so a [Replay] of Dir answers them later.
type Recorder struct {
	Provider Provider
	Dir      string
}

var _ Provider = (*Recorder)(nil)

// Complete calls the provider and records a successful reply.
func (r *Recorder) Complete(ctx context.Context, req Request) (Response, error) {
	resp, err := r.Provider.Complete(ctx, req)
	if err != nil {
		return resp, err
	}
	if err := os.MkdirAll(r.Dir, 0o755); err != nil {
		return resp, fmt.Errorf("recording the reply: %w", err)
	}
	file := filepath.Join(r.Dir, Key(req)+".json")
	if err := atomicfile.WriteFilePrivate(file, []byte(resp.Text)); err != nil {
		return resp, fmt.Errorf("recording the reply: %w", err)
	}
	return resp, nil
}
