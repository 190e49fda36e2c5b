package dense

import (
	"github.com/capbroker/capbroker/internal/safefile"

	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"net/url"
	"strings"
	"sync"
	"time"

	_ "modernc.org/sqlite" // the "sqlite" database/sql driver

	"github.com/capbroker/capbroker/card"
)

// CacheTable is the table the cache keeps its vectors in. It shares the
// database file with the card index; its name is prefixed to stay clear
// of other tables.
const CacheTable = "dense_embeddings"

const cacheSchema = `CREATE TABLE IF NOT EXISTS ` + CacheTable + ` (
	digest   TEXT    NOT NULL, -- card.Card.Digest
	model    TEXT    NOT NULL, -- Embedder.Model()
	text_sha TEXT    NOT NULL, -- hex SHA-256 of the embedded text (see Text)
	dim      INTEGER NOT NULL,
	vector   BLOB    NOT NULL, -- dim little-endian float32
	created  INTEGER NOT NULL, -- unix seconds
	UNIQUE (model, digest)
)`

// Cache stores card vectors in SQLite, keyed by card digest and model, so
// a catalog is embedded once and only changed cards are embedded again.
// It is safe for concurrent use.
type Cache struct {
	db    *sql.DB
	owned bool
	pg    bool // PostgreSQL (OpenPostgresCache): $n placeholders, BYTEA, ON CONFLICT
	// snapDir, set by OpenCache, holds the snapshots of whole lookups
	// (snapshot.go); empty for none.
	snapDir string
	// schema creates the table on first use of the database (OpenCache:
	// a lookup a snapshot answers never opens it).
	schemaMu   sync.Mutex
	schemaDone bool
}

