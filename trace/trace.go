package trace

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"
)

// Version is the version of the records this package writes.
const Version = 2

// ErrNewerVersion is returned for a record written by a newer capbroker.
var ErrNewerVersion = errors.New("trace record is newer than this reader")

// Kind says what a record is about.
type Kind string

// The kinds of record.
const (
	KindSelect Kind = "select" // a task's selection (a session start)
	KindFind   Kind = "find"   // a find_capability call
	KindCall   Kind = "call"   // a tool call checked against the exposed set
	KindRoute  Kind = "route"  // a phase or task routed to an agent
	KindPlan   Kind = "plan"   // a plan naming capabilities per task
	KindResume Kind = "resume" // a session rebuilt from the store
	KindEnd    Kind = "end"    // a session ended (its client closed it, it idled out, the gateway stopped)
)

// Kinds lists every kind, for help texts and validation.
var Kinds = []Kind{KindSelect, KindFind, KindCall, KindRoute, KindPlan, KindResume, KindEnd}

// Valid reports whether k is a known kind.
func (k Kind) Valid() bool {
	for _, x := range Kinds {
		if k == x {
			return true
		}
	}
	return false
}

// ParseKind reads a kind name.
func ParseKind(s string) (Kind, error) {
	if k := Kind(s); k.Valid() {
		return k, nil
	}
	return "", fmt.Errorf("unknown trace kind %q (want select, find, call, route, plan or resume)", s)
}

// Tier says which part of capbroker a failure came from.
type Tier string

// The failure tiers.
const (
	TierRank     Tier = "rank"     // ranking failed; the selection degraded to the full set
	TierStore    Tier = "store"    // persistence failed; the session went on in memory
	TierBudget   Tier = "budget"   // the iteration budget was spent
	TierExposure Tier = "exposure" // a call named a tool the session does not expose
	TierCatalog  Tier = "catalog"  // a persisted name is no longer in the catalog
	TierUnknown  Tier = "unknown"  // an old record's error, tier not recorded
)

// Failure is something that went wrong during an event. It is recorded,
// never fatal.
type Failure struct {
	Tier    Tier   `json:"tier"`
	Message string `json:"message"`
}

func (f Failure) String() string { return string(f.Tier) + ": " + f.Message }

// Tokens compares the exposed payload's tokens with the full catalog's.
// Full is zero when unknown (records of version 1).
type Tokens struct {
	Exposed int    `json:"exposed"`
	Full    int    `json:"full"`
	Format  string `json:"format,omitempty"`
}

// Record is one traced event, in the current version.
type Record struct {
	// Version is the version the record was written in. Records read
	// through [Decode] are upgraded, so Version is always [Version]; the
	// version read is in From.
	Version int `json:"v"`
	// From is the version the record was stored in, when it was upgraded
	// on read; zero otherwise. It is not stored.
	From int `json:"-"`
	// ID is assigned by the store, increasing in append order; zero
	// before the record is stored.
	ID int64 `json:"id,omitempty"`
	// SessionID is the session the event belongs to; empty for events
	// outside a session (a one-off select, route or plan).
	SessionID string    `json:"session_id,omitempty"`
	Kind      Kind      `json:"kind"`
	At        time.Time `json:"at"`
	// Task is the task the event served.
	Task string `json:"task,omitempty"`
	// Query is the find_capability query, for a find.
	Query string `json:"query,omitempty"`
	// Tool is the tool called, for a call.
	Tool string `json:"tool,omitempty"`
	// ToolDigest is the called card's digest (card.Card.Digest) when it
	// was called, for a call; empty when unknown (older records). Package
	// learn uses it to tell a card that changed since.
	ToolDigest string `json:"tool_digest,omitempty"`
	// SelectedTools are the tools exposed after the event, in order (the
	// escape hatch is always exposed in addition).
	SelectedTools []string `json:"selected_tools"`
	// Found are the tools a find newly exposed.
	Found []string `json:"found,omitempty"`
	// CapabilityReason says why those tools.
	CapabilityReason string `json:"capability_reason,omitempty"`
	// FindCapabilityCalls counts the session's find_capability calls so
	// far, this one included.
	FindCapabilityCalls int `json:"find_capability_calls"`
	// Iteration is the session's iterations used after the event.
	Iteration int    `json:"iteration,omitempty"`
	Tokens    Tokens `json:"tokens"`
	// Latency is how long the decision took.
	Latency time.Duration `json:"latency_ns"`
	// Degraded is set when a failure made the result less than normal
	// (a full-set fallback, an in-memory session).
	Degraded bool      `json:"degraded,omitempty"`
	Failures []Failure `json:"failures,omitempty"`
	// Detail holds kind-specific data (a route decision, a plan) as raw JSON.
	Detail json.RawMessage `json:"detail,omitempty"`
}

