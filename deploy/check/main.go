// Command check validates capbroker's deployment files without a cluster
// or a Docker engine, the way CI can (scripts/test-all.sh runs it):
//
//   - the Helm chart deploy/helm/capbroker is rendered by Helm's own
//     engine (helm.sh/helm/v4, the library the helm command is) with
//     several sets of values, and every manifest is decoded strictly into
//     the Kubernetes API types (k8s.io/api through client-go's scheme:
//     an unknown or duplicate field, a wrong type or an unknown kind
//     fails), then checked for what a fleet needs: probes on /healthz and
//     /readyz, no session affinity, a selector that matches the pods,
//     every Secret and ConfigMap a pod reads rendered or named by the
//     values, a grace period longer than the drain; values without a
//     PostgreSQL URL must fail to render;
//   - the Compose file deploy/compose/compose.yaml is loaded and checked
//     against the Compose specification's schema by compose-go (the
//     loader docker compose uses), then checked for three gateway
//     replicas on PostgreSQL behind HAProxy, each with a health check,
//     and for haproxy.cfg naming each replica.
//
// Usage, from the repository's root:
//
//	(cd deploy/check && go run . ../..)
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/compose-spec/compose-go/v2/cli"
	"helm.sh/helm/v4/pkg/chart/common"
	"helm.sh/helm/v4/pkg/chart/common/util"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	"helm.sh/helm/v4/pkg/engine"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/yaml"
)

func main() {
	root := "."
	if len(os.Args) > 1 {
		root = os.Args[1]
	}
	var failed bool
	for _, c := range []struct {
		name string
		fn   func(string) error
	}{
		{"helm chart", checkChart},
		{"compose file", checkCompose},
	} {
		if err := c.fn(root); err != nil {
			fmt.Fprintf(os.Stderr, "deploy check: %s: %v\n", c.name, err)
			failed = true
			continue
		}
		fmt.Printf("deploy check: %s: ok\n", c.name)
	}
	if failed {
		os.Exit(1)
	}
}

// valueSets are the values the chart is rendered with; fail, if set, is
// what rendering must fail with.
var valueSets = []struct {
	name   string
	values string
	fail   string
}{
	{"url and token", `
postgres: {url: "postgres://capbroker:pw@db:5432/capbroker?sslmode=require"}
auth: {token: "t0ken"}
mcpServers: {github: {url: "https://example.com/mcp", headers: {Authorization: "Bearer x"}}}
`, ""},
	{"existing secrets and identities", `
replicas: 5
postgres: {existingSecret: pg, existingSecretKey: url}
auth: {existingSecret: capbroker-auth, existingSecretHasIdentities: true}
gateway: {extraArgs: ["--task=triage issues"], drainTimeout: 45s}
`, ""},
	{"identities in the chart's secret", `
postgres: {url: "postgres://db/capbroker"}
auth: {identities: "identities:\n  - name: alice\n    token_sha256: 2bb80d537b1da3e38bd30361aa855686bde0eacd7162fef6a25fe97bf527a25b\n"}
`, ""},
	{"no database", `{}`, "postgres.url or postgres.existingSecret is required"},
}

func checkChart(root string) error {
	dir := filepath.Join(root, "deploy", "helm", "capbroker")
	chrt, err := loader.LoadDir(dir)
	if err != nil {
		return fmt.Errorf("loading %s: %w", dir, err)
	}
	if err := chrt.Validate(); err != nil {
		return fmt.Errorf("%s: Chart.yaml: %w", dir, err)
	}
	for _, vs := range valueSets {
		vals, err := common.ReadValues([]byte(vs.values))
		if err != nil {
			return fmt.Errorf("values %q: %w", vs.name, err)
		}
		rv, err := util.ToRenderValues(chrt, vals, common.ReleaseOptions{Name: "gw", Namespace: "mcp", IsInstall: true}, nil)
		if err != nil {
			return fmt.Errorf("values %q: %w", vs.name, err)
		}
		out, err := engine.Render(chrt, rv)
		if vs.fail != "" {
			if err == nil || !strings.Contains(err.Error(), vs.fail) {
				return fmt.Errorf("values %q: rendering gave %v, want an error saying %q", vs.name, err, vs.fail)
			}
			continue
		}
		if err != nil {
			return fmt.Errorf("values %q: rendering: %w", vs.name, err)
		}
		if err := checkManifests(out, vals); err != nil {
			return fmt.Errorf("values %q: %w", vs.name, err)
		}
	}
	return nil
}

var docSep = regexp.MustCompile(`(?m)^---\s*$`)

