package llm

import (
	"bytes"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// Provider names.
const (
	ProviderOpenAI    = "openai"
	ProviderAnthropic = "anthropic"
	ProviderReplay    = "replay"
)

// Config chooses and configures a provider. The zero Config configures
// none; [New] then fails with ErrNotConfigured.
type Config struct {
	// Provider is "openai" (any OpenAI-compatible server), "anthropic" or
	// "replay".
	Provider string
	// BaseURL is the API's base URL. If empty, the provider's own
	// (DefaultOpenAIBaseURL, DefaultAnthropicBaseURL).
	BaseURL string
	// Model names the model. If empty, DefaultOpenAIModel on OpenAI's own
	// API and DefaultAnthropicModel on Anthropic's; other servers need one.
	Model string
	// APIKey authenticates. It is read from the environment only
	// (OPENAI_API_KEY, ANTHROPIC_API_KEY), never from a file.
	APIKey string
	// Timeout bounds each attempt. If zero, DefaultTimeout.
	Timeout time.Duration
	// MaxRetries is how many times a request failing with 429 or 5xx is
	// sent again. If zero, DefaultMaxRetries; negative means none.
	MaxRetries int
	// Replay is the file or folder a replay provider answers from.
	Replay string
	// Record, if set, is a folder where every reply is recorded for a
	// later replay.
	Record string
	// HTTPClient sends the requests. If nil, http.DefaultClient.
	HTTPClient *http.Client
}

// New returns the provider cfg describes, wrapped in a [Recorder] when
// cfg.Record is set.
func New(cfg Config) (Provider, error) {
	var p Provider
	var err error
	switch strings.ToLower(strings.TrimSpace(cfg.Provider)) {
	case "":
		return nil, fmt.Errorf("%w: %s", ErrNotConfigured, configureHelp)
	case ProviderOpenAI:
		p, err = NewOpenAI(cfg)
	case ProviderAnthropic:
		p, err = NewAnthropic(cfg)
	case ProviderReplay:
		if cfg.Replay == "" {
			return nil, fmt.Errorf("%w: replay: set CAPBROKER_LLM_REPLAY (or llm.replay) to a file or folder of recorded replies", ErrNotConfigured)
		}
		p = &Replay{Path: cfg.Replay}
	default:
		return nil, fmt.Errorf("%w: unknown provider %q (want openai, anthropic or replay)", ErrNotConfigured, cfg.Provider)
	}
	if err != nil {
		return nil, err
	}
	if cfg.Record != "" {
		p = &Recorder{Provider: p, Dir: cfg.Record}
	}
	return p, nil
}

// fileKeys are the settings "llm:" in capbroker.yaml may hold.
var fileKeys = []string{"provider", "base_url", "model", "timeout", "max_retries", "replay", "record"}

// LoadConfig reads the "llm:" section of the capbroker.yaml at path (if
// path is not empty), then lets the environment override it:
//
//	CAPBROKER_LLM            provider: openai | anthropic | replay
//	CAPBROKER_LLM_BASE_URL   base URL (else OPENAI_BASE_URL / ANTHROPIC_BASE_URL)
//	CAPBROKER_LLM_MODEL      model
//	CAPBROKER_LLM_TIMEOUT    timeout per attempt ("90s", "2m")
//	CAPBROKER_LLM_RETRIES    retries on 429 and 5xx
//	CAPBROKER_LLM_REPLAY     file or folder of recorded replies
//	CAPBROKER_LLM_RECORD     folder to record replies into
//	OPENAI_API_KEY, ANTHROPIC_API_KEY   the key of the chosen provider
//
// getenv reads the environment (os.Getenv if nil). Other sections of the
// file are left to their readers. A mistake in the llm section (unknown
// key, wrong type, a key written in the file) is an error naming the file
// and line. Relative replay and record paths in the file are taken from
// the file's folder.
func LoadConfig(path string, getenv func(string) string) (Config, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	var cfg Config
	if path != "" {
		if err := loadFile(path, &cfg); err != nil {
			return Config{}, err
		}
	}
	set := func(dst *string, key string) {
		if v := strings.TrimSpace(getenv(key)); v != "" {
			*dst = v
		}
	}
	set(&cfg.Provider, "CAPBROKER_LLM")
	set(&cfg.BaseURL, "CAPBROKER_LLM_BASE_URL")
	set(&cfg.Model, "CAPBROKER_LLM_MODEL")
	set(&cfg.Replay, "CAPBROKER_LLM_REPLAY")
	set(&cfg.Record, "CAPBROKER_LLM_RECORD")
	if v := strings.TrimSpace(getenv("CAPBROKER_LLM_TIMEOUT")); v != "" {
		d, err := parseDuration(v)
		if err != nil {
			return Config{}, fmt.Errorf("CAPBROKER_LLM_TIMEOUT: %w", err)
		}
		cfg.Timeout = d
	}
	if v := strings.TrimSpace(getenv("CAPBROKER_LLM_RETRIES")); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			return Config{}, fmt.Errorf("CAPBROKER_LLM_RETRIES: %q is not a whole number", v)
		}
		cfg.MaxRetries = retriesSetting(n)
	}
	cfg.Provider = strings.ToLower(cfg.Provider)
	switch cfg.Provider {
	case ProviderOpenAI:
		cfg.APIKey = getenv("OPENAI_API_KEY")
		if cfg.BaseURL == "" {
			cfg.BaseURL = getenv("OPENAI_BASE_URL")
		}
	case ProviderAnthropic:
		cfg.APIKey = getenv("ANTHROPIC_API_KEY")
		if cfg.BaseURL == "" {
			cfg.BaseURL = getenv("ANTHROPIC_BASE_URL")
		}
	}
	return cfg, nil
}

