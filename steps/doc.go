// Package steps splits a task into the steps it asks for, so that each
// step can be matched with the capabilities that serve it:
//
//	steps.Split("read config.yaml, then post a summary to slack")
//	// [{read config.yaml 0 16} {post a summary to slack 23 46}]
//
// The split is deterministic and explainable: lines and list items,
// sentences, ";" and connectives such as "then" or "after that", and
// "and" or "," before a verb that starts a new action ("fetch the page,
// summarize it"). Quoted text, code, URLs, e-mail addresses and file
// names are never split, pairs such as "search and replace" stay whole,
// and a step too short to stand on its own joins the one before it.
//
// Package policy judges each capability on the step it serves best
// (policy.Aspects); package dense embeds a task of several steps step
// by step, so the task's sentence vectors are its steps' own and a task
// ranked with its steps embeds each step once.
package steps
