package deploy

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	"helm.sh/helm/v3/pkg/lint"
	"helm.sh/helm/v3/pkg/lint/support"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	"sigs.k8s.io/yaml"

	"github.com/agent-tools/agent-tools/internal/config"
)

const chartDir = "helm/agent-tools"

// TestMain points every HTTP client of this process at a closed port: the
// chart renders and validates offline (a values schema that names a remote
// $schema, or anything else that would fetch, fails the test instead).
func TestMain(m *testing.M) {
	for _, k := range []string{"HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"} {
		os.Setenv(k, "http://127.0.0.1:1")
	}
	os.Unsetenv("NO_PROXY")
	os.Unsetenv("no_proxy")
	os.Exit(m.Run())
}

// rendered is one release of the chart, decoded strictly into the
// Kubernetes API types.
type rendered struct {
	deployments     []appsv1.Deployment
	services        []corev1.Service
	configMaps      []corev1.ConfigMap
	serviceAccounts []corev1.ServiceAccount
	ingresses       []networkingv1.Ingress
	networkPolicies []networkingv1.NetworkPolicy
	hpas            []autoscalingv2.HorizontalPodAutoscaler
	pdbs            []policyv1.PodDisruptionBudget
	kinds           []string
}

// render renders the chart with the values file (""= the chart's own
// values) through the Helm SDK: values coalesced and checked against
// values.schema.json, templates executed, every document decoded strictly.
func render(t *testing.T, valuesFile string) rendered {
	t.Helper()
	ch, err := loader.Load(chartDir)
	if err != nil {
		t.Fatal(err)
	}
	vals := map[string]any{}
	if valuesFile != "" {
		if vals, err = chartutil.ReadValuesFile(valuesFile); err != nil {
			t.Fatal(err)
		}
	}
	rv, err := chartutil.ToRenderValues(ch, vals, chartutil.ReleaseOptions{Name: "at", Namespace: "tools", IsInstall: true, Revision: 1}, chartutil.DefaultCapabilities)
	if err != nil {
		t.Fatalf("values: %v", err)
	}
	files, err := engine.Render(ch, rv)
	if err != nil {
		t.Fatalf("render: %v", err)
	}
	var out rendered
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if !strings.HasSuffix(name, ".yaml") {
			continue // NOTES.txt, _helpers.tpl
		}
		for i, doc := range bytes.Split([]byte(files[name]), []byte("\n---\n")) {
			if len(bytes.TrimSpace(stripComments(doc))) == 0 {
				continue
			}
			decode(t, fmt.Sprintf("%s[%d]", name, i), doc, &out)
		}
	}
	return out
}

// stripComments drops whole-line YAML comments (a template that renders
// nothing but its comment is an empty document).
func stripComments(doc []byte) []byte {
	var b bytes.Buffer
	for _, l := range bytes.Split(doc, []byte("\n")) {
		if t := bytes.TrimSpace(l); len(t) > 0 && t[0] != '#' {
			b.Write(l)
			b.WriteByte('\n')
		}
	}
	return b.Bytes()
}