// checkManifests decodes every rendered manifest strictly and checks the
// objects together.
func checkManifests(out map[string]string, vals common.Values) error {
	codecs := serializer.NewCodecFactory(scheme.Scheme, serializer.EnableStrict)
	dec := codecs.UniversalDeserializer()
	var objs []runtime.Object
	names := make([]string, 0, len(out))
	for n := range out {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		if !strings.HasSuffix(name, ".yaml") {
			continue
		}
		for _, doc := range docSep.Split(out[name], -1) {
			if strings.TrimSpace(doc) == "" {
				continue
			}
			obj, _, err := dec.Decode([]byte(doc), nil, nil)
			if err != nil {
				return fmt.Errorf("%s: %w\n%s", name, err, doc)
			}
			objs = append(objs, obj)
		}
	}
	var (
		dep      *appsv1.Deployment
		svc      *corev1.Service
		secrets  = map[string]*corev1.Secret{}
		cms      = map[string]*corev1.ConfigMap{}
		external []string
	)
	for _, o := range objs {
		switch v := o.(type) {
		case *appsv1.Deployment:
			dep = v
		case *corev1.Service:
			svc = v
		case *corev1.Secret:
			secrets[v.Name] = v
		case *corev1.ConfigMap:
			cms[v.Name] = v
		default:
			return fmt.Errorf("unexpected object %T", o)
		}
	}
	if dep == nil || svc == nil {
		return errors.New("no Deployment or no Service rendered")
	}
	for _, path := range []string{"postgres", "auth"} {
		if m, ok := vals[path].(map[string]any); ok {
			if s, _ := m["existingSecret"].(string); s != "" {
				external = append(external, s)
			}
		}
	}
	pod := dep.Spec.Template
	sel := dep.Spec.Selector.MatchLabels
	for k, v := range sel {
		if pod.Labels[k] != v {
			return fmt.Errorf("the Deployment's selector %v does not match its pods' labels %v", sel, pod.Labels)
		}
	}
	for k, v := range svc.Spec.Selector {
		if pod.Labels[k] != v {
			return fmt.Errorf("the Service's selector %v does not match the pods' labels %v", svc.Spec.Selector, pod.Labels)
		}
	}
	if svc.Spec.SessionAffinity != corev1.ServiceAffinityNone {
		return fmt.Errorf("the Service has session affinity %q: a fleet needs none", svc.Spec.SessionAffinity)
	}
	if len(pod.Spec.Containers) != 1 {
		return fmt.Errorf("%d containers, want the gateway alone", len(pod.Spec.Containers))
	}
	c := pod.Spec.Containers[0]
	ports := map[string]bool{}
	for _, p := range c.Ports {
		ports[p.Name] = true
	}
	if !ports[svc.Spec.Ports[0].TargetPort.String()] {
		return fmt.Errorf("the Service targets port %q the container does not name", svc.Spec.Ports[0].TargetPort.String())
	}
	for _, p := range []struct {
		what  string
		probe *corev1.Probe
		path  string
	}{{"liveness", c.LivenessProbe, "/healthz"}, {"readiness", c.ReadinessProbe, "/readyz"}, {"startup", c.StartupProbe, "/healthz"}} {
		if p.probe == nil || p.probe.HTTPGet == nil || p.probe.HTTPGet.Path != p.path || !ports[p.probe.HTTPGet.Port.String()] {
			return fmt.Errorf("%s probe %+v: want GET %s on a named port", p.what, p.probe, p.path)
		}
	}
	secretOK := func(name string) bool { return secrets[name] != nil || slices.Contains(external, name) }
	for _, e := range c.Env {
		if r := e.ValueFrom; r != nil && r.SecretKeyRef != nil {
			ref := r.SecretKeyRef
			if !secretOK(ref.Name) {
				return fmt.Errorf("env %s reads Secret %q, which is neither rendered nor named by the values", e.Name, ref.Name)
			}
			if s := secrets[ref.Name]; s != nil && (ref.Optional == nil || !*ref.Optional) {
				if _, ok := s.StringData[ref.Key]; !ok {
					return fmt.Errorf("env %s reads key %q of Secret %q, which lacks it", e.Name, ref.Key, ref.Name)
				}
			}
		}
	}
	if !slices.ContainsFunc(c.Env, func(e corev1.EnvVar) bool { return e.Name == "CAPBROKER_DB" }) {
		return errors.New("the gateway gets no CAPBROKER_DB: replicas must share PostgreSQL")
	}
	for _, v := range pod.Spec.Volumes {
		switch {
		case v.Secret != nil && !secretOK(v.Secret.SecretName):
			return fmt.Errorf("volume %s mounts Secret %q, which is neither rendered nor named by the values", v.Name, v.Secret.SecretName)
		case v.ConfigMap != nil:
			cm := cms[v.ConfigMap.Name]
			if cm == nil {
				return fmt.Errorf("volume %s mounts ConfigMap %q, which is not rendered", v.Name, v.ConfigMap.Name)
			}
			var mcp struct {
				Servers map[string]json.RawMessage `json:"mcpServers"`
			}
			if err := json.Unmarshal([]byte(cm.Data["mcp.json"]), &mcp); err != nil || mcp.Servers == nil {
				return fmt.Errorf("ConfigMap %s: mcp.json is not an mcpServers file (%v): %s", cm.Name, err, cm.Data["mcp.json"])
			}
		}
	}
	drain := time.Duration(0)
	for _, a := range c.Args {
		for _, f := range []string{"--drain-delay=", "--drain-timeout="} {
			if v, ok := strings.CutPrefix(a, f); ok {
				d, err := time.ParseDuration(v)
				if err != nil {
					return fmt.Errorf("argument %s: %w", a, err)
				}
				if f == "--drain-timeout=" {
					drain = d
				}
			}
		}
	}
	if g := pod.Spec.TerminationGracePeriodSeconds; g == nil || time.Duration(*g)*time.Second <= drain {
		return fmt.Errorf("terminationGracePeriodSeconds %v is not longer than --drain-timeout %s: the kubelet would kill calls the drain waits for", g, drain)
	}
	wantIDs := false
	if a, ok := vals["auth"].(map[string]any); ok {
		ids, _ := a["identities"].(string)
		ext, _ := a["existingSecret"].(string)
		has, _ := a["existingSecretHasIdentities"].(bool)
		wantIDs = (ids != "" && ext == "") || (ext != "" && has)
	}
	if got := slices.Contains(c.Args, "--identities=/etc/capbroker/auth/identities.yaml"); got != wantIDs {
		return fmt.Errorf("--identities given: %v, want %v for these values (a file the Secret lacks stops the gateway)", got, wantIDs)
	}
	if c.Args[0] != "gateway" {
		return fmt.Errorf("the container runs %q, not the gateway", c.Args)
	}
	return nil
}

