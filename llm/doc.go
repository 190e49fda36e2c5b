// Package llm asks language models for completions through one small
// interface, [Provider], so the planner does not care which model answers.
//
// # Providers
//
//   - [OpenAI]: any OpenAI-compatible Chat Completions endpoint (OpenAI,
//     Ollama at http://localhost:11434/v1, vLLM, LM Studio), chosen by base
//     URL. A [Request.Schema] becomes a strict json_schema response format.
//   - [Anthropic]: the Messages API. A schema becomes a forced tool call:
//     one tool whose input_schema is the schema, which the model must call;
//     the tool's input is the reply.
//   - [Replay]: recorded replies from a file or a folder, for tests and
//     demos; [Recorder] records them from a real provider.
//
// The HTTP providers bound each attempt with a timeout, retry 429 and 5xx
// answers with exponential backoff (honoring retry-after and
// retry-after-ms, up to [MaxRetryWait]), and turn the provider's error
// body into an [*APIError]. A server that cannot be reached is an error
// wrapping [ErrUnreachable]; a missing setting one wrapping
// [ErrNotConfigured], whose message says how to configure a provider.
//
// # Configuration
//
// [LoadConfig] reads the "llm:" section of capbroker.yaml and lets the
// environment override it; [New] builds the provider:
//
//	llm:
//	  provider: openai            # CAPBROKER_LLM: openai | anthropic | replay
//	  base_url: http://localhost:11434/v1   # CAPBROKER_LLM_BASE_URL
//	  model: llama3.1             # CAPBROKER_LLM_MODEL
//	  timeout: 2m                 # CAPBROKER_LLM_TIMEOUT
//	  max_retries: 3              # CAPBROKER_LLM_RETRIES
//	  replay: testdata/replies    # CAPBROKER_LLM_REPLAY
//	  record: recorded            # CAPBROKER_LLM_RECORD
//
// API keys come from OPENAI_API_KEY and ANTHROPIC_API_KEY only.
package llm
