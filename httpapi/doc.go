// Package httpapi serves capbroker over HTTP: a JSON API over the same
// library calls the CLI makes, Prometheus metrics, an OpenAPI 3.1
// document and the catalog explorer page.
//
// # Endpoints
//
//	POST /v1/select        {"task","max","budget","family","format"} -> selection
//	POST /v1/find          {"query","k"}                             -> find result
//	GET  /v1/cards         ?kind=&source=                            -> cards
//	POST /v1/plan          {"goal","block_tokens","no_catalog"}      -> plan (Options.Planner)
//	POST /v1/assemble      {"plan","min","max_inferred"}             -> assembly
//	POST /v1/route         {"task","phase","capability","project",
//	                        "project_types","session","state"}      -> decision (Options.Router);
//	                                                                     fall-backs written to <project>/FLOW.md
//	GET  /v1/capabilities                                            -> capability map (Options.Router)
//	POST /v1/sessions      {"task"|"plan","plan_task","id",
//	                        "max_iterations"}                        -> 201 session (Options.Sessions)
//	GET  /v1/sessions      ?limit=                                   -> sessions, newest first
//	GET  /v1/sessions/{id}                                           -> session
//	POST /v1/sessions/{id}/find    {"query","k"}                     -> session + find
//	POST /v1/sessions/{id}/call    {"tool"}                          -> session + call verdict
//	POST /v1/sessions/{id}/resume  {"format"} (body optional)        -> session (+ payload)
//	GET  /v1/traces        ?session=&kind=&after=&limit=             -> trace records (Options.Traces)
//	GET  /v1/activity      ?limit=&records=                          -> sessions by latest activity (Options.Traces)
//	GET  /healthz                                                    -> {"status":"ok"}
//	GET  /metrics                                                    -> Prometheus text
//	GET  /openapi.json                                               -> OpenAPI 3.1
//	GET  /                                                           -> explorer page
//
// The parts beyond selection are given in [Options]: a [Router] (a
// *route.Cache over the discovered plugins), a *session.Manager, a
// [TraceStore] (a store.Store) and a planner (an llm.Provider). An
// endpoint whose part is not configured answers 501 with the code
// "not_configured". A route decision is recorded in the trace: in the
// session's when the request names one, else in Options.Traces; so are
// plans made and assembled (kind plan). A session started from a plan
// task ({"plan": {...}, "plan_task": "t2"}) exposes the task's assembled
// capabilities plus the floor, and its answer carries the plan check's
// warnings (cards changed since the plan was made, with the diff).
//
// # The gateway's sessions
//
// capbroker gateway writes its sessions and traces into the same store
// (gateway.StoreSessions). GET /v1/activity reads the newest trace records
// (and the stored sessions) and answers, per session, newest activity
// first: what it was given, found and called (by outcome), the held-back
// tools it met (matched by a find, or called and refused), whether it is
// stored by name or anonymous, whether it ended (its last record is the
// gateway's "end": when, and how) and whether it is live (not ended, and
// a record within [LiveWindow], the gateway's default idle timeout). The
// explorer's Sessions tab shows it, refreshing every 5 s, marks ended
// sessions "ended" with when (how on hover), and opens a session's trace
// (GET /v1/traces?session=) on a click.
//
// Request and response bodies are the same JSON the CLI prints with
// --json: both encode the same Go types (policy.Selection, route.Decision,
// route.Summary, session.View, trace.Record). Every error is one shape, {"error":{"code","message"}}, with a
// stable code (see [Code]).
//
// # Safety
//
// The server binds 127.0.0.1 unless told otherwise, and refuses to listen
// on any other address without a bearer token; with a token, every
// endpoint but /healthz and the explorer page (/ and /static/, which hold
// no data and ask for the token) requires "Authorization: Bearer <token>".
// Before the token, every request passes the browser-safety checks of
// internal/httpguard: a Host that is not localhost or an IP address (DNS
// rebinding) and requests from a page of another origin are refused with
// 403 forbidden ([Options.AllowedHosts], [Options.AllowedOrigins]). Bodies
// are limited to [Options.MaxBodyBytes], unknown JSON fields are refused,
// a task or query is read up to its first 16 KiB (rank.MaxQueryBytes),
// reads, writes and idle connections time out ([Options.ReadTimeout] and
// the others), and [Server.Run] shuts down gracefully when its context
// ends, finishing requests in flight.
package httpapi
