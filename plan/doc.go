// Package plan is plan-time capability selection: a planner model sees
// the catalog's capabilities and names, for each task of its plan, the
// ones the task needs; assembly honors those names, then fills gaps.
//
// # Plans are data
//
// A [Plan] is a goal and its [Task]s. A task has an id, a description,
// an [AgentSpec], instructions, depends_on (task ids), needs (outputs of
// earlier tasks) and capabilities (card names). [Encode] writes the
// canonical JSON a person can read and edit, and [Parse] reads it back:
//
//	{
//	  "goal": "Launch the budgeting app",
//	  "tasks": [
//	    {
//	      "id": "t1",
//	      "description": "Come up with names for the app.",
//	      "agent_spec": {"name": "naming_partner", "description": "...", "instructions": "..."},
//	      "instructions": "List every idea, then the three best.",
//	      "depends_on": [],
//	      "needs": [],
//	      "capabilities": ["brainstorming"]
//	    }
//	  ]
//	}
//
// capabilities is written only when non-empty, so a plan made without a
// catalog is byte for byte what a planner that never heard of
// capabilities writes, and a canonical file round-trips to the same bytes.
// A plan made with a catalog ends with its pins (below); [Plan.ID] names
// a plan by its content.
//
// # Pins
//
// A [Pin] is a named capability's card as it was when the plan was made:
// its digest, description and input schema. [Planner.Plan] pins what the
// plan names ([PinsOf]); [Assemble] checks the pins first ([CheckPins]):
// a card whose digest changed is kept with a warning that shows, line by
// line, what changed in its description and schema ([PinDiff]), and a
// name the catalog no longer has is dropped from every task with a
// warning. The assembly pins what the plan names as the catalog has it
// now.
//
// # The planner prompt
//
// [BuildPrompt] returns the system and user messages and the strict JSON
// Schema of the reply. Given a catalog, the user message gains a
// "Capabilities available" block of "name: description" lines and each
// task in the schema gains capabilities: {type: array, items: {type:
// string}}; given none, messages and schema are exactly the plain ones.
// The block stays within a token budget: when the catalog does not fit,
// the capabilities most relevant to the goal are listed first and a last
// line says how many were left out. [Planner] sends the prompt to an
// [llm.Provider] and parses and validates the reply.
//
// # Validation
//
// [Parse] rejects what is not a plan (bad JSON, wrong types, unknown or
// missing fields, empty or repeated ids) with a [*ParseError] that says
// where and keeps the raw text. [Validate] then drops, each with a
// [Warning] naming the task, what cannot stand: unknown capability names
// (with a hint at the closest), dependencies on unknown ids or on the
// task itself, repeated ones, the edge that would close a cycle, and
// needs whose task is not in depends_on.
//
// # Assembly
//
// [Assemble] gives each task the capabilities its plan names (origin
// "plan"), then, when a task has fewer than
// [AssembleOptions.MinCapabilities], ranks the catalog for the task's
// description and agent and adds the strongest matches (origin
// "inferred"), each with its reason. [Builtin] is a small registry of
// general capabilities (text_generation, web_search, summarization,
// brainstorming, structured_extraction, data_analysis, code_generation,
// translation) to plan with when nothing else is at hand: the CLI falls
// back on it when discovery finds no capability.
//
// Sessions run plan tasks: package session's Manager.StartFromPlan
// assembles the plan and starts a session that exposes one task's
// capabilities (policy's Selector.SelectNamed adds the floor and the
// bound).
package plan
