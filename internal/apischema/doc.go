// Package apischema checks JSON answers against the schemas of an OpenAPI
// 3.1 document: the subset capbroker's /openapi.json uses ($ref, type,
// properties, required, items, enum). The HTTP API's tests check every
// answer they get with it, and the CLI's tests check what --json prints,
// so that a list is [] and never null on every face, and a field the
// code writes is one the document names.
//
// A [Checker] also counts, for every required array of the document, how
// often an answer held it and how often it was empty, so a test can fail
// when a required array was never exercised ([Checker.RequiredArrays],
// [Checker.Seen]).
package apischema
