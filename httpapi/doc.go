// Package httpapi serves capbroker over HTTP: a JSON API over the same
// library calls the CLI makes, Prometheus metrics, an OpenAPI 3.1
// document and the catalog explorer page.
//
// # Endpoints
//
//	POST /v1/select        {"task","max","budget","family","format"} -> selection
//	POST /v1/find          {"query","k"}                             -> find result
//	GET  /v1/cards         ?kind=&source=                            -> cards
//	GET  /healthz                                                    -> {"status":"ok"}
//	GET  /metrics                                                    -> Prometheus text
//	GET  /openapi.json                                               -> OpenAPI 3.1
//	GET  /                                                           -> explorer page
//
// Other parts of capbroker (routing, planning, sessions, traces) add their
// endpoints through [Options]; an endpoint whose part is not configured
// answers 501 with the code "not_configured".
//
// Request and response bodies are the same JSON the CLI prints with
// --json. Every error is one shape, {"error":{"code","message"}}, with a
// stable code (see [Code]).
//
// # Safety
//
// The server binds 127.0.0.1 unless told otherwise, and refuses to listen
// on any other address without a bearer token; with a token, every
// endpoint but /healthz requires "Authorization: Bearer <token>". Bodies
// are limited to [Options.MaxBodyBytes], unknown JSON fields are refused,
// reads, writes and idle connections time out, and [Server.Run] shuts down
// gracefully when its context ends, finishing requests in flight.
package httpapi
