package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/capbroker/capbroker/payload"
	"github.com/capbroker/capbroker/plan"
	"github.com/capbroker/capbroker/policy"
	"github.com/capbroker/capbroker/session"
	"github.com/capbroker/capbroker/store"
	_ "github.com/capbroker/capbroker/store/postgres" // --db postgres://...
	_ "github.com/capbroker/capbroker/store/sqlite"   // --db PATH (the default)
	"github.com/capbroker/capbroker/trace"
)

// storeFlags select the session and trace store.
type storeFlags struct {
	db string
}

func (f *storeFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.db, "db", "",
		"session database: a SQLite file path or a postgres:// URL (default $CAPBROKER_DB, else $XDG_DATA_HOME/capbroker/capbroker.db, else ~/.local/share/capbroker/capbroker.db)")
}

// dbPath returns the store the flags name: --db, $CAPBROKER_DB, or the
// SQLite file in the user's data directory.
func (m *Main) dbPath(f *storeFlags) (string, error) {
	if f.db != "" {
		return f.db, nil
	}
	if v := m.Getenv("CAPBROKER_DB"); v != "" {
		return v, nil
	}
	if v := m.Getenv("XDG_DATA_HOME"); v != "" && filepath.IsAbs(v) {
		return filepath.Join(v, "capbroker", "capbroker.db"), nil
	}
	if home := m.Getenv("HOME"); home != "" {
		return filepath.Join(home, ".local", "share", "capbroker", "capbroker.db"), nil
	}
	return "", usageError{errors.New("no data directory: set XDG_DATA_HOME or HOME, or pass --db")}
}

// embedCachePath returns the SQLite file of the embedding cache: db when
// given, else the session database of the data directory (the cache is a
// table beside the sessions). Its folder is created.
func (m *Main) embedCachePath(db string) (string, error) {
	path, err := m.dbPath(&storeFlags{db: db})
	if err != nil {
		return "", err
	}
	if strings.HasPrefix(path, "postgres://") || strings.HasPrefix(path, "postgresql://") {
		return "", usageError{fmt.Errorf("the embedding cache is a SQLite file; pass --db FILE (the session database is %s)", store.Redact(path))}
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return "", fmt.Errorf("creating the data directory: %w", err)
	}
	return path, nil
}

// openStore opens the store the flags name.
func (m *Main) openStore(ctx context.Context, f *storeFlags) (store.Store, error) {
	dsn, err := m.dbPath(f)
	if err != nil {
		return nil, err
	}
	return store.Open(ctx, dsn)
}

