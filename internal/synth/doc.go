// Package synth generates synthetic capability catalogs and tasks for
// benchmarks and load tests: deterministic for a seed, with realistic
// name shapes (verb_object, camelCase, dotted), description lengths and
// parameter schemas, drawn from a vocabulary of common tool words.
package synth
