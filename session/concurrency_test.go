package session_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/capbroker/capbroker/session"
	"github.com/capbroker/capbroker/store"
	"github.com/capbroker/capbroker/trace"
)

// worked is what one goroutine did to its session.
type worked struct {
	id         string
	exposed    []string
	iterations int
	finds      int
	kinds      []trace.Kind
}

var workQueries = []string{
	"who last changed a line of a file", "open a pull request", "post a message to slack",
	"calendar invite", "translate text", "restart a kubernetes deployment", "create a jira ticket",
	"search the web", "run a sql query", "draw a bar chart", "read a spreadsheet", "list kubernetes pods",
	"search email", "summarize a document", "format the code", "show the commit history",
}

var workCalls = []string{"read_file", "git_blame", "slack_post_message", "reed_file", "github_create_pull_request", "web_search"}

// TestConcurrentSessions runs 50 goroutines on 50 sessions at once for a
// few seconds (and at least minIterations each, however slow the machine),
// then checks every stored session and trace against what its goroutine did.
func TestConcurrentSessions(t *testing.T) {
	const workers, minIterations = 50, 3
	for _, sc := range stores {
		t.Run(sc.name, func(t *testing.T) {
			ctx := context.Background()
			st := sc.open(t)
			m := session.NewManager(newSelector(t), st, &session.Options{MaxIterations: 1 << 20})
			deadline := time.Now().Add(3 * time.Second)
			results := make([]worked, workers)
			errs := make(chan error, workers)
			var wg sync.WaitGroup
			for w := range workers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					rng := rand.New(rand.NewPCG(uint64(w), 7))
					s, err := m.Start(ctx, fmt.Sprintf("%s (worker %d)", codingTask, w), nil)
					if err != nil {
						errs <- err
						return
					}
					res := worked{id: s.ID(), exposed: s.Exposed(), kinds: []trace.Kind{trace.KindSelect}}
					for res.iterations < minIterations || time.Now().Before(deadline) {
						if rng.IntN(2) == 0 {
							f, err := s.Find(ctx, workQueries[rng.IntN(len(workQueries))], 1+rng.IntN(3))
							if err != nil {
								errs <- err
								return
							}
							res.exposed = append(res.exposed, f.Added...)
							res.finds++
							res.kinds = append(res.kinds, trace.KindFind)
						} else {
							err := s.Call(ctx, workCalls[rng.IntN(len(workCalls))])
							if err != nil && !errors.Is(err, session.ErrNotExposed) {
								errs <- err
								return
							}
							res.kinds = append(res.kinds, trace.KindCall)
						}
						res.iterations++
						if s.InMemory() {
							errs <- fmt.Errorf("worker %d: store failed: %v", w, s.Failures())
							return
						}
					}
					results[w] = res
				}()
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Fatal(err)
			}
			total := 0
			for w, res := range results {
				got, err := st.Session(ctx, res.id)
				if err != nil {
					t.Fatal(err)
				}
				if d := cmp.Diff(res.exposed, got.Exposed); d != "" {
					t.Errorf("worker %d: stored exposed set (-did +stored):\n%s", w, d)
				}
				if got.Iterations != res.iterations || got.FindCalls != res.finds || got.Version != int64(1+res.iterations) {
					t.Errorf("worker %d: stored %d iterations, %d finds, version %d; did %d iterations, %d finds",
						w, got.Iterations, got.FindCalls, got.Version, res.iterations, res.finds)
				}
				recs, err := st.Traces(ctx, &store.TraceQuery{SessionID: res.id})
				if err != nil {
					t.Fatal(err)
				}
				if d := cmp.Diff(res.kinds, kinds(recs)); d != "" {
					t.Errorf("worker %d: trace kinds (-did +stored):\n%s", w, d)
				}
				for i, r := range recs {
					if r.Iteration != i {
						t.Errorf("worker %d: record %d at iteration %d", w, i, r.Iteration)
						break
					}
				}
				total += res.iterations
			}
			t.Logf("%d workers did %d iterations", workers, total)
			if total < workers*minIterations {
				t.Errorf("only %d iterations in all, want at least %d", total, workers*minIterations)
			}
		})
	}
}