func decode(t *testing.T, where string, doc []byte, out *rendered) {
	t.Helper()
	var head struct{ APIVersion, Kind string }
	if err := yaml.Unmarshal(doc, &head); err != nil {
		t.Fatalf("%s: %v\n%s", where, err, doc)
	}
	strict := func(v any) {
		if err := yaml.UnmarshalStrict(doc, v); err != nil {
			t.Fatalf("%s (%s): %v\n%s", where, head.Kind, err, doc)
		}
	}
	want := map[string]string{
		"Deployment": "apps/v1", "Service": "v1", "ConfigMap": "v1", "ServiceAccount": "v1",
		"Ingress": "networking.k8s.io/v1", "NetworkPolicy": "networking.k8s.io/v1",
		"HorizontalPodAutoscaler": "autoscaling/v2", "PodDisruptionBudget": "policy/v1",
	}
	if api, ok := want[head.Kind]; !ok || api != head.APIVersion {
		t.Fatalf("%s: unexpected %s %s (a chart never holds a Secret)", where, head.APIVersion, head.Kind)
	}
	out.kinds = append(out.kinds, head.Kind)
	switch head.Kind {
	case "Deployment":
		var v appsv1.Deployment
		strict(&v)
		out.deployments = append(out.deployments, v)
	case "Service":
		var v corev1.Service
		strict(&v)
		out.services = append(out.services, v)
	case "ConfigMap":
		var v corev1.ConfigMap
		strict(&v)
		out.configMaps = append(out.configMaps, v)
	case "ServiceAccount":
		var v corev1.ServiceAccount
		strict(&v)
		out.serviceAccounts = append(out.serviceAccounts, v)
	case "Ingress":
		var v networkingv1.Ingress
		strict(&v)
		out.ingresses = append(out.ingresses, v)
	case "NetworkPolicy":
		var v networkingv1.NetworkPolicy
		strict(&v)
		out.networkPolicies = append(out.networkPolicies, v)
	case "HorizontalPodAutoscaler":
		var v autoscalingv2.HorizontalPodAutoscaler
		strict(&v)
		out.hpas = append(out.hpas, v)
	case "PodDisruptionBudget":
		var v policyv1.PodDisruptionBudget
		strict(&v)
		out.pdbs = append(out.pdbs, v)
	}
}

func (r rendered) deployment(t *testing.T, name string) *appsv1.Deployment {
	t.Helper()
	for i := range r.deployments {
		if r.deployments[i].Name == name {
			return &r.deployments[i]
		}
	}
	t.Fatalf("no Deployment %s (kinds %v)", name, r.kinds)
	return nil
}

