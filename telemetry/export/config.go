package export

import (
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// config is what the environment asks for.
type config struct {
	// on is false when tracing stays off (no endpoint, disabled, or a
	// setting that cannot be honoured).
	on          bool
	endpoint    string // full URL spans are POSTed to
	json        bool   // http/json instead of http/protobuf
	headers     map[string]string
	timeout     time.Duration // 0: the exporter's default
	gzip        bool
	sampler     sdktrace.Sampler // nil: parent-based always-on
	samplerName string
	service     string
	resource    []attribute.KeyValue // OTEL_RESOURCE_ATTRIBUTES
	propagators []string             // tracecontext, baggage
}

// parse reads the configuration from getenv. Each warning names the
// variable and says what was done instead; values of headers are never
// repeated (they hold secrets).
func parse(getenv func(string) string) (config, []string) {
	var c config
	var warns []string
	warn := func(format string, args ...any) { warns = append(warns, fmt.Sprintf(format, args...)) }
	// signal returns the traces-specific variable if set, else the
	// general one, and the name of the one it read.
	signal := func(suffix string) (string, string) {
		name := "OTEL_EXPORTER_OTLP_TRACES_" + suffix
		if v := strings.TrimSpace(getenv(name)); v != "" {
			return v, name
		}
		name = "OTEL_EXPORTER_OTLP_" + suffix
		return strings.TrimSpace(getenv(name)), name
	}

	if strings.EqualFold(strings.TrimSpace(getenv("OTEL_SDK_DISABLED")), "true") {
		return c, nil
	}
	otlp := true
	if v := strings.TrimSpace(getenv("OTEL_TRACES_EXPORTER")); v != "" {
		otlp = false
		var other []string
		for _, e := range strings.Split(v, ",") {
			switch e = strings.TrimSpace(e); e {
			case "otlp":
				otlp = true
			case "none", "":
			default:
				other = append(other, e)
			}
		}
		if len(other) > 0 {
			if otlp {
				warn("OTEL_TRACES_EXPORTER: %s not supported (only otlp and none); exporting over OTLP only", strings.Join(other, ", "))
			} else {
				warn("OTEL_TRACES_EXPORTER=%s: not supported (only otlp and none); tracing is off", v)
			}
		}
	}
	if !otlp {
		return c, warns
	}

	if v := strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")); v != "" {
		c.endpoint = v
		if !checkURL(v, "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", warn) {
			return c, warns
		}
	} else if v := strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_ENDPOINT")); v != "" {
		if !checkURL(v, "OTEL_EXPORTER_OTLP_ENDPOINT", warn) {
			return c, warns
		}
		c.endpoint = strings.TrimRight(v, "/") + "/v1/traces"
	} else {
		return c, warns // no endpoint: off, and nothing to say
	}

	switch p, name := signal("PROTOCOL"); p {
	case "", "http/protobuf":
	case "http/json":
		c.json = true
	case "grpc":
		warn("%s=grpc: capbroker sends OTLP over HTTP only; set %s=http/protobuf and point the endpoint at the collector's OTLP/HTTP port (4318); tracing is off", name, name)
		return c, warns
	default:
		warn("%s=%s: unknown protocol (want http/protobuf or http/json); tracing is off", name, p)
		return c, warns
	}

	c.headers = map[string]string{}
	for _, name := range []string{"OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_TRACES_HEADERS"} { // the second wins
		kv, bad := pairs(getenv(name))
		for k, v := range kv {
			c.headers[k] = v
		}
		for _, b := range bad {
			warn("%s: entry %s is not key=value (percent-encoded); left out", name, b)
		}
	}

	if v, name := signal("TIMEOUT"); v != "" {
		ms, err := strconv.Atoi(v)
		if err != nil || ms <= 0 {
			warn("%s=%s: want a positive number of milliseconds; using the default (10000)", name, v)
		} else {
			c.timeout = time.Duration(ms) * time.Millisecond
		}
	}
	switch v, name := signal("COMPRESSION"); v {
	case "", "none":
	case "gzip":
		c.gzip = true
	default:
		warn("%s=%s: want gzip or none; sending uncompressed", name, v)
	}

	c.sampler, c.samplerName = sampler(getenv, warn)

	c.service = "capbroker"
	kv, bad := pairs(getenv("OTEL_RESOURCE_ATTRIBUTES"))
	for _, b := range bad {
		warn("OTEL_RESOURCE_ATTRIBUTES: entry %s is not key=value (percent-encoded); left out", b)
	}
	for _, k := range slices.Sorted(maps.Keys(kv)) {
		if k == "service.name" {
			c.service = kv[k]
			continue
		}
		c.resource = append(c.resource, attribute.String(k, kv[k]))
	}
	if v := strings.TrimSpace(getenv("OTEL_SERVICE_NAME")); v != "" {
		c.service = v
	}

	c.propagators = []string{"tracecontext", "baggage"}
	if v := strings.TrimSpace(getenv("OTEL_PROPAGATORS")); v != "" {
		c.propagators = nil
		for _, p := range strings.Split(v, ",") {
			switch p = strings.TrimSpace(p); p {
			case "tracecontext", "baggage":
				c.propagators = append(c.propagators, p)
			case "none", "":
			default:
				warn("OTEL_PROPAGATORS: %s not supported (only tracecontext, baggage, none); left out", p)
			}
		}
	}
	c.on = true
	return c, warns
}

