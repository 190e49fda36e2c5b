package trust

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/capbroker/capbroker/internal/safefile"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/capbroker/capbroker/source/internal/jsonc"
	"github.com/capbroker/capbroker/source/mcpconfig"
)

// FileName is the store's file in the data directory.
const FileName = "servers-approved.json"

// Fix is the command that approves project servers, for messages.
const Fix = "capbroker approve --servers"

// Approval is one approved server.
type Approval struct {
	File     string    `json:"file"`
	Name     string    `json:"name"`
	Digest   string    `json:"digest"`
	Command  string    `json:"command"` // what it ran, secrets as ${VAR}
	Approved time.Time `json:"approved"`
	// Parts are the digests of what the approval covers ([Parts]), so
	// that a change can be named; Digest combines them.
	Parts map[string]string `json:"parts,omitempty"`
}

type storeFile struct {
	Version int        `json:"version"`
	Servers []Approval `json:"servers"`
}

// Store is capbroker's own record of approved project servers.
type Store struct {
	path string
	mu   sync.Mutex
	list []Approval
}

// OpenStore reads the store in dir. A missing file is an empty store; a
// file that cannot be read or parsed is an error naming it (and the
// returned store is empty, so nothing is approved by it).
func OpenStore(dir string) (*Store, error) {
	s := &Store{path: filepath.Join(dir, FileName)}
	data, err := safefile.ReadFile(s.path, safefile.MaxConfig)
	if errors.Is(err, os.ErrNotExist) {
		return s, nil
	}
	if err != nil {
		return s, fmt.Errorf("reading the approved servers: %w", err)
	}
	var f storeFile
	if err := json.Unmarshal(data, &f); err != nil {
		return s, fmt.Errorf("reading the approved servers %s: %v; no project server counts as approved by it (delete it and approve again with %s)", s.path, err, Fix)
	}
	if f.Version != 1 {
		return s, fmt.Errorf("reading the approved servers %s: version %d, want 1; delete it and approve again with %s", s.path, f.Version, Fix)
	}
	s.list = f.Servers
	return s, nil
}

// Path is the store's file.
func (s *Store) Path() string { return s.path }

// Digest identifies what a server runs ([Parts]): its definition as
// written (name and JSON, comments and layout aside), its working folder,
// its envFile's content, and the executable and scripts it names in the
// project.
func Digest(srv mcpconfig.Server) string { return combined(parts(srv)) }

// legacyDigest is the digest of the definition as written alone.
func legacyDigest(srv mcpconfig.Server) string {
	raw := jsonc.Strip(srv.Raw)
	var buf bytes.Buffer
	if json.Compact(&buf, raw) != nil {
		buf.Reset()
		buf.Write(raw)
	}
	h := sha256.New()
	fmt.Fprintf(h, "%d:%s\n%s", len(srv.Name), srv.Name, buf.Bytes())
	return hex.EncodeToString(h.Sum(nil))
}

// state reports whether srv is approved as it is now, or, when it was
// approved before a change, what changed.
func (s *Store) state(srv mcpconfig.Server) (approved bool, changed []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ps := parts(srv)
	d := combined(ps)
	for _, a := range s.list {
		if a.File == srv.File && a.Name == srv.Name {
			if a.Digest == d && a.Parts != nil {
				return true, nil
			}
			now := map[string]string{}
			for _, p := range ps {
				now[p.key] = p.digest
			}
			return false, changes(a.Parts, now, projectRoot(srv.File))
		}
	}
	return false, nil
}

// Approve records the servers as approved and writes the store. It
// writes a temporary file in the same folder, syncs it and renames it
// over the old one.
func (s *Store) Approve(servers []mcpconfig.Server, now time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	list := slices.Clone(s.list)
	for _, srv := range servers {
		list = slices.DeleteFunc(list, func(a Approval) bool { return a.File == srv.File && a.Name == srv.Name })
		ps := parts(srv)
		m := make(map[string]string, len(ps))
		for _, p := range ps {
			m[p.key] = p.digest
		}
		list = append(list, Approval{File: srv.File, Name: srv.Name, Digest: combined(ps), Parts: m, Command: srv.CommandLine(), Approved: now.UTC()})
	}
	sort.Slice(list, func(i, j int) bool {
		if list[i].File != list[j].File {
			return list[i].File < list[j].File
		}
		return list[i].Name < list[j].Name
	})
	data, err := json.MarshalIndent(storeFile{Version: 1, Servers: list}, "", "  ")
	if err != nil {
		return err
	}
	if err := writeAtomic(s.path, append(data, '\n')); err != nil {
		return fmt.Errorf("saving the approved servers: %w", err)
	}
	s.list = list
	return nil
}

func writeAtomic(path string, data []byte) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, ".servers-approved-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer os.Remove(tmp) // after a successful rename, a no-op
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
	return nil
}

// ClaudeProject is what Claude Code recorded for one project in
// ~/.claude.json.
type ClaudeProject struct {
	Enabled  []string `json:"enabledMcpjsonServers"`
	Disabled []string `json:"disabledMcpjsonServers"`
	All      bool     `json:"enableAllProjectMcpServers"`
}

// ReadClaude reads the per-project approvals of Claude Code's
// ~/.claude.json, by project folder. A missing file gives none.
func ReadClaude(path string) (map[string]ClaudeProject, error) {
	data, err := safefile.ReadFile(path, safefile.MaxConfig)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading Claude Code's approvals: %w", err)
	}
	var top struct {
		Projects map[string]ClaudeProject `json:"projects"`
	}
	if err := json.Unmarshal(data, &top); err != nil {
		return nil, fmt.Errorf("reading Claude Code's approvals in %s: %w", path, err)
	}
	return top.Projects, nil
}

// Policy decides for discovery whether a project server may run.
type Policy struct {
	// Store holds capbroker's own approvals; nil means none.
	Store *Store
	// Claude are Claude Code's approvals by project folder (ReadClaude);
	// ClaudePath names their file in messages.
	Claude     map[string]ClaudeProject
	ClaudePath string
}

// Check reports whether srv may be started, and if not, why and how to
// change that. It fits discovery's Options.Trust.
func (p *Policy) Check(srv mcpconfig.Server) (bool, string) {
	claudeFile := filepath.Base(srv.File) == ".mcp.json"
	var cp ClaudeProject
	if claudeFile {
		cp = p.Claude[filepath.Dir(srv.File)]
		if slices.Contains(cp.Disabled, srv.Name) {
			return false, fmt.Sprintf("disabled for this project in %s (disabledMcpjsonServers); remove it there to use it", p.claudePath())
		}
		if cp.All || slices.Contains(cp.Enabled, srv.Name) {
			return true, ""
		}
	}
	if p.Store != nil {
		ok, changed := p.Store.state(srv)
		if ok {
			return true, ""
		}
		if len(changed) > 0 {
			return false, "changed since it was approved: " + strings.Join(changed, ", ") + "; review and approve it again with " + Fix
		}
	}
	return false, "defined in the project and not approved; review and approve it with " + Fix
}

func (p *Policy) claudePath() string {
	if p.ClaudePath != "" {
		return p.ClaudePath
	}
	return "~/.claude.json"
}