func (m *Main) newSessionCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "session",
		Short: "Run agent sessions: select, find through the hatch, check calls, resume",
		Example: `  capbroker session start "fix the failing test in parser.go"
  capbroker session list
  capbroker session show 4be1c2d09a7f3e61`,
		Long: `A session is one agent run: its task, the tools it sees (the selection plus
every tool found through find_capability, in order), an iteration budget and a
trace. Sessions are saved in a database on every change, so a resumed run sees
exactly the tools it saw before.

The database is a SQLite file in your data directory unless --db (or
$CAPBROKER_DB) names another file or a postgres:// URL.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usageError{fmt.Errorf("unknown session command %q (want start, find, call, show, resume or list)", args[0])}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error { return cmd.Help() },
	}
	cmd.AddCommand(m.newSessionStartCmd(), m.newSessionFindCmd(), m.newSessionCallCmd(),
		m.newSessionShowCmd(), m.newSessionResumeCmd(), m.newSessionListCmd())
	return cmd
}

// sessionEnv is what a session subcommand works with.
type sessionEnv struct {
	st  store.Store
	mgr *session.Manager
	b   interface {
		Render(payload.Format, []string, bool) (*payload.Rendered, error)
	}
}

// sessionManager opens the store and builds the catalog. Close the store.
func (m *Main) sessionManager(ctx context.Context, cf *catalogFlags, sf *selectFlags, dbf *storeFlags, o *session.Options) (*sessionEnv, error) {
	bopts := brokerOptions(&selectFlags{encoding: "o200k"})
	if sf != nil {
		bopts = brokerOptions(sf)
	}
	cf.learnDB = dbf // learning reads the database the session is in
	b, err := m.broker(ctx, cf, bopts)
	if err != nil {
		return nil, err
	}
	st, err := m.openStore(ctx, dbf)
	if err != nil {
		return nil, err
	}
	var opts session.Options
	if o != nil {
		opts = *o
	}
	opts.Logger = discardLogger() // store failures are reported below, in words
	if opts.Ranker == nil {
		opts.Ranker = b // plan sessions infer with the ranker select uses
	}
	return &sessionEnv{st: st, mgr: session.NewManager(b.Selector(), st, &opts), b: b}, nil
}

// openSession opens the session store and loads session id, with
// Manager.Resume when resume is set and Manager.Load otherwise. The caller
// closes env.st; on error nothing is left open.
func (m *Main) openSession(ctx context.Context, cf *catalogFlags, dbf *storeFlags, id string, resume bool) (*sessionEnv, *session.Session, error) {
	if st, err := m.openStore(ctx, dbf); err == nil {
		if s, err := st.Session(ctx, id); err == nil && s.PlanTask != "" {
			planFallback(cf)
		}
		st.Close()
	}
	env, err := m.sessionManager(ctx, cf, nil, dbf, nil)
	if err != nil {
		return nil, nil, err
	}
	load := env.mgr.Load
	if resume {
		load = env.mgr.Resume
	}
	s, err := load(ctx, id)
	if err != nil {
		env.st.Close()
		return nil, nil, err
	}
	return env, s, nil
}

// saved turns a store failure into the command's error: the process is
// about to exit, so what the store refused is lost.
func saved(s *session.Session) error {
	if !s.InMemory() {
		return nil
	}
	var msgs []string
	for _, f := range s.Failures() {
		if f.Tier == trace.TierStore {
			msgs = append(msgs, f.Message)
		}
	}
	return fmt.Errorf("the session store failed; this change was not saved: %s", strings.Join(msgs, "; "))
}

func (m *Main) newSessionStartCmd() *cobra.Command {
	var (
		cf       catalogFlags
		sf       selectFlags
		dbf      storeFlags
		asJSON   bool
		id       string
		iters    int
		planFile string
		planTask string
	)
	cmd := &cobra.Command{
		Use:   `start ("<task>" | --plan plan.json --plan-task ID)`,
		Short: "Start a session: select the tools for a task (or take a plan task's) and save them",
		Long: `Start selects the tools for a task and saves the session.

