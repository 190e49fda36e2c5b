package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/capbroker/capbroker/card"
	"github.com/capbroker/capbroker/internal/atomicfile"
	"github.com/capbroker/capbroker/llm"
	"github.com/capbroker/capbroker/plan"
	"github.com/capbroker/capbroker/source/toolfile"
)

// defaultConfig is the settings file read when --config is not given and
// it exists in the working directory.
const defaultConfig = "capbroker.yaml"

// planCatalogFlags choose the catalog a planner sees and assembly uses.
type planCatalogFlags struct {
	files []string
}

func (f *planCatalogFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringArrayVar(&f.files, "catalog", nil,
		"tool file or directory of tool files to plan with (JSON, YAML, JSONL; OpenAI, Anthropic, MCP shapes); repeatable; default: the built-in registry of general capabilities")
	cmd.Flags().StringArrayVar(&f.files, "tools", nil, "same as --catalog")
	cmd.Flags().MarkHidden("tools")
}

// catalog loads the flags' catalog: the tool files, else plan.Builtin().
// Problems in some files are warnings; nothing loading at all is an error.
func (m *Main) planCatalog(f *planCatalogFlags) (*card.Catalog, error) {
	cards := plan.Builtin()
	if len(f.files) > 0 {
		var errs []error
		cards, errs = toolfile.LoadAll(f.files)
		for _, err := range errs {
			fmt.Fprintln(m.Stderr, "warning:", err)
		}
		if len(cards) == 0 {
			if len(errs) > 0 {
				return nil, fmt.Errorf("no capabilities loaded from %v (%d problems, first: %w)", f.files, len(errs), errs[0])
			}
			return nil, fmt.Errorf("no capabilities found in %v", f.files)
		}
	}
	for i := range cards {
		cards[i].ResolveRisk()
	}
	cat, warns := card.NewCatalog(cards)
	m.printWarnings(warns)
	return cat, nil
}

func (m *Main) newPlanCmd() *cobra.Command {
	var (
		cf          planCatalogFlags
		out         string
		config      string
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

The model is configured by the environment or by "llm:" in capbroker.yaml:
  CAPBROKER_LLM=openai      OpenAI or any OpenAI-compatible server (Ollama, vLLM);
                            CAPBROKER_LLM_BASE_URL, CAPBROKER_LLM_MODEL, OPENAI_API_KEY
  CAPBROKER_LLM=anthropic   ANTHROPIC_API_KEY, CAPBROKER_LLM_MODEL
  CAPBROKER_LLM=replay      CAPBROKER_LLM_REPLAY=file or folder of recorded replies
CAPBROKER_LLM_RECORD=DIR records every reply for a later replay.`,
		Example: `  CAPBROKER_LLM=openai CAPBROKER_LLM_BASE_URL=http://localhost:11434/v1 CAPBROKER_LLM_MODEL=llama3.1 \
    capbroker plan "Launch our budgeting app" --out plan.json
  capbroker plan --prompt "Launch our budgeting app"     # show the prompt, call no model
  capbroker plan --catalog tools.json --no-catalog "..."  # the plain prompt`,
		Args: exactArgs(1, "a goal in quotes"),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			opts := &plan.PromptOptions{BlockTokens: blockTokens}
			if !noCatalog {
				cat, err := m.planCatalog(&cf)
				if err != nil {
					return err
				}
				opts.Catalog = cat
			}
			if showPrompt {
				pr, err := plan.BuildPrompt(ctx, args[0], opts)
				if err != nil {
					return usageError{err}
				}
				return writeJSON(m.Stdout, pr)
			}
			model, err := m.llmProvider(config, cmd.Flags().Changed("config"))
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
			fmt.Fprintf(m.Stderr, "wrote %s: %d tasks, %d warnings (model %s)\n", out, len(res.Plan.Tasks), len(res.Warnings), res.Reply.Model)
			return nil
		},
	}
	cf.register(cmd)
	cmd.Flags().StringVarP(&out, "out", "o", "", "write the plan to this file instead of stdout")
	cmd.Flags().StringVar(&config, "config", defaultConfig, "settings file; its llm: section configures the model (read when present)")
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
