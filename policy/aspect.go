package policy

import "github.com/capbroker/capbroker/steps"

// Aspect is one step of a task (see package steps).
type Aspect = steps.Step

// MaxAspects bounds the steps a task is split into.
const MaxAspects = steps.Max

// Aspects splits task into its steps: sentences, lines and list items,
// clauses joined by "then", ";", "and" or "," before a verb that starts a
// new action ([steps.Split]). A ranker that embeds queries (package
// dense) compares a task of several steps with each card step by step,
// on the same split.
func Aspects(task string) []Aspect { return steps.Split(task) }