// checkURL reports whether v is an http or https URL with a host, and
// warns (tracing off) when not.
func checkURL(v, name string, warn func(string, ...any)) bool {
	u, err := url.Parse(v)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		warn("%s=%s: want an http:// or https:// URL (such as http://localhost:4318); tracing is off", name, v)
		return false
	}
	return true
}

// sampler reads OTEL_TRACES_SAMPLER and OTEL_TRACES_SAMPLER_ARG.
func sampler(getenv func(string) string, warn func(string, ...any)) (sdktrace.Sampler, string) {
	name := strings.TrimSpace(getenv("OTEL_TRACES_SAMPLER"))
	arg := strings.TrimSpace(getenv("OTEL_TRACES_SAMPLER_ARG"))
	ratio := func() float64 {
		if arg == "" {
			return 1
		}
		f, err := strconv.ParseFloat(arg, 64)
		if err != nil || f < 0 || f > 1 {
			warn("OTEL_TRACES_SAMPLER_ARG=%s: want a ratio from 0 to 1; using 1", arg)
			return 1
		}
		return f
	}
	switch name {
	case "", "parentbased_always_on":
		return sdktrace.ParentBased(sdktrace.AlwaysSample()), "parentbased_always_on"
	case "always_on":
		return sdktrace.AlwaysSample(), name
	case "always_off":
		return sdktrace.NeverSample(), name
	case "parentbased_always_off":
		return sdktrace.ParentBased(sdktrace.NeverSample()), name
	case "traceidratio":
		return sdktrace.TraceIDRatioBased(ratio()), name
	case "parentbased_traceidratio":
		return sdktrace.ParentBased(sdktrace.TraceIDRatioBased(ratio())), name
	}
	warn("OTEL_TRACES_SAMPLER=%s: not supported (always_on, always_off, traceidratio and their parentbased_ forms); using parentbased_always_on", name)
	return sdktrace.ParentBased(sdktrace.AlwaysSample()), "parentbased_always_on"
}

// pairs parses a W3C-baggage-like list "k1=v1,k2=v2" with
// percent-encoded values, as OTEL_EXPORTER_OTLP_HEADERS and
// OTEL_RESOURCE_ATTRIBUTES are written. bad holds the entries it could
// not read, each as its position and key ("2 (key x-token)"), never
// the value.
func pairs(s string) (kv map[string]string, bad []string) {
	kv = map[string]string{}
	if strings.TrimSpace(s) == "" {
		return kv, nil
	}
	for i, e := range strings.Split(s, ",") {
		if strings.TrimSpace(e) == "" {
			continue
		}
		k, v, ok := strings.Cut(e, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			bad = append(bad, strconv.Itoa(i+1))
			continue
		}
		dv, err := url.PathUnescape(strings.TrimSpace(v))
		if err != nil {
			bad = append(bad, fmt.Sprintf("%d (key %s)", i+1, k))
			continue
		}
		kv[k] = dv
	}
	return kv, bad
}
