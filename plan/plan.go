package plan

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
)

// Plan is a goal broken into tasks. It is plain data: a planner writes
// it, a person may read and edit it, and [Assemble] turns it into the
// capabilities each task's agent gets.
type Plan struct {
	// Goal is what the whole plan achieves.
	Goal string `json:"goal"`
	// Tasks are the steps, in the order the planner wrote them.
	Tasks []Task `json:"tasks"`
	// Pins are the cards of the capabilities the tasks name, as they were
	// when the plan was made (see [PinsOf] and [CheckPins]). Written only
	// when non-empty.
	Pins []Pin `json:"pins,omitempty"`
}

// Task is one step of a plan.
type Task struct {
	// ID is unique within the plan ("t1"); edges refer to it.
	ID string `json:"id"`
	// Description says what the task must achieve.
	Description string `json:"description"`
	// AgentSpec describes the agent that should carry the task out.
	AgentSpec AgentSpec `json:"agent_spec"`
	// Instructions say what the agent must do and produce.
	Instructions string `json:"instructions"`
	// DependsOn lists the ids of tasks that must finish first.
	DependsOn []string `json:"depends_on"`
	// Needs lists the outputs of earlier tasks this task consumes; each
	// one's task must also be in DependsOn.
	Needs []Need `json:"needs"`
	// Capabilities names the catalog cards the task's agent needs. It is
	// written only when non-empty, so a plan made without a catalog
	// serializes exactly as a planner that never heard of capabilities
	// would write it.
	Capabilities []string `json:"capabilities,omitempty"`
}

// AgentSpec describes an agent.
type AgentSpec struct {
	Name         string `json:"name"`
	Description  string `json:"description"`
	Instructions string `json:"instructions"`
}

// Need is one output of an earlier task that a task consumes.
type Need struct {
	// Task is the id of the task producing the output.
	Task string `json:"task"`
	// Output names the output ("summary", "sales.csv").
	Output string `json:"output"`
}

// task has Task's fields without its methods, for encoding.
type task Task

// MarshalJSON writes the task's fields in their fixed order. depends_on
// and needs are always arrays (never null); capabilities is left out when
// empty.
func (t Task) MarshalJSON() ([]byte, error) {
	c := task(t)
	if c.DependsOn == nil {
		c.DependsOn = []string{}
	}
	if c.Needs == nil {
		c.Needs = []Need{}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // a plan is read by people, not embedded in HTML
	if err := enc.Encode(c); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// Encode writes p in its canonical form: two-space indentation, fields in
// their fixed order, no HTML escaping, a final newline. A plan file in
// this form decodes and encodes back to the same bytes.
func Encode(p *Plan) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	pp := *p
	if pp.Tasks == nil {
		pp.Tasks = []Task{}
	}
	if err := enc.Encode(&pp); err != nil {
		return nil, fmt.Errorf("encoding plan: %w", err)
	}
	return buf.Bytes(), nil
}

// Clone returns a deep copy of p.
func (p *Plan) Clone() *Plan {
	c := &Plan{Goal: p.Goal, Tasks: make([]Task, len(p.Tasks)), Pins: cloneSlice(p.Pins)}
	for i, t := range p.Tasks {
		t.DependsOn = cloneSlice(t.DependsOn)
		t.Needs = cloneSlice(t.Needs)
		t.Capabilities = cloneSlice(t.Capabilities)
		c.Tasks[i] = t
	}
	return c
}

func cloneSlice[T any](s []T) []T {
	if s == nil {
		return nil
	}
	return append(make([]T, 0, len(s)), s...)
}

// ID returns a short name of p's content: the first 12 hex digits of the
// SHA-256 of its canonical encoding. Plans recorded in the trace are
// found again by it ("capbroker gateway" takes "ID/t2" for task t2 of a
// stored plan).
func (p *Plan) ID() string {
	data, err := Encode(p)
	if err != nil {
		return ""
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])[:12]
}

// Task returns the task with the given id.
func (p *Plan) Task(id string) (*Task, bool) {
	for i := range p.Tasks {
		if p.Tasks[i].ID == id {
			return &p.Tasks[i], true
		}
	}
	return nil, false
}
