package gateway

import (
	"slices"
)

// sessionState is what a session is given and finds, apart from the MCP
// server that lists it: the part of a session worth keeping beyond one
// gateway process. Its session's mu guards it.
type sessionState struct {
	// provisional: the selection was made before every upstream had
	// started; each sync selects again on the newer catalog, adding what
	// late upstreams offer, until they all have.
	provisional bool
	allSig      string          // all mode: the catalog listing last announced
	planTask    string          // the plan task the session is on, if any (started with, or entered by find_capability's task)
	planNames   []string        // the capabilities that task names (not its floor): finds rank them first
	finds       int             // find_capability calls so far
	exposed     map[string]bool // callable upstream tools (auto, search, call)
	order       []string        // exposed, in the order given: selected, then found
	initial     map[string]bool // call mode: the tools listed from the start
}

// exposedNames are the upstream tools the session may call now: every
// tool in ModeAll, else what it was given and found.
func (s *session) exposedNames(cat *catalog) []string {
	if s.mode == ModeAll {
		return slices.Clone(cat.names)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.order)
}

// addLocked adds names to the exposed tools, in order, and returns those
// that were not exposed yet. s.mu is held.
func (s *session) addLocked(names []string) []string {
	var added []string
	for _, n := range names {
		if !s.exposed[n] {
			s.exposed[n] = true
			s.order = append(s.order, n)
			added = append(added, n)
		}
	}
	return added
}
func (s *session) findCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.finds
}
