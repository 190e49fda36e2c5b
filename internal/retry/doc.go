// Package retry holds what capbroker's HTTP clients (the LLM providers and
// the embeddings client) share about retrying: reading how long a server
// asks them to wait.
package retry
