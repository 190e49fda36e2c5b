// Package dense adds ranking by meaning to capbroker's lexical ranking:
// card and query vectors from an embedder (the built-in sentence encoder
// of package encoder, or an OpenAI-compatible embeddings endpoint),
// exact cosine search, and a hybrid ranker that fuses both. The capbroker
// CLI ranks hybrid by default, offline, with the built-in encoder;
// CAPBROKER_RANKER=lexical turns it off.
//
// Lexical ranking (package rank) misses requests phrased unlike a tool's
// description: "look up this URL" shares no word with fetch_webpage's
// "Fetch a web page and return its text". An embedding model places both
// near each other.
//
// # Configuration
//
// [ClientFromEnv] reads the environment:
//
//	CAPBROKER_EMBED_MODEL=nomic-embed-text                 # turns dense ranking on
//	CAPBROKER_EMBED_BASE_URL=http://localhost:11434/v1     # Ollama; default OpenAI
//	CAPBROKER_EMBED_API_KEY=...                            # or OPENAI_API_KEY
//
// Any server speaking POST /v1/embeddings works: OpenAI, Ollama, vLLM,
// llama.cpp server, LiteLLM. [Client] sends {"model","input":[...]}
// in batches ([ClientOptions.BatchSize]), bounds each attempt
// ([ClientOptions.Timeout]) and retries 429, 5xx and network errors with
// exponential backoff, honoring Retry-After and retry-after-ms. Error
// bodies {"error":{"message","type","code"}} become an [*APIError] whose
// message says which variable to check.
//
// # What is embedded
//
// A card's vector is the embedding of [Text]: its name split into words,
// its description and its parameter names,
//
//	fetch webpage: Fetch a web page and return its text. Parameters: url, max length.
//
// Only fields covered by the card digest enter the text, so the digest
// decides the vector.
//
// # Cache
//
// [Cache] keeps vectors in a SQLite table ([CacheTable]) of the card
// index's database file, keyed by (card digest, model), WAL mode.
// [EmbedCards] looks every card up and embeds only the misses: a catalog
// is embedded once, and a card whose description changes gets a new
// digest and is embedded again, alone. Vectors of different models (or
// different [ClientOptions.Dimensions]) never mix.
//
// A cache opened with [OpenCache] also keeps, in a folder beside the
// database (<file>-vectors), a snapshot of each lookup the database
// answered whole (the same model and digests: one catalog), at most 16,
// and answers that lookup again from it without opening SQLite: a
// one-shot command over a catalog it has seen reads one flat file (its
// table is created on the first use of the database, not on open). Every
// Put, by any process, removes the snapshots before and after it writes.
//
// # Search
//
// [Vectors] holds L2-normalized float32 vectors (or int8 with a scale per
// vector, [VectorOptions.Int8]) and scans them all: exact cosine
// similarity, top k in a bounded heap, ties broken by name, split across
// cores for large catalogs. On amd64 with AVX2 the float32 scan scores
// four vectors at a time in assembly, with the Go loop's operations in
// its order (the same scores, bit for bit), prefetching the next four:
// about 22-27 ns a 384-dimension vector against the Go loop's 120-130
// (BenchmarkDots). A search over 10k cards takes about 0.3 ms of CPU,
// over 100k about 8 ms (BenchmarkSearch, one core), so no approximate
// index is needed at the sizes capbroker serves.
//
// # Hybrid ranking
//
// [Hybrid] takes the top [Options.Depth] candidates of both rankings and
// fuses them by z-scores ([ZScore], the default: the lexical score
// standardized over the lexical candidates, the cosine similarity over
// the whole catalog), reciprocal rank fusion ([RRF]) or a weighted blend
// of normalized scores ([Blend]), weighted by [Options.DenseWeight]
// (0.5: the largest at which no dev set ranks below lexical ranking with
// the built-in encoder).
//
// A task of several sentences is embedded sentence by sentence
// ([QueryParts]): the vector of a whole multi-request task lies near none
// of the tools it needs. Each card then counts its best sentence: the
// z-score of its similarity to that sentence (over the catalog, per
// sentence), and that similarity. On Seal-Tools, whose tasks chain up to
// four requests, embedding the whole task instead costs 0.03 of NDCG@10
// (0.943 → 0.914 at weight 0.45 with the built-in encoder), and adding
// the whole task as one more part changes nothing on any dev set.
// Embedding the sentences costs about what embedding the whole task did.
// Selection ranks such a task with its steps, the same texts: each is
// embedded once, and all the vectors of a select are scored against the
// cards in one pass over the store (a block of vectors read once for all
// of them), not a scan each.
// Each [Hit] explains both parts: the lexical rank, score and matched
// terms, and the dense rank and cosine similarity (also in
// rank.Hit.Similarity, which selection reasons print as "similarity
// 0.62"). Under z-score fusion a card counts meaning as coverage (which
// selection thresholds read) only when its similarity stands [MeaningZ]
// standard deviations above the catalog's mean, so a nonsense task still
// matches nothing.
//
// # Never a failure
//
// [Auto] is the ranker the CLI builds: the hybrid (or dense) ranking once
// every card has a vector, the lexical ranking until then. It reads the
// vectors it can from the cache; the missing ones are embedded in a
// goroutine for a long-running process ([AutoOptions.Background], serve),
// which then also gets its embedder ready for queries ([Preparer]: the
// built-in encoder lays its weights out for its kernels, so the first
// query does not pay for it), or before answering for a one-shot command when that fits
// [AutoOptions.Budget] (about a second; the built-in encoder estimates
// its cost, an endpoint is given at most the query timeout). Otherwise —
// too many cards to embed now, an unreadable or unwritable cache, an
// endpoint down while embedding cards — it ranks lexically, says why once
// ([AutoOptions.OnNote]) and in each hit's Fallback, and counts it
// ([Auto.Fallbacks]).
//
// Hybrid.Rank never fails. If the query cannot be embedded within
// [Options.QueryTimeout], it returns the lexical ranking, counts the
// fallback ([Hybrid.Fallbacks]), calls [Options.OnFallback], and skips the
// embedder for [Options.Cooldown] so later queries do not wait too.
//
// [Hybrid.SearchBatch], [Index.SearchBatch] and [Auto.SearchBatch] (and
// their RankBatch, policy.BatchRanker's method) rank several queries, a
// task and its steps, with their vectors embedded in one call to the
// embedder; each query is ranked as Search ranks it alone.
//
// # Use
//
//	e, err := dense.ClientFromEnv(os.Getenv, nil) // dense.ErrNotConfigured: stay lexical
//	cache, err := dense.OpenCache(ctx, "capbroker.db")
//	r, err := dense.NewRanker(ctx, dense.KindHybrid, cat.Cards(), e, cache, nil)
//	hits, _ := r.Rank(ctx, "look up this URL", 5)
//
// Any ranker [NewRanker] returns is a policy.Ranker.
package dense