With --plan and --plan-task, the session runs one task of a plan (from
"capbroker plan", or written by hand): its task is the task's description, and
it exposes the task's capabilities as "capbroker assemble" gives them (the
plan's names first, with the reason "named by the plan", then inferred ones
for a task the plan left empty), plus the floor and find_capability, within
the bound. The session records the plan's goal and the task's id, and its
trace opens with a plan record. A named card that changed since the plan was
made is reported with what changed; one that is gone is dropped, with a
warning.`,
		Example: `  capbroker session start "fix the failing test in parser.go"
  capbroker session start --json --tools tools.json "send the weekly report"
  capbroker session start --plan plan.json --plan-task t2`,
		Args: func(cmd *cobra.Command, args []string) error {
			if planFile != "" || planTask != "" {
				if len(args) > 0 {
					return usageError{fmt.Errorf("a task and --plan: give one (with --plan the task comes from the plan)")}
				}
				if planFile == "" || planTask == "" {
					return usageError{fmt.Errorf("--plan and --plan-task go together: the plan file and the id of its task")}
				}
				return nil
			}
			return exactArgs(1, "a task in quotes (or --plan FILE --plan-task ID)")(cmd, args)
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			opts, err := sf.options()
			if err != nil {
				return err
			}
			if iters < 0 {
				return usageError{fmt.Errorf("--max-iterations %d: want 0 (the default) or more", iters)}
			}
			var p *plan.Plan
			if planFile != "" {
				if p, err = m.readPlan(planFile); err != nil {
					return err
				}
				planFallback(&cf)
			}
			env, err := m.sessionManager(ctx, &cf, &sf, &dbf, &session.Options{Select: opts})
			if err != nil {
				return err
			}
			defer env.st.Close()
			startOpts := &session.StartOptions{ID: id, MaxIterations: iters}
			var s *session.Session
			if p != nil {
				var a *plan.Assembly
				s, a, err = env.mgr.StartFromPlan(ctx, p, planTask, startOpts)
				if a != nil {
					for _, w := range a.Warnings {
						fmt.Fprintln(m.Stderr, "warning:", w)
					}
				}
			} else {
				s, err = env.mgr.Start(ctx, args[0], startOpts)
			}
			if err != nil {
				return err
			}
			switch {
			case asJSON:
				if err := writeJSON(m.Stdout, session.NewView(s)); err != nil {
					return err
				}
			case sf.format != "":
				r, err := env.b.Render(opts.Format, s.Exposed(), true)
				if err != nil {
					return err
				}
				if err := writeJSON(m.Stdout, r.Body); err != nil {
					return err
				}
			default:
				fmt.Fprintf(m.Stdout, "session: %s\n", s.ID())
				if goal, task := s.Plan(); task != "" {
					fmt.Fprintf(m.Stdout, "plan:    task %s of %q\n", task, goal)
				}
				if sel := s.Selection(); sel != nil {
					printSelection(m, sel)
				}
				used, budget := s.Iterations()
				fmt.Fprintf(m.Stdout, "budget:  %d of %d iterations used\n", used, budget)
			}
			return saved(s)
		},
	}
	cf.register(cmd)
	sf.register(cmd)
	dbf.register(cmd)
	cmd.Flags().BoolVar(&asJSON, "json", false, `print the session as JSON ({"id","task","exposed_tools","plan_task",...})`)
	cmd.Flags().StringVar(&planFile, "plan", "", `plan file to take the task from ("-": stdin); needs --plan-task`)
	cmd.Flags().StringVar(&planTask, "plan-task", "", "id of the plan's task the session runs")
	cmd.Flags().StringVar(&id, "id", "", "session ID (default: random)")
	cmd.Flags().IntVar(&iters, "max-iterations", 0, fmt.Sprintf("iteration budget (default %d)", session.DefaultMaxIterations))
	return cmd
}

func (m *Main) newSessionFindCmd() *cobra.Command {
	var (
		cf     catalogFlags
		dbf    storeFlags
		asJSON bool
		k      int
	)
	cmd := &cobra.Command{
		Use:   `find ID "<query>"`,
		Short: "Answer a find_capability call: find tools and expose them for the rest of the run",
		Long: `Find searches the catalog as the find_capability tool does and exposes what it
finds in the session for the rest of the run. It uses one iteration of the
session's budget, like any call.`,
		Example: `  capbroker session find 4be1c2d09a7f3e61 "who last changed a line of a file"`,
		Args:    exactArgs(2, "a session ID and a query in quotes"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if k < 1 {
				return usageError{fmt.Errorf("-k %d: want at least 1", k)}
			}
			ctx := cmd.Context()
			env, s, err := m.openSession(ctx, &cf, &dbf, args[0], false)
			if err != nil {
				return err
			}
			defer env.st.Close()
			m.warnMissing(s)
			res, err := s.Find(ctx, args[1], k)
			if err != nil {
				return err
			}
			if asJSON {
				v := session.NewView(s)
				v.Find = session.NewFindView(res)
				if err := writeJSON(m.Stdout, v); err != nil {
					return err
				}
				return saved(s)
			}
			fmt.Fprintf(m.Stdout, "query:   %s\nreason:  %s\n", res.Query, res.Reason)
			if len(res.Matches) > 0 {
				fmt.Fprintln(m.Stdout)
				tw := table(m.Stdout)
				fmt.Fprintln(tw, "  #\tNAME\tSCORE\tCONFIDENCE\tRISK\tDESCRIPTION")
				for i, c := range res.Matches {
					fmt.Fprintf(tw, "  %d\t%s\t%.2f\t%s\t%s\t%s\n", i+1, c.Name, c.Score, c.Confidence, c.Risk, firstLine(c.Description, 70))
				}
				tw.Flush()
			}
			added := "nothing new"
			if len(res.Added) > 0 {
				added = strings.Join(res.Added, ", ")
			}
			fmt.Fprintf(m.Stdout, "\nexposed: %s (now %d tools + %s)\n", added, len(res.Exposed), policy.HatchName)
			fmt.Fprintf(m.Stdout, "budget:  %d of %d iterations used\n", res.Iterations, res.MaxIterations)
			return saved(s)
		},
	}
	cf.register(cmd)
	dbf.register(cmd)
	cmd.Flags().IntVarP(&k, "k", "k", policy.DefaultFindK, "how many capabilities to return")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the session and the result (with argument schemas) as JSON")
	return cmd
}