// TestHelmChartLints: helm lint's checks (Chart.yaml, values against the
// schema, templates render, YAML well formed), through the SDK.
func TestHelmChartLints(t *testing.T) {
	for _, vf := range []string{"", chartDir + "/ci/full-values.yaml", chartDir + "/ci/external-values.yaml"} {
		vals := map[string]any{}
		if vf != "" {
			var err error
			if vals, err = chartutil.ReadValuesFile(vf); err != nil {
				t.Fatal(err)
			}
		}
		res := lint.All(chartDir, vals, "tools", false)
		for _, m := range res.Messages {
			if m.Severity >= support.WarningSev {
				t.Errorf("lint %s: %s", cmpOr(vf, "default values"), m)
			}
		}
	}
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// TestHelmChart renders the default, full and external values and checks
// what a cluster needs: non-root read-only pods probed on /readyz and
// /healthz, every ${VAR} of the config provided by the pod's environment,
// the config mounted where the args read it, the Service, HPA, PDB and
// NetworkPolicy selecting the pods, Redis wired when asked for, no Secret.
func TestHelmChart(t *testing.T) {
	cases := []struct {
		name, values    string
		redis           string // "", "bundled", "secret"
		hpa, pdb, netpo bool
		configMap       string // the ConfigMap the pods mount
		ingress         bool
	}{
		{name: "default", values: "", configMap: "at-agent-tools"},
		{name: "full", values: chartDir + "/ci/full-values.yaml", redis: "bundled", hpa: true, pdb: true, netpo: true, configMap: "at-agent-tools", ingress: true},
		{name: "external", values: chartDir + "/ci/external-values.yaml", redis: "secret", pdb: true, configMap: "my-agent-tools"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := render(t, tc.values)
			dep := r.deployment(t, "at-agent-tools")
			pod := dep.Spec.Template.Spec
			labels := dep.Spec.Template.Labels
			if !mapsSubset(dep.Spec.Selector.MatchLabels, labels) {
				t.Errorf("selector %v does not match the pod labels %v", dep.Spec.Selector.MatchLabels, labels)
			}
			if (dep.Spec.Replicas == nil) != tc.hpa {
				t.Errorf("replicas %v with autoscaling %v: the HPA owns the count", dep.Spec.Replicas, tc.hpa)
			}
			c := pod.Containers[0]
			if c.ReadinessProbe == nil || c.ReadinessProbe.HTTPGet.Path != "/readyz" || c.LivenessProbe == nil || c.LivenessProbe.HTTPGet.Path != "/healthz" {
				t.Errorf("probes must be /readyz and /healthz: %+v %+v", c.ReadinessProbe, c.LivenessProbe)
			}
			for _, d := range r.deployments { // agent-tools and a bundled Redis alike
				ps := d.Spec.Template.Spec
				if ps.SecurityContext == nil || ps.SecurityContext.RunAsNonRoot == nil || !*ps.SecurityContext.RunAsNonRoot || ps.SecurityContext.RunAsUser == nil || *ps.SecurityContext.RunAsUser == 0 {
					t.Errorf("%s: pod must run as a non-root user: %+v", d.Name, ps.SecurityContext)
				}
				for _, ct := range ps.Containers {
					sc := ct.SecurityContext
					if sc == nil || sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation || sc.Capabilities == nil || !slices.Contains(sc.Capabilities.Drop, "ALL") {
						t.Errorf("%s/%s: want a read-only root filesystem, no privilege escalation, no capabilities: %+v", d.Name, ct.Name, sc)
					}
				}
			}

			// The config: mounted where --config reads it, from the right ConfigMap.
			var cfgPath string
			for i, a := range c.Args {
				if a == "--config" && i+1 < len(c.Args) {
					cfgPath = c.Args[i+1]
				}
			}
			if !slices.Contains(c.Args, "--http") || !slices.Contains(c.Args, "0.0.0.0:8321") || cfgPath == "" {
				t.Fatalf("args = %q", c.Args)
			}
			var mounted string
			for _, m := range c.VolumeMounts {
				if m.Name == "config" {
					mounted = m.MountPath
				}
			}
			if filepath.Dir(cfgPath) != mounted {
				t.Errorf("--config %s, config mounted at %s", cfgPath, mounted)
			}
			for _, v := range pod.Volumes {
				if v.Name == "config" && (v.ConfigMap == nil || v.ConfigMap.Name != tc.configMap) {
					t.Errorf("config volume %+v, want ConfigMap %s", v.VolumeSource, tc.configMap)
				}
			}

			// Every variable the config needs comes from the pod's environment.
			env := map[string]string{}
			for _, e := range c.Env {
				env[e.Name] = "value-of-" + e.Name + "-0123456789abcdefghijklmnopqrstuvwxyz"
				switch {
				case e.Name == "AGENT_TOOLS_REPLICA_ID" && (e.ValueFrom == nil || e.ValueFrom.FieldRef == nil || e.ValueFrom.FieldRef.FieldPath != "metadata.name"):
					t.Error("AGENT_TOOLS_REPLICA_ID must come from the pod name")
				case e.Name == "REDIS_URL":
					env[e.Name] = "redis://redis:6379/0"
				}
				if e.Value != "" && e.Name != "REDIS_URL" && e.Name != "GOMEMLIMIT" {
					t.Errorf("%s has a literal value in the pod spec: secrets come by reference", e.Name)
				}
			}
			if _, ok := env["AGENT_TOOLS_REPLICA_ID"]; !ok {
				t.Error("no AGENT_TOOLS_REPLICA_ID")
			}
			if _, ok := env["AGENT_TOOLS_TOKEN"]; ok == (tc.name == "full") {
				t.Errorf("AGENT_TOOLS_TOKEN in the environment: %v (the full values drop the default's entry with null)", ok)
			}
			switch tc.redis {
			case "bundled":
				if !hasEnvValue(c.Env, "REDIS_URL", "redis://at-agent-tools-redis:6379/0") {
					t.Errorf("REDIS_URL does not name the bundled Redis: %+v", c.Env)
				}
				redis := r.deployment(t, "at-agent-tools-redis")
				var svc *corev1.Service
				for i := range r.services {
					if r.services[i].Name == "at-agent-tools-redis" {
						svc = &r.services[i]
					}
				}
				if svc == nil || !mapsSubset(svc.Spec.Selector, redis.Spec.Template.Labels) || mapsSubset(svc.Spec.Selector, labels) {
					t.Errorf("the Redis Service must select the Redis pod only: %+v", svc)
				}
			case "secret":
				if !hasEnvSecret(c.Env, "REDIS_URL", "managed-redis", "url") {
					t.Errorf("REDIS_URL must come from the Secret: %+v", c.Env)
				}
			default:
				if _, ok := env["REDIS_URL"]; ok {
					t.Errorf("REDIS_URL without Redis: %+v", c.Env)
				}
			}
			if tc.configMap == "at-agent-tools" {
				if len(r.configMaps) != 1 {
					t.Fatalf("want one ConfigMap, got %d", len(r.configMaps))
				}
				var fromSecrets []string
				for _, ef := range c.EnvFrom {
					fromSecrets = append(fromSecrets, ef.SecretRef.Name)
				}
				text := r.configMaps[0].Data[filepath.Base(cfgPath)]
				cfg, err := config.Parse(cfgPath, []byte(text), func(k string) (string, bool) {
					if v, ok := env[k]; ok {
						return v, true
					}
					if len(fromSecrets) > 0 && k == "DOCS_TOKEN" { // from envFromSecrets: the Secret's keys are its own
						return "docs-token", true
					}
					return "", false
				})
				if err != nil {
					t.Fatalf("the ConfigMap's %s does not load with the pod's environment:\n%v", filepath.Base(cfgPath), err)
				}
				if !cfg.Server.HTTP.AuthConfigured() || cfg.Server.ClusterKey == "" {
					t.Errorf("a served config needs auth and a cluster key: %+v", cfg.Server)
				}
				if (cfg.Server.Redis.URL != "") != (tc.redis != "") {
					t.Errorf("redis url %q with redis %q", cfg.Server.Redis.URL, tc.redis)
				}
				if dep.Spec.Template.Annotations["checksum/config"] == "" {
					t.Error("no checksum/config annotation: pods would not roll on a config change")
				}
			} else if len(r.configMaps) != 0 {
				t.Errorf("existingConfigMap set, yet the chart made %d ConfigMaps", len(r.configMaps))
			}

			// The Service reaches the pods.
			var svc *corev1.Service
			for i := range r.services {
				if r.services[i].Name == "at-agent-tools" {
					svc = &r.services[i]
				}
			}
			if svc == nil || !mapsSubset(svc.Spec.Selector, labels) || svc.Spec.Ports[0].TargetPort.StrVal != c.Ports[0].Name {
				t.Errorf("service does not reach the pods: %+v", svc)
			}

			if got := len(r.hpas) == 1; got != tc.hpa {
				t.Errorf("HPA rendered %v, want %v", got, tc.hpa)
			} else if tc.hpa && (r.hpas[0].Spec.ScaleTargetRef.Name != dep.Name || r.hpas[0].Spec.MinReplicas == nil || *r.hpas[0].Spec.MinReplicas < 2) {
				t.Errorf("hpa = %+v", r.hpas[0].Spec)
			}
			if got := len(r.pdbs) == 1; got != tc.pdb {
				t.Errorf("PDB rendered %v, want %v", got, tc.pdb)
			} else if tc.pdb {
				p := r.pdbs[0].Spec
				if !mapsSubset(p.Selector.MatchLabels, labels) || (p.MinAvailable == nil) == (p.MaxUnavailable == nil) {
					t.Errorf("pdb = %+v", p)
				}
			}
			if got := len(r.networkPolicies) > 0; got != tc.netpo {
				t.Errorf("NetworkPolicy rendered %v, want %v", got, tc.netpo)
			} else if tc.netpo {
				np := r.networkPolicies[0]
				if !mapsSubset(np.Spec.PodSelector.MatchLabels, labels) || len(np.Spec.Ingress) != 1 || np.Spec.Ingress[0].Ports[0].Port.StrVal != "http" {
					t.Errorf("networkpolicy = %+v", np.Spec)
				}
				if tc.redis == "bundled" && len(r.networkPolicies) != 2 {
					t.Errorf("the bundled Redis has no NetworkPolicy of its own")
				}
				if len(np.Spec.Egress) > 0 && np.Spec.Egress[0].Ports[0].Port.IntValue() != 53 {
					t.Errorf("egress starts with DNS: %+v", np.Spec.Egress)
				}
			}
			if got := len(r.ingresses) == 1; got != tc.ingress {
				t.Errorf("Ingress rendered %v, want %v", got, tc.ingress)
			} else if tc.ingress && !strings.Contains(r.ingresses[0].Annotations["nginx.ingress.kubernetes.io/upstream-hash-by"], "mcp_session_id") {
				t.Errorf("ingress must hash on Mcp-Session-Id: %+v", r.ingresses[0].Annotations)
			}
			if sa := pod.ServiceAccountName; sa == "" || (tc.name != "external" && len(r.serviceAccounts) != 1) {
				t.Errorf("service account %q, %d made", sa, len(r.serviceAccounts))
			}
		})
	}
}