// Failed reports whether any failure of tier t was recorded (any tier
// when t is empty).
func (r *Record) Failed(t Tier) bool {
	for _, f := range r.Failures {
		if t == "" || f.Tier == t {
			return true
		}
	}
	return false
}

// Validate reports the first problem that would make r unreadable later.
func (r *Record) Validate() error {
	if !r.Kind.Valid() {
		return fmt.Errorf("trace record: unknown kind %q", r.Kind)
	}
	if r.At.IsZero() {
		return fmt.Errorf("trace record (%s): no time", r.Kind)
	}
	if len(r.Detail) > 0 && !json.Valid(r.Detail) {
		return fmt.Errorf("trace record (%s): detail is not valid JSON", r.Kind)
	}
	return nil
}

// Encode returns r as JSON in the current version.
func (r Record) Encode() ([]byte, error) {
	if err := r.Validate(); err != nil {
		return nil, err
	}
	r.Version = Version
	if r.SelectedTools == nil {
		r.SelectedTools = []string{}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(r); err != nil {
		return nil, fmt.Errorf("encoding trace record: %w", err)
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}

// Decode reads a record of any version, upgrading it to the current one.
// A record without a "v" field is version 1.
func Decode(data []byte) (Record, error) {
	var head struct {
		V *json.Number `json:"v"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return Record{}, fmt.Errorf("decoding trace record: %w", err)
	}
	v := 1
	if head.V != nil {
		n, err := head.V.Int64()
		if err != nil || n < 1 {
			return Record{}, fmt.Errorf("decoding trace record: bad version %s", head.V.String())
		}
		if n > Version {
			return Record{}, fmt.Errorf("decoding trace record: version %d, this reader knows up to %d: %w", n, Version, ErrNewerVersion)
		}
		v = int(n)
	}
	var r Record
	var err error
	switch v {
	case 1:
		r, err = decodeV1(data)
	case 2:
		err = json.Unmarshal(data, &r)
	}
	if err != nil {
		return Record{}, fmt.Errorf("decoding trace record (version %d): %w", v, err)
	}
	if v != Version {
		r.From = v
	}
	r.Version = Version
	if r.SelectedTools == nil {
		r.SelectedTools = []string{}
	}
	if err := r.Validate(); err != nil {
		return Record{}, fmt.Errorf("decoding trace record (version %d): %w", v, err)
	}
	return r, nil
}

// recordV1 is the first record shape: flat, with Unix-second times, a
// single token count and an error string.
type recordV1 struct {
	ID        int64    `json:"id"`
	Session   string   `json:"session"`
	Event     string   `json:"event"`
	TS        float64  `json:"ts"`
	Task      string   `json:"task"`
	Query     string   `json:"query"`
	Tool      string   `json:"tool"`
	Tools     []string `json:"tools"`
	Reason    string   `json:"reason"`
	Tokens    int      `json:"tokens"`
	LatencyMS float64  `json:"latency_ms"`
	Error     string   `json:"error"`
}

// v1Kinds maps version-1 event names to kinds.
var v1Kinds = map[string]Kind{
	"select":    KindSelect,
	"find":      KindFind,
	"tool_call": KindCall,
	"route":     KindRoute,
	"plan":      KindPlan,
}

func decodeV1(data []byte) (Record, error) {
	var o recordV1
	if err := json.Unmarshal(data, &o); err != nil {
		return Record{}, err
	}
	k, ok := v1Kinds[o.Event]
	if !ok {
		return Record{}, fmt.Errorf("unknown event %q", o.Event)
	}
	if o.TS <= 0 || math.IsInf(o.TS, 0) || math.IsNaN(o.TS) || o.TS > 1e11 {
		return Record{}, fmt.Errorf("bad time %v", o.TS)
	}
	sec, frac := math.Modf(o.TS)
	r := Record{
		ID:               o.ID,
		SessionID:        o.Session,
		Kind:             k,
		At:               time.Unix(int64(sec), int64(math.Round(frac*1e6))*1e3).UTC(),
		Task:             o.Task,
		Query:            o.Query,
		Tool:             o.Tool,
		SelectedTools:    o.Tools,
		CapabilityReason: o.Reason,
		Tokens:           Tokens{Exposed: o.Tokens},
		Latency:          time.Duration(math.Round(o.LatencyMS * 1e6)),
	}
	if k == KindFind {
		// Version 1 did not count hatch calls; a find record is at least one.
		r.FindCapabilityCalls = 1
	}
	if o.Error != "" {
		r.Failures = []Failure{{Tier: TierUnknown, Message: o.Error}}
	}
	return r, nil
}
