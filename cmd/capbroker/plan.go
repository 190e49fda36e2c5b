package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	capbroker "github.com/capbroker/capbroker"
	"github.com/capbroker/capbroker/internal/atomicfile"
	"github.com/capbroker/capbroker/llm"
	"github.com/capbroker/capbroker/plan"
	"github.com/capbroker/capbroker/session"
	"github.com/capbroker/capbroker/trace"
)

// defaultConfig is the settings file read when --config is not given and
// it exists in the working directory.
const defaultConfig = "capbroker.yaml"

// planCatalogFlags choose the catalog a planner sees and assembly uses:
// the catalog every command uses (--tools, or discovery), with the
// built-in general capabilities as the fallback when nothing is
// discovered. --catalog is kept as a deprecated alias of --tools.
type planCatalogFlags struct {
	catalogFlags
}

func (f *planCatalogFlags) register(cmd *cobra.Command) {
	f.catalogFlags.register(cmd)
	alias(cmd.Flags(), "catalog", "tools")
}

// planBroker builds the broker plan and assemble work with, over the
// flags' catalog: what --tools names, else what discovery finds, else
// plan.Builtin(). Its ranker is the one every command uses, so the
// "Capabilities available" block and inference rank as select does.
func (m *Main) planBroker(cmd *cobra.Command, f *planCatalogFlags) (*capbroker.Broker, error) {
	planFallback(&f.catalogFlags)
	return m.broker(cmd.Context(), &f.catalogFlags, brokerOptions(&selectFlags{encoding: "o200k"}))
}

// recordPlan appends a plan record to the trace store. A store that
// cannot be opened or written is a warning: the plan is made all the same.
func (m *Main) recordPlan(ctx context.Context, dbf *storeFlags, rec trace.Record) {
	st, err := m.openStore(ctx, dbf)
	if err == nil {
		err = st.AppendTraces(ctx, rec)
		st.Close()
	}
	if err != nil {
		fmt.Fprintln(m.Stderr, "warning: the plan was not recorded in the trace:", err)
	}
}