// TestHelmValuesSchema: typos and wrong types in values fail before any
// template runs.
func TestHelmValuesSchema(t *testing.T) {
	ch, err := loader.Load(chartDir)
	if err != nil {
		t.Fatal(err)
	}
	for name, bad := range map[string]string{
		"unknown key":           "replicas: 3",
		"typo in a section":     "autoscaling: {enable: true}",
		"secret without a key":  "secretEnv: {EXTRA_TOKEN: {name: agent-tools}}",
		"password in a url":     "redis: {external: {url: 'redis://:hunter2@redis:6379/0'}}",
		"no config at all":      "config: {inline: '', existingConfigMap: ''}",
		"bad env name":          "secretEnv: {'BAD-NAME': {name: s, key: k}}",
		"service port too high": "service: {port: 70000}",
	} {
		t.Run(name, func(t *testing.T) {
			vals, err := chartutil.ReadValues([]byte(bad))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := chartutil.ToRenderValues(ch, vals, chartutil.ReleaseOptions{Name: "at", Namespace: "tools"}, chartutil.DefaultCapabilities); err == nil {
				t.Errorf("%s: accepted", bad)
			}
		})
	}
}

// TestHelmChartMatchesKustomize: the chart's defaults say what the
// kustomize manifests say about the container (image entrypoint args,
// port, probes' paths), so the two ways to install do not drift.
func TestHelmChartMatchesKustomize(t *testing.T) {
	k := load(t).deployments
	var kc corev1.Container
	for _, d := range k {
		if d.Name == "agent-tools" {
			kc = d.Spec.Template.Spec.Containers[0]
		}
	}
	hc := render(t, chartDir+"/ci/full-values.yaml").deployment(t, "at-agent-tools").Spec.Template.Spec.Containers[0]
	if !slices.Equal(kc.Args, hc.Args) || kc.Ports[0].ContainerPort != hc.Ports[0].ContainerPort ||
		kc.ReadinessProbe.HTTPGet.Path != hc.ReadinessProbe.HTTPGet.Path || kc.LivenessProbe.HTTPGet.Path != hc.LivenessProbe.HTTPGet.Path {
		t.Errorf("kustomize %q %v, helm %q %v", kc.Args, kc.Ports, hc.Args, hc.Ports)
	}
	ch, err := loader.Load(chartDir)
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`^\d+\.\d+\.\d+$`).MatchString(ch.Metadata.Version) {
		t.Errorf("chart version %q is not semver", ch.Metadata.Version)
	}
}

func hasEnvValue(env []corev1.EnvVar, name, value string) bool {
	return slices.ContainsFunc(env, func(e corev1.EnvVar) bool { return e.Name == name && e.Value == value })
}

func hasEnvSecret(env []corev1.EnvVar, name, secret, key string) bool {
	return slices.ContainsFunc(env, func(e corev1.EnvVar) bool {
		return e.Name == name && e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil && e.ValueFrom.SecretKeyRef.Name == secret && e.ValueFrom.SecretKeyRef.Key == key
	})
}