// retriesSetting maps a user's retry count (0 means none) to
// Config.MaxRetries (0 means the default).
func retriesSetting(n int) int {
	if n <= 0 {
		return -1
	}
	return n
}

func parseDuration(v string) (time.Duration, error) {
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		if s <= 0 {
			return 0, fmt.Errorf("%q is not a positive duration", v)
		}
		return time.Duration(s * float64(time.Second)), nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("%q is not a positive duration (write it as 90s or 2m)", v)
	}
	return d, nil
}

func loadFile(path string, cfg *Config) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("reading LLM settings: %w", err)
	}
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if len(doc.Content) == 0 {
		return nil // an empty file
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return fmt.Errorf("%s:%d: want a mapping of settings at the top", path, root.Line)
	}
	var sec *yaml.Node
	for i := 0; i+1 < len(root.Content); i += 2 {
		if root.Content[i].Value == "llm" {
			sec = root.Content[i+1]
		}
	}
	if sec == nil || sec.Tag == "!!null" {
		return nil
	}
	if sec.Kind != yaml.MappingNode {
		return fmt.Errorf("%s:%d: llm: want a mapping of settings (provider, model, ...)", path, sec.Line)
	}
	dir := filepath.Dir(path)
	for i := 0; i+1 < len(sec.Content); i += 2 {
		k, v := sec.Content[i], sec.Content[i+1]
		at := fmt.Sprintf("%s:%d: llm.%s", path, k.Line, k.Value)
		if v.Kind != yaml.ScalarNode {
			return fmt.Errorf("%s: want a single value", at)
		}
		switch k.Value {
		case "provider":
			cfg.Provider = v.Value
		case "base_url":
			cfg.BaseURL = v.Value
		case "model":
			cfg.Model = v.Value
		case "replay":
			cfg.Replay = resolve(dir, v.Value)
		case "record":
			cfg.Record = resolve(dir, v.Value)
		case "timeout":
			d, err := parseDuration(v.Value)
			if err != nil {
				return fmt.Errorf("%s: %w", at, err)
			}
			cfg.Timeout = d
		case "max_retries":
			n, err := strconv.Atoi(v.Value)
			if err != nil {
				return fmt.Errorf("%s: %q is not a whole number", at, v.Value)
			}
			cfg.MaxRetries = retriesSetting(n)
		case "api_key", "apikey", "key":
			return fmt.Errorf("%s: keys are not read from files; set OPENAI_API_KEY or ANTHROPIC_API_KEY", at)
		default:
			return fmt.Errorf("%s: unknown setting (want %s)", at, strings.Join(fileKeys, ", "))
		}
	}
	return nil
}

func resolve(dir, p string) string {
	if p == "" || filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(dir, p)
}