func (m *Main) newPlanCmd() *cobra.Command {
	var (
		cf          planCatalogFlags
		dbf         storeFlags
		out         string
		noCatalog   bool
		showPrompt  bool
		asJSON      bool
		blockTokens int
	)
	cmd := &cobra.Command{
		Use:   `plan "<goal>"`,
		Short: "Ask a model to plan a goal, naming each task's capabilities",
		Long: `Plan sends a goal to a language model with the catalog's capabilities in a
"Capabilities available" block and asks for a plan under a strict JSON Schema:
tasks with an agent, instructions, dependencies and the capabilities each
needs. Unknown capability names and broken dependencies are dropped with a
warning. The plan is printed (or written with --out) as JSON a person can read
and edit; "capbroker assemble" turns it into each task's capabilities.

The catalog is the one every command uses: the capabilities discovery finds
(plugins' agents, commands and skills, Agent Skills, MCP servers), or the tool
files --tools names; when nothing is discovered, a small built-in registry of
general capabilities. The block is ranked by the goal and bounded in tokens.
The plan pins the cards it names (digest, description, schema), so assembling
it or starting a session from it later says what changed since. Each plan made
is recorded in the trace (kind plan).

The model is configured by the environment or by "llm:" in capbroker.yaml:
  CAPBROKER_LLM=openai      OpenAI or any OpenAI-compatible server (Ollama, vLLM);
                            CAPBROKER_LLM_BASE_URL, CAPBROKER_LLM_MODEL, OPENAI_API_KEY
  CAPBROKER_LLM=anthropic   ANTHROPIC_API_KEY, CAPBROKER_LLM_MODEL
  CAPBROKER_LLM=replay      CAPBROKER_LLM_REPLAY=file or folder of recorded replies
CAPBROKER_LLM_RECORD=DIR records every reply for a later replay.`,
		Example: `  CAPBROKER_LLM=openai CAPBROKER_LLM_BASE_URL=http://localhost:11434/v1 CAPBROKER_LLM_MODEL=llama3.1 \
    capbroker plan "Launch our budgeting app" --out plan.json
  capbroker plan --prompt "Launch our budgeting app"     # show the prompt, call no model
  capbroker plan --tools tools.json "..."                 # plan with these tool files
  capbroker plan --no-catalog "..."                       # the plain prompt`,
		Args: exactArgs(1, "a goal in quotes"),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			opts := &plan.PromptOptions{BlockTokens: blockTokens}
			if !noCatalog {
				b, err := m.planBroker(cmd, &cf)
				if err != nil {
					return err
				}
				opts.Catalog, opts.Ranker = b.Catalog(), b
			}
			if showPrompt {
				pr, err := plan.BuildPrompt(ctx, args[0], opts)
				if err != nil {
					return usageError{err}
				}
				return writeJSON(m.Stdout, pr)
			}
			config, explicit := cf.config, cf.config != ""
			if !explicit {
				config = defaultConfig
			}
			model, err := m.llmProvider(config, explicit)
			if err != nil {
				return err
			}
			res, err := plan.NewPlanner(model, opts).Plan(ctx, args[0])
			var pe *plan.ParseError
			if errors.As(err, &pe) {
				return m.keepReply(err, pe.Raw, out)
			}
			if err != nil {
				return err
			}
			for _, w := range res.Warnings {
				fmt.Fprintln(m.Stderr, "warning:", w)
			}
			rec := session.PlanRecord("planned", res.Plan, nil, res.Warnings)
			rec.At = time.Now()
			m.recordPlan(ctx, &dbf, rec)
			if asJSON {
				return writeJSON(m.Stdout, res)
			}
			data, err := plan.Encode(res.Plan)
			if err != nil {
				return err
			}
			if out == "" {
				_, err = m.Stdout.Write(data)
				return err
			}
			if err := atomicfile.WriteFile(out, data); err != nil {
				return err
			}
			fmt.Fprintf(m.Stderr, "wrote %s: %d tasks, %d warnings (model %s); plan id %s\n", out, len(res.Plan.Tasks), len(res.Warnings), res.Reply.Model, res.Plan.ID())
			return nil
		},
	}
	cf.register(cmd)
	dbf.register(cmd)
	cmd.Flags().StringVarP(&out, "out", "o", "", "write the plan to this file instead of stdout")
	cmd.Flags().BoolVar(&noCatalog, "no-catalog", false, "plan without a catalog: the plain prompt, no capabilities")
	cmd.Flags().BoolVar(&showPrompt, "prompt", false, "print the prompt (system, user, schema) as JSON and call no model")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the plan with its warnings and prompt as JSON")
	cmd.Flags().IntVar(&blockTokens, "block-tokens", 0, fmt.Sprintf("token budget of the capabilities block (0: %d; negative: none)", plan.DefaultBlockTokens))
	return cmd
}

// llmProvider builds the configured model client. The settings file is
// read when it exists, or must exist when named explicitly.
func (m *Main) llmProvider(config string, explicit bool) (llm.Provider, error) {
	path := config
	if _, err := os.Stat(path); err != nil && !explicit {
		path = ""
	}
	cfg, err := llm.LoadConfig(path, m.Getenv)
	if err != nil {
		return nil, err
	}
	return llm.New(cfg)
}

// keepReply reports a reply that is not a plan and keeps it for
// inspection: next to --out when given, else on stderr.
func (m *Main) keepReply(err error, raw []byte, out string) error {
	if out != "" {
		path := out + ".reply.txt"
		if werr := atomicfile.WriteFile(path, raw); werr == nil {
			return fmt.Errorf("%w\n(the reply is kept in %s)", err, path)
		}
	}
	fmt.Fprintf(m.Stderr, "-- the model's reply --\n%s\n-- end of reply --\n", raw)
	return err
}