func checkCompose(root string) error {
	dir := filepath.Join(root, "deploy", "compose")
	path := filepath.Join(dir, "compose.yaml")
	opts, err := cli.NewProjectOptions([]string{path},
		cli.WithWorkingDirectory(dir),
		cli.WithEnv([]string{"CAPBROKER_TOKEN=t", "POSTGRES_PASSWORD=p"}),
		cli.WithInterpolation(true), cli.WithNormalization(true), cli.WithConsistency(true))
	if err != nil {
		return err
	}
	p, err := opts.LoadProject(context.Background())
	if err != nil {
		return fmt.Errorf("loading %s: %w", path, err)
	}
	cfg, err := os.ReadFile(filepath.Join(dir, "haproxy.cfg"))
	if err != nil {
		return err
	}
	var gateways []string
	for name, s := range p.Services {
		if len(s.Command) > 0 && s.Command[0] == "gateway" {
			gateways = append(gateways, name)
			if s.HealthCheck == nil || len(s.HealthCheck.Test) == 0 {
				return fmt.Errorf("service %s has no health check", name)
			}
			if db := s.Environment["CAPBROKER_DB"]; db == nil || !strings.HasPrefix(*db, "postgres://") {
				return fmt.Errorf("service %s: CAPBROKER_DB is not a PostgreSQL URL", name)
			}
			if !regexp.MustCompile(`(?m)^\s*server\s+\S+\s+` + regexp.QuoteMeta(name) + `:8080\b`).Match(cfg) {
				return fmt.Errorf("haproxy.cfg does not balance to %s:8080", name)
			}
		}
	}
	if len(gateways) != 3 {
		return fmt.Errorf("%d gateway services (%v), want 3", len(gateways), gateways)
	}
	for _, need := range []string{"postgres", "haproxy"} {
		if _, ok := p.Services[need]; !ok {
			return fmt.Errorf("no %s service", need)
		}
	}
	if regexp.MustCompile(`(?m)^\s*(cookie|stick|option\s+prefer-last-server)\b`).Match(cfg) {
		return errors.New("haproxy.cfg sets an affinity: a fleet needs none")
	}
	// The manifest round-trips as YAML (what docker compose config prints).
	if _, err := yaml.Marshal(p); err != nil {
		return err
	}
	return nil
}
