package gateway

import (
	"context"
	"slices"
	"sync"
)

// ExposedStore keeps the tools each named session was given, so a client
// that reconnects under the same session name sees the same tools. The
// gateway saves a session's set after each change; sessions without a
// name are never stored. Implementations must be safe for concurrent use;
// session persistence (package store) plugs in here.
type ExposedStore interface {
	// Load returns the exposed tool names of session key; ok is false
	// when the session is unknown.
	Load(ctx context.Context, key string) (names []string, ok bool, err error)
	// Save adds names to the exposed tools of session key. A session's
	// tools only grow: the stored set is the union of every Save, whatever
	// order concurrent Saves (of several clients under one name, or of
	// several gateways sharing a database) land in. Names already stored
	// keep their place; new ones are appended in the order given.
	Save(ctx context.Context, key string, names []string) error
}

// MemoryStore is an ExposedStore held in memory: sessions survive
// reconnects but not a restart of the gateway. It holds one entry per
// session name ever saved.
type MemoryStore struct {
	mu sync.Mutex
	m  map[string][]string
}

// NewMemoryStore returns an empty MemoryStore.
func NewMemoryStore() *MemoryStore { return &MemoryStore{m: map[string][]string{}} }

// Load implements ExposedStore.
func (s *MemoryStore) Load(_ context.Context, key string) ([]string, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n, ok := s.m[key]
	return slices.Clone(n), ok, nil
}

// Save implements ExposedStore.
func (s *MemoryStore) Save(_ context.Context, key string, names []string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.m[key] = merge(s.m[key], names)
	return nil
}

var _ ExposedStore = (*MemoryStore)(nil)
