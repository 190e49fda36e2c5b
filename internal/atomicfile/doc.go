// Package atomicfile writes files so that a reader, or a process that
// crashes mid-write, only ever sees the old content or the new one, never
// a part: the data goes to a temporary file in the same folder, is synced,
// and is renamed over the target, and the folder is synced after. Every
// file capbroker writes for a person or for a later run (the card index,
// pins, route cache, FLOW.md, plans, trace exports, recorded replies)
// goes through it.
package atomicfile
