package gateway

import (
	"context"
	"slices"
	"sync"
)

// ExposedStore keeps the tools each session was given, so a client that
// reconnects under the same session name sees the same tools. The gateway
// saves a session's whole set after each change. Implementations must be
// safe for concurrent use; session persistence (package store) plugs in
// here.
type ExposedStore interface {
	// Load returns the exposed tool names of session key; ok is false
	// when the session is unknown.
	Load(ctx context.Context, key string) (names []string, ok bool, err error)
	// Save replaces the exposed tool names of session key.
	Save(ctx context.Context, key string, names []string) error
}

// MemoryStore is an ExposedStore held in memory: sessions survive
// reconnects but not a restart of the gateway.
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
	s.m[key] = slices.Clone(names)
	return nil
}

var _ ExposedStore = (*MemoryStore)(nil)
