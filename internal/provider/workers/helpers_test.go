package workers

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agent-tools/agent-tools/internal/catalog"
	"github.com/agent-tools/agent-tools/internal/config"
	"github.com/agent-tools/agent-tools/internal/provider"
	"github.com/agent-tools/agent-tools/internal/toolerr"
)

func fake(t testing.TB, name string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("testdata", "fake-"+name))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// newRepo makes a git repository with one commit of the given files.
func newRepo(t testing.TB, files map[string]string) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	dir := t.TempDir()
	dir, _ = filepath.EvalSymlinks(dir)
	for name, body := range files {
		writeFile(t, dir, name, body)
	}
	gitIn(t, dir, "init", "-q", "-b", "main")
	gitIn(t, dir, "add", "-A")
	gitIn(t, dir, "-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "-q", "--allow-empty", "-m", "init")
	return dir
}

func writeFile(t testing.TB, dir, name, body string) {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

func gitIn(t testing.TB, dir string, args ...string) string {
	t.Helper()
	out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

type opt func(*config.Provider, *Spec, *provider.Deps)

func withEnv(k, v string) opt {
	return func(_ *config.Provider, _ *Spec, d *provider.Deps) {
		prev := d.Env
		d.Env = func(name string) (string, bool) {
			if name == k {
				return v, true
			}
			return prev(name)
		}
	}
}

func newProvider(t testing.TB, preset, root string, opts ...opt) *Provider {
	t.Helper()
	pc := config.Provider{ID: preset, Kind: "workers", RequireConfirm: true, Enabled: true}
	spec := &Spec{Preset: preset, Command: fake(t, preset), Cwd: root}
	deps := provider.Deps{ProjectDir: root, Env: func(k string) (string, bool) {
		if k == "CODEX_HOME" || k == "HOME" {
			return filepath.Join(root, ".no-such-home"), true
		}
		return os.LookupEnv(k)
	}}
	for _, o := range opts {
		o(&pc, spec, &deps)
	}
	pc.Spec = spec
	p, err := New(provider.HeaderOf(pc), spec, deps)
	if err != nil {
		t.Fatal(err)
	}
	p.progressEvery = 20 * time.Millisecond
	t.Cleanup(func() { p.Close() })
	return p
}

func tool(name string) catalog.Tool { return catalog.Tool{Name: name} }

// call runs <id>_run; it returns the envelope (success/partial) or the error.
func call(t *testing.T, p *Provider, args map[string]any) (*result, *toolerr.Error) {
	t.Helper()
	b, _ := json.Marshal(args)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := p.Call(ctx, tool("run"), b)
	if err != nil {
		te, ok := toolerr.As(err)
		if !ok {
			t.Fatalf("non-envelope error: %v", err)
		}
		return nil, te
	}
	r, ok := res.Structured.(*result)
	if !ok {
		t.Fatalf("structured is %T", res.Structured)
	}
	return r, nil
}

func has(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func anyContains(list []string, sub string) bool {
	for _, x := range list {
		if strings.Contains(x, sub) {
			return true
		}
	}
	return false
}
