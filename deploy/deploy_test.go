// Package deploy holds the container image recipe and the Kubernetes
// manifests; this test decodes every manifest strictly into the Kubernetes
// API types and checks that they agree with each other and with agent-tools.
package deploy

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"sigs.k8s.io/yaml"

	"github.com/agent-tools/agent-tools/internal/config"
	_ "github.com/agent-tools/agent-tools/internal/provider/kinds" // the kinds a config may name
)

type manifests struct {
	deployments []appsv1.Deployment
	services    []corev1.Service
	configMaps  []corev1.ConfigMap
	secrets     []corev1.Secret
	ingresses   []networkingv1.Ingress
	hpas        []autoscalingv2.HorizontalPodAutoscaler
	files       []string
}

// load decodes every document of every kubernetes/*.yaml file, rejecting
// unknown fields (a typo in a manifest fails here, not in a cluster).
func load(t *testing.T) manifests {
	t.Helper()
	paths, err := filepath.Glob("kubernetes/*.yaml")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no manifests: %v", err)
	}
	var m manifests
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		m.files = append(m.files, filepath.Base(p))
		for i, doc := range bytes.Split(data, []byte("\n---\n")) {
			var head struct{ Kind string }
			if err := yaml.Unmarshal(doc, &head); err != nil {
				t.Fatalf("%s[%d]: %v", p, i, err)
			}
			strict := func(v any) {
				if err := yaml.UnmarshalStrict(doc, v); err != nil {
					t.Fatalf("%s[%d] (%s): %v", p, i, head.Kind, err)
				}
			}
			switch head.Kind {
			case "Deployment":
				var d appsv1.Deployment
				strict(&d)
				m.deployments = append(m.deployments, d)
			case "Service":
				var s corev1.Service
				strict(&s)
				m.services = append(m.services, s)
			case "ConfigMap":
				var c corev1.ConfigMap
				strict(&c)
				m.configMaps = append(m.configMaps, c)
			case "Secret":
				var s corev1.Secret
				strict(&s)
				m.secrets = append(m.secrets, s)
			case "Ingress":
				var in networkingv1.Ingress
				strict(&in)
				m.ingresses = append(m.ingresses, in)
			case "HorizontalPodAutoscaler":
				var h autoscalingv2.HorizontalPodAutoscaler
				strict(&h)
				m.hpas = append(m.hpas, h)
			case "Kustomization":
			default:
				t.Fatalf("%s[%d]: unexpected kind %q", p, i, head.Kind)
			}
		}
	}
	return m
}

func TestManifests(t *testing.T) {
	m := load(t)
	var dep *appsv1.Deployment
	for i := range m.deployments {
		if m.deployments[i].Name == "agent-tools" {
			dep = &m.deployments[i]
		}
	}
	if dep == nil {
		t.Fatal("no agent-tools Deployment")
	}
	c := dep.Spec.Template.Spec.Containers[0]
	if c.ReadinessProbe == nil || c.ReadinessProbe.HTTPGet.Path != "/readyz" || c.LivenessProbe == nil || c.LivenessProbe.HTTPGet.Path != "/healthz" {
		t.Errorf("probes must be /readyz and /healthz: %+v %+v", c.ReadinessProbe, c.LivenessProbe)
	}
	if !slices.Contains(c.Args, "--http") || !slices.Contains(c.Args, "0.0.0.0:8321") {
		t.Errorf("args = %q", c.Args)
	}
	var replicaEnv bool
	for _, e := range c.Env {
		replicaEnv = replicaEnv || (e.Name == "AGENT_TOOLS_REPLICA_ID" && e.ValueFrom != nil && e.ValueFrom.FieldRef.FieldPath == "metadata.name")
	}
	if !replicaEnv {
		t.Error("AGENT_TOOLS_REPLICA_ID must come from the pod name")
	}
	if sel := dep.Spec.Selector.MatchLabels; !mapsSubset(sel, dep.Spec.Template.Labels) {
		t.Errorf("selector %v does not match the pod labels", sel)
	}

	// The Service selects the pods and targets the container's port.
	var svc *corev1.Service
	for i := range m.services {
		if m.services[i].Name == "agent-tools" {
			svc = &m.services[i]
		}
	}
	if svc == nil || !mapsSubset(svc.Spec.Selector, dep.Spec.Template.Labels) || svc.Spec.Ports[0].TargetPort.StrVal != c.Ports[0].Name {
		t.Errorf("service does not reach the pods: %+v", svc)
	}

	// Every variable the config references is provided by the Secret or the pod.
	if len(m.configMaps) != 1 || len(m.secrets) != 1 {
		t.Fatalf("want one ConfigMap and one Secret, got %d and %d", len(m.configMaps), len(m.secrets))
	}
	provided := map[string]string{"AGENT_TOOLS_REPLICA_ID": "pod-0"}
	for k, v := range m.secrets[0].StringData {
		provided[k] = v
	}
	cfgText := m.configMaps[0].Data["agent-tools.yaml"]
	cfg, err := config.Parse("/etc/agent-tools/agent-tools.yaml", []byte(cfgText), func(k string) (string, bool) {
		v, ok := provided[k]
		return v, ok
	})
	if err != nil {
		t.Fatalf("the ConfigMap's agent-tools.yaml does not load:\n%v", err)
	}
	if cfg.Server.Redis.URL == "" || cfg.Server.ClusterKey == "" || !cfg.Server.HTTP.AuthConfigured() {
		t.Errorf("a cluster config needs redis, a cluster key and auth: %+v", cfg.Server)
	}
	for _, mnt := range c.VolumeMounts {
		if mnt.Name == "config" && mnt.MountPath != "/etc/agent-tools" {
			t.Errorf("config mounted at %s, args read /etc/agent-tools", mnt.MountPath)
		}
	}

	// Sticky sessions hash on the session header; the HPA scales this Deployment.
	if len(m.ingresses) != 1 || !strings.Contains(m.ingresses[0].Annotations["nginx.ingress.kubernetes.io/upstream-hash-by"], "mcp_session_id") {
		t.Errorf("ingress must hash on Mcp-Session-Id: %+v", m.ingresses)
	}
	if len(m.hpas) != 1 || m.hpas[0].Spec.ScaleTargetRef.Name != dep.Name || m.hpas[0].Spec.MinReplicas == nil || *m.hpas[0].Spec.MinReplicas < 2 {
		t.Errorf("hpa = %+v", m.hpas)
	}

	// The kustomization lists every manifest.
	k, _ := os.ReadFile("kubernetes/kustomization.yaml")
	for _, f := range m.files {
		if f != "kustomization.yaml" && !strings.Contains(string(k), f) {
			t.Errorf("kustomization.yaml does not list %s", f)
		}
	}
}

func TestDockerfile(t *testing.T) {
	b, err := os.ReadFile("Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	for _, want := range []string{"FROM scratch", "COPY agent-tools /agent-tools", "USER 65532", `ENTRYPOINT ["/agent-tools"]`, "EXPOSE 8321"} {
		if !strings.Contains(s, want) {
			t.Errorf("Dockerfile lacks %q", want)
		}
	}
	if strings.Count(s, "\nFROM ") != 1 {
		t.Error("the image is built from a binary made with go build, not in a builder stage (no base image can be pulled)")
	}
}

func mapsSubset(sub, super map[string]string) bool {
	if len(sub) == 0 {
		return false
	}
	for k, v := range sub {
		if super[k] != v {
			return false
		}
	}
	return true
}