func (m *Main) newSessionCallCmd() *cobra.Command {
	var (
		cf     catalogFlags
		dbf    storeFlags
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "call ID TOOL",
		Short: "Check a tool call against the session's exposed tools and record it",
		Long: `Call checks that the session exposes TOOL and records the call in its trace.
It uses one iteration either way (the model spent its turn). capbroker does not
run the tool. A tool that is not exposed is refused (exit 1) with a message
for the model that names find_capability and the closest names.`,
		Example: `  capbroker session call 4be1c2d09a7f3e61 git_blame`,
		Args:    exactArgs(2, "a session ID and a tool name"),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			env, s, err := m.openSession(ctx, &cf, &dbf, args[0], false)
			if err != nil {
				return err
			}
			defer env.st.Close()
			callErr := s.Call(ctx, args[1])
			if errors.Is(callErr, session.ErrBudgetExhausted) {
				return callErr
			}
			if callErr != nil && !errors.Is(callErr, session.ErrNotExposed) {
				return callErr
			}
			if asJSON {
				v := session.NewView(s)
				v.Call = &session.CallView{Tool: args[1], Allowed: callErr == nil}
				var ne *session.NotExposedError
				if errors.As(callErr, &ne) {
					v.Call.Error, v.Call.Suggestions = ne.Error(), ne.Suggestions
				}
				if err := writeJSON(m.Stdout, v); err != nil {
					return err
				}
			} else if callErr == nil {
				used, budget := s.Iterations()
				fmt.Fprintf(m.Stdout, "allowed: %s is exposed (%d of %d iterations used)\n", args[1], used, budget)
			}
			if err := saved(s); err != nil {
				return err
			}
			return callErr
		},
	}
	cf.register(cmd)
	dbf.register(cmd)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the session and the verdict as JSON")
	return cmd
}

func (m *Main) newSessionShowCmd() *cobra.Command {
	var (
		dbf    storeFlags
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:     "show ID",
		Short:   "Print a saved session: its task, exposed tools and budget",
		Example: `  capbroker session show --json 4be1c2d09a7f3e61`,
		Args:    exactArgs(1, "a session ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			st, err := m.openStore(ctx, &dbf)
			if err != nil {
				return err
			}
			defer st.Close()
			s, err := st.Session(ctx, args[0])
			if err != nil {
				return err
			}
			v := session.StoredView(s)
			if asJSON {
				return writeJSON(m.Stdout, v)
			}
			m.printSession(v)
			return nil
		},
	}
	dbf.register(cmd)
	cmd.Flags().BoolVar(&asJSON, "json", false, `print the session as JSON ({"id","task","exposed_tools",...})`)
	return cmd
}

func (m *Main) newSessionResumeCmd() *cobra.Command {
	var (
		cf     catalogFlags
		dbf    storeFlags
		asJSON bool
		format string
	)
	cmd := &cobra.Command{
		Use:   "resume ID",
		Short: "Rebuild a session's exposed tools, checked against the current catalog",
		Long: `Resume rebuilds exactly the tools the session exposed (its selection plus
everything found through find_capability) and checks each name against the
current catalog. A name the catalog no longer has is reported and kept: it is
never dropped or replaced silently.

With --format, it prints the exposed tools (and the hatch) as that provider's
API expects them, ready to send.`,
		Example: `  capbroker session resume 4be1c2d09a7f3e61
  capbroker session resume --format anthropic 4be1c2d09a7f3e61`,
		Args: exactArgs(1, "a session ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			var pf payload.Format
			if format != "" {
				var err error
				if pf, err = payload.ParseFormat(format); err != nil {
					return usageError{fmt.Errorf("--format: %w", err)}
				}
			}
			env, s, err := m.openSession(ctx, &cf, &dbf, args[0], true)
			if err != nil {
				return err
			}
			defer env.st.Close()
			m.warnMissing(s)
			switch {
			case asJSON:
				if err := writeJSON(m.Stdout, session.NewView(s)); err != nil {
					return err
				}
			case pf != "":
				var present []string
				for _, n := range s.Exposed() {
					if !contains(s.Missing(), n) {
						present = append(present, n)
					}
				}
				r, err := env.b.Render(pf, present, true)
				if err != nil {
					return err
				}
				if err := writeJSON(m.Stdout, r.Body); err != nil {
					return err
				}
			default:
				m.printSession(session.NewView(s))
			}
			return saved(s)
		},
	}
	cf.register(cmd)
	dbf.register(cmd)
	cmd.Flags().BoolVar(&asJSON, "json", false, `print the session as JSON ({"id","task","exposed_tools","missing",...})`)
	cmd.Flags().StringVar(&format, "format", "", "print the exposed tools as a provider payload: json, openai, anthropic or mcp")
	return cmd
}