// q adapts a statement written for SQLite to the cache's database.
func (c *Cache) q(query string) string {
	if !c.pg {
		return query
	}
	var b strings.Builder
	n := 0
	for _, r := range query {
		if r == '?' {
			n++
			fmt.Fprintf(&b, "$%d", n)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// OpenCache opens (creating if needed) the SQLite database at path, in
// WAL mode, and the cache table in it. path is usually the card index's
// database file.
func OpenCache(ctx context.Context, path string) (*Cache, error) {
	if path == "" {
		return nil, errors.New("opening embedding cache: no database path")
	}
	if err := safefile.PrivateDatabase(path); err != nil {
		return nil, fmt.Errorf("opening embedding cache %s: %w", path, err)
	}
	q := url.Values{}
	q.Add("_pragma", "busy_timeout(10000)")
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "synchronous(NORMAL)")
	// A small page cache (SQLite's default size): the vectors are read
	// once at start and written once, so a larger cache only keeps pages
	// the process never reads again — up to the whole table on every
	// connection (14 MiB for 1,007 cards behind a gateway at 32 MiB;
	// reading or writing 10,000 vectors is no slower at 2 MiB).
	q.Add("_pragma", "cache_size(-2048)") // KiB per connection
	db, err := sql.Open("sqlite", "file:"+path+"?"+q.Encode())
	if err != nil {
		return nil, fmt.Errorf("opening embedding cache %s: %w", path, err)
	}
	// The table is created on the first use of the database, not here:
	// a one-shot command whose lookup a snapshot answers never opens it.
	return &Cache{db: db, owned: true, snapDir: path + snapshotSuffix}, nil
}

// schema creates the cache table if it is missing, once (again after a
// failure).
func (c *Cache) schema(ctx context.Context) error {
	c.schemaMu.Lock()
	defer c.schemaMu.Unlock()
	if c.schemaDone {
		return nil
	}
	if _, err := c.db.ExecContext(ctx, cacheSchema); err != nil {
		return fmt.Errorf("creating table %s: %w", CacheTable, err)
	}
	c.schemaDone = true
	return nil
}

// NewCache uses an open SQLite database (the card index's handle) and
// creates the cache table in it if missing. Close does not close db.
func NewCache(ctx context.Context, db *sql.DB) (*Cache, error) {
	c := &Cache{db: db}
	if err := c.schema(ctx); err != nil {
		return nil, err
	}
	return c, nil
}

// Close closes the database if OpenCache opened it.
func (c *Cache) Close() error {
	if c.owned {
		return c.db.Close()
	}
	return nil
}

// Entry is one cached vector.
type Entry struct {
	// Digest is the card's digest.
	Digest string
	// TextSHA is the hex SHA-256 of the text that was embedded; a lookup
	// whose text differs (the embedded text's format changed) is a miss.
	TextSHA string
	Vector  []float32
}

// lookupChunk bounds the parameters of one query.
const lookupChunk = 500

// Get returns the cached entries of model for the given digests. Missing
// digests are absent from the map; a corrupt row is treated as missing.
// A cache opened with OpenCache answers a lookup it answered whole
// before from a snapshot file (snapshot.go) without reading the
// database.
func (c *Cache) Get(ctx context.Context, model string, digests []string) (map[string]Entry, error) {
	snap := c.snapshotFile(model, digests)
	if out, ok := readSnapshot(snap, model, digests); ok {
		return out, nil
	}
	if err := c.schema(ctx); err != nil {
		return nil, fmt.Errorf("reading embedding cache: %w", err)
	}
	out := make(map[string]Entry, len(digests))
	for lo := 0; lo < len(digests); lo += lookupChunk {
		chunk := digests[lo:min(lo+lookupChunk, len(digests))]
		args := make([]any, 0, len(chunk)+1)
		args = append(args, model)
		for _, d := range chunk {
			args = append(args, d)
		}
		q := `SELECT digest, text_sha, dim, vector FROM ` + CacheTable +
			` WHERE model = ? AND digest IN (?` + strings.Repeat(",?", len(chunk)-1) + `)`
		rows, err := c.db.QueryContext(ctx, c.q(q), args...)
		if err != nil {
			return nil, fmt.Errorf("reading embedding cache: %w", err)
		}
		for rows.Next() {
			var (
				e    Entry
				dim  int
				blob []byte
			)
			if err := rows.Scan(&e.Digest, &e.TextSHA, &dim, &blob); err != nil {
				rows.Close()
				return nil, fmt.Errorf("reading embedding cache: %w", err)
			}
			if v, ok := decodeVector(blob, dim); ok {
				e.Vector = v
				out[e.Digest] = e
			}
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return nil, fmt.Errorf("reading embedding cache: %w", err)
		}
	}
	c.writeSnapshot(snap, model, digests, out)
	return out, nil
}

// Put stores entries for model in one transaction, replacing older
// vectors of the same digests.
func (c *Cache) Put(ctx context.Context, model string, entries []Entry) error {
	if len(entries) == 0 {
		return nil
	}
	if err := c.schema(ctx); err != nil {
		return fmt.Errorf("writing embedding cache: %w", err)
	}
	// Snapshots go first: a lookup between the commit and their removal
	// must not answer from one.
	c.dropSnapshots()
	tx, err := c.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("writing embedding cache: %w", err)
	}
	defer tx.Rollback()
	insert := `INSERT OR REPLACE INTO ` + CacheTable + ` (digest, model, text_sha, dim, vector, created) VALUES (?, ?, ?, ?, ?, ?)`
	if c.pg {
		insert = `INSERT INTO ` + CacheTable + ` (digest, model, text_sha, dim, vector, created) VALUES (?, ?, ?, ?, ?, ?)
			ON CONFLICT (model, digest) DO UPDATE SET text_sha = excluded.text_sha, dim = excluded.dim, vector = excluded.vector, created = excluded.created`
	}
	st, err := tx.PrepareContext(ctx, c.q(insert))
	if err != nil {
		return fmt.Errorf("writing embedding cache: %w", err)
	}
	defer st.Close()
	now := time.Now().Unix()
	for _, e := range entries {
		if _, err := st.ExecContext(ctx, e.Digest, model, e.TextSHA, len(e.Vector), encodeVector(e.Vector), now); err != nil {
			return fmt.Errorf("writing embedding cache: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("writing embedding cache: %w", err)
	}
	c.dropSnapshots()
	return nil
}

// Len returns how many vectors the cache holds for model.
func (c *Cache) Len(ctx context.Context, model string) (int, error) {
	if err := c.schema(ctx); err != nil {
		return 0, fmt.Errorf("counting embedding cache: %w", err)
	}
	var n int
	err := c.db.QueryRowContext(ctx, c.q(`SELECT count(*) FROM `+CacheTable+` WHERE model = ?`), model).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("counting embedding cache: %w", err)
	}
	return n, nil
}

// Prune deletes the vectors of model whose digest is not in keep (cards
// no longer in the catalog) and returns how many it deleted.
func (c *Cache) Prune(ctx context.Context, model string, keep []string) (int, error) {
	if err := c.schema(ctx); err != nil {
		return 0, fmt.Errorf("pruning embedding cache: %w", err)
	}
	keepSet := make(map[string]bool, len(keep))
	for _, d := range keep {
		keepSet[d] = true
	}
	rows, err := c.db.QueryContext(ctx, c.q(`SELECT digest FROM `+CacheTable+` WHERE model = ?`), model)
	if err != nil {
		return 0, fmt.Errorf("pruning embedding cache: %w", err)
	}
	var drop []string
	for rows.Next() {
		var d string
		if err := rows.Scan(&d); err != nil {
			rows.Close()
			return 0, fmt.Errorf("pruning embedding cache: %w", err)
		}
		if !keepSet[d] {
			drop = append(drop, d)
		}
	}
	err = rows.Err()
	rows.Close()
	if err != nil {
		return 0, fmt.Errorf("pruning embedding cache: %w", err)
	}
	tx, err := c.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, fmt.Errorf("pruning embedding cache: %w", err)
	}
	defer tx.Rollback()
	for _, d := range drop {
		if _, err := tx.ExecContext(ctx, c.q(`DELETE FROM `+CacheTable+` WHERE model = ? AND digest = ?`), model, d); err != nil {
			return 0, fmt.Errorf("pruning embedding cache: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return 0, fmt.Errorf("pruning embedding cache: %w", err)
	}
	return len(drop), nil
}

func encodeVector(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

func decodeVector(b []byte, dim int) ([]float32, bool) {
	if dim <= 0 || len(b) != 4*dim {
		return nil, false
	}
	v := make([]float32, dim)
	for i := range v {
		x := math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			return nil, false
		}
		v[i] = x
	}
	return v, true
}

// EmbedStats says where the vectors of [EmbedCards] came from.
type EmbedStats struct {
	Model string `json:"model"`
	// Cards is the number of cards.
	Cards int `json:"cards"`
	// Cached is how many cards' vectors came from the cache.
	Cached int `json:"cached"`
	// Embedded is how many texts were sent to the embedder (cards with
	// the same text share one).
	Embedded int `json:"embedded"`
	// Dim is the vectors' length.
	Dim int `json:"dim"`
}

// EmbedCards returns one vector per card, in order. Vectors come from the
// cache when it holds the card's digest for the embedder's model and the
// same text; the others are embedded (cards with the same text once) and
// stored every 1024 cards, so an interrupted run keeps its progress. A nil
// cache embeds every card. Cards without a digest get one computed.
func EmbedCards(ctx context.Context, cards []card.Card, e Embedder, cache *Cache) ([][]float32, EmbedStats, error) {
	st := EmbedStats{Model: e.Model(), Cards: len(cards)}
	ct, err := prepareCards(cards)
	if err != nil {
		return nil, st, err
	}
	vecs := make([][]float32, len(cards))
	if cache != nil {
		if err := ct.lookup(ctx, cache, st.Model, vecs, &st); err != nil {
			return nil, st, err
		}
	}
	return finishEmbedding(ctx, e, cache, ct, vecs, st)
}

// cardTexts are the texts [EmbedCards] embeds and the keys it caches by.
type cardTexts struct {
	digests, texts, shas []string
}

func prepareCards(cards []card.Card) (*cardTexts, error) {
	ct := &cardTexts{
		digests: make([]string, len(cards)),
		texts:   make([]string, len(cards)),
		shas:    make([]string, len(cards)),
	}
	for i := range cards {
		c := &cards[i]
		ct.digests[i] = c.Digest
		if ct.digests[i] == "" {
			ct.digests[i] = c.ComputeDigest()
		}
		ct.texts[i] = Text(c)
		if strings.TrimSpace(ct.texts[i]) == "" {
			return nil, fmt.Errorf("embedding cards: card %d (%q) has no text to embed", i, c.Name)
		}
		sum := sha256.Sum256([]byte(ct.texts[i]))
		ct.shas[i] = hex.EncodeToString(sum[:])
	}
	return ct, nil
}

// lookup fills vecs with the cached vectors of the same text.
func (ct *cardTexts) lookup(ctx context.Context, cache *Cache, model string, vecs [][]float32, st *EmbedStats) error {
	got, err := cache.Get(ctx, model, ct.digests)
	if err != nil {
		return fmt.Errorf("embedding cards: %w", err)
	}
	for i := range vecs {
		if en, ok := got[ct.digests[i]]; ok && en.TextSHA == ct.shas[i] {
			vecs[i] = en.Vector
			st.Cached++
		}
	}
	return nil
}

// finishEmbedding embeds the cards lookup left nil and checks the vectors.
func finishEmbedding(ctx context.Context, e Embedder, cache *Cache, ct *cardTexts, vecs [][]float32, st EmbedStats) ([][]float32, EmbedStats, error) {
	texts, digests, shas := ct.texts, ct.digests, ct.shas
	if err := embedMissing(ctx, e, cache, st.Model, vecs, texts, digests, shas, &st); err != nil {
		return nil, st, err
	}
	// Vectors of one model share a length. A cache filled under another
	// setting (say, a different Dimensions) disagrees: embed everything
	// again, once.
	if !sameDim(vecs) && st.Cached > 0 {
		for i := range vecs {
			vecs[i] = nil
		}
		st.Cached = 0
		if err := embedMissing(ctx, e, cache, st.Model, vecs, texts, digests, shas, &st); err != nil {
			return nil, st, err
		}
	}
	if !sameDim(vecs) {
		return nil, st, fmt.Errorf("embedding cards: model %s returned vectors of different lengths", st.Model)
	}
	if len(vecs) > 0 {
		st.Dim = len(vecs[0])
	}
	return vecs, st, nil
}

// embedChunk is how many texts embedMissing embeds and stores at a time,
// so an interrupted warm-up of a large catalog keeps what it finished.
const embedChunk = 1024

// embedMissing embeds the cards whose vector is nil, one text once, and
// stores the new vectors chunk by chunk.
func embedMissing(ctx context.Context, e Embedder, cache *Cache, model string, vecs [][]float32, texts, digests, shas []string, st *EmbedStats) error {
	var (
		want    []string
		wantSHA []string
		owner   = map[string][]int{} // text sha -> cards
	)
	for i, v := range vecs {
		if v != nil {
			continue
		}
		if _, ok := owner[shas[i]]; !ok {
			want = append(want, texts[i])
			wantSHA = append(wantSHA, shas[i])
		}
		owner[shas[i]] = append(owner[shas[i]], i)
	}
	for lo := 0; lo < len(want); lo += embedChunk {
		hi := min(lo+embedChunk, len(want))
		got, err := e.Embed(ctx, want[lo:hi])
		if err != nil {
			return fmt.Errorf("embedding cards %d-%d of the %d missing from the cache, with %s: %w", lo+1, hi, len(want), model, err)
		}
		if len(got) != hi-lo {
			return fmt.Errorf("embedding cards: %s returned %d vectors for %d texts", model, len(got), hi-lo)
		}
		st.Embedded += hi - lo
		var entries []Entry
		seen := map[string]bool{}
		for j, v := range got {
			sha := wantSHA[lo+j]
			for _, i := range owner[sha] {
				vecs[i] = v
				if !seen[digests[i]] {
					seen[digests[i]] = true
					entries = append(entries, Entry{Digest: digests[i], TextSHA: sha, Vector: v})
				}
			}
		}
		if cache != nil {
			if err := cache.Put(ctx, model, entries); err != nil {
				return fmt.Errorf("embedding cards: %w", &cacheError{err})
			}
		}
	}
	return nil
}

func sameDim(vecs [][]float32) bool {
	for _, v := range vecs {
		if len(v) != len(vecs[0]) {
			return false
		}
	}
	return true
}

// cacheError marks a failure to write the cache, as opposed to the
// embedder's.
type cacheError struct{ err error }

func (e *cacheError) Error() string { return e.err.Error() }
func (e *cacheError) Unwrap() error { return e.err }