func (m *Main) newSessionListCmd() *cobra.Command {
	var (
		dbf    storeFlags
		asJSON bool
		limit  int
	)
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List saved sessions, newest first",
		Example: `  capbroker session list
  capbroker session list --limit 0 --json
  capbroker session list --db postgres://localhost/capbroker`,
		Args: exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if limit < 0 {
				return usageError{fmt.Errorf("--limit %d: want 0 (all) or more", limit)}
			}
			ctx := cmd.Context()
			st, err := m.openStore(ctx, &dbf)
			if err != nil {
				return err
			}
			defer st.Close()
			list, err := st.Sessions(ctx, &store.SessionQuery{Limit: limit})
			if err != nil {
				return err
			}
			views := make([]*session.View, len(list))
			for i := range list {
				views[i] = session.StoredView(&list[i])
			}
			if asJSON {
				return writeJSON(m.Stdout, views)
			}
			tw := table(m.Stdout)
			fmt.Fprintln(tw, "ID\tCREATED\tEXPOSED\tITERATIONS\tFINDS\tTASK")
			for _, v := range views {
				fmt.Fprintf(tw, "%s\t%s\t%d\t%d/%d\t%d\t%s\n", v.ID, v.CreatedAt.Local().Format("2006-01-02 15:04"),
					len(v.ExposedTools), v.Iterations, v.MaxIterations, v.FindCalls, firstLine(v.Task, 60))
			}
			return tw.Flush()
		},
	}
	dbf.register(cmd)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the sessions as JSON")
	cmd.Flags().IntVar(&limit, "limit", 20, "at most this many sessions (0: all)")
	return cmd
}

func (m *Main) printSession(v *session.View) {
	w := m.Stdout
	fmt.Fprintf(w, "session: %s\ntask:    %s\n", v.ID, v.Task)
	if v.PlanTask != "" {
		fmt.Fprintf(w, "plan:    task %s of %q\n", v.PlanTask, v.PlanGoal)
	}
	if v.Reason != "" {
		fmt.Fprintf(w, "reason:  %s\n", v.Reason)
	}
	fmt.Fprintf(w, "budget:  %d of %d iterations used, %d find_capability calls\n", v.Iterations, v.MaxIterations, v.FindCalls)
	fmt.Fprintf(w, "updated: %s\n\n", v.UpdatedAt.Local().Format(time.RFC3339))
	tw := table(w)
	fmt.Fprintln(tw, "  #\tEXPOSED\tHOW")
	for i, n := range v.ExposedTools {
		how := "selected"
		if i >= len(v.SelectedTools) {
			how = "found"
		}
		if contains(v.Missing, n) {
			how += "; MISSING from the catalog"
		}
		fmt.Fprintf(tw, "  %d\t%s\t%s\n", i+1, n, how)
	}
	fmt.Fprintf(tw, "  +\t%s\talways exposed\n", v.Hatch)
	tw.Flush()
}

func (m *Main) warnMissing(s *session.Session) {
	if miss := s.Missing(); len(miss) > 0 {
		fmt.Fprintf(m.Stderr, "warning: %d exposed tool(s) are no longer in the catalog (kept; calls to them are refused): %s\n",
			len(miss), strings.Join(miss, ", "))
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// planFallback makes the catalog of a session run from a plan fall back,
// when nothing is discovered, on the catalog "capbroker plan" falls back
// on: the built-in general capabilities.
func planFallback(cf *catalogFlags) {
	cf.fallback = plan.Builtin
	cf.fallbackName = "the built-in general capabilities"
}
