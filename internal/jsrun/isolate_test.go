package jsrun

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// testLimits keeps the children small, so a failing bomb cannot hurt the machine.
var testLimits = Limits{Timeout: 5 * time.Second, Memory: 128 << 20, CPU: 3 * time.Second}

func isolatedPool(t *testing.T) *Pool {
	t.Helper()
	if ok, why := Isolation(); !ok {
		t.Skip("no isolation here: " + why)
	}
	p := NewPool(1)
	t.Cleanup(p.Close)
	return p
}

func TestIsolatedRunsAScript(t *testing.T) {
	p := isolatedPool(t)
	out, err := p.Run(context.Background(), Script{Code: "console.log('hi'); [1,2,3].map(x => x * 2)", Limits: testLimits}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if string(out.Result) != "[2,4,6]" || len(out.Console) != 1 || out.Console[0].Text != "hi" {
		t.Fatalf("got %s %+v", out.Result, out.Console)
	}
	_, err = p.Run(context.Background(), Script{Code: "null.x", Limits: testLimits}, nil)
	var je *Error
	if !errors.As(err, &je) || je.Kind != KindException || !strings.Contains(je.Message, "TypeError") || je.Line != 1 {
		t.Fatalf("got %#v", err)
	}
}

func TestIsolatedChildEnvironment(t *testing.T) {
	// The child sees no environment: the test checks from the outside that
	// a script cannot learn anything (there is no process object) and that
	// the child process itself was started with an empty environment.
	p := isolatedPool(t)
	t.Setenv("AGENT_TOOLS_SECRET_PROBE", "s3cret")
	out, err := p.Run(context.Background(), Script{Code: "typeof process + typeof require", Limits: testLimits}, nil)
	if err != nil || string(out.Result) != `"undefinedundefined"` {
		t.Fatalf("%s %v", out.Result, err)
	}
	c, err := startChild()
	if err != nil {
		t.Fatal(err)
	}
	defer c.kill()
	if c.cmd.Env == nil || len(c.cmd.Env) != 0 || len(c.cmd.ExtraFiles) != 0 {
		t.Fatalf("child env %v, extra files %d", c.cmd.Env, len(c.cmd.ExtraFiles))
	}
	// From the outside, where the system shows it: no environment, and no
	// descriptor that is not its own (its pipes and the runtime's poller).
	pid := strconv.Itoa(c.cmd.Process.Pid)
	env, err := os.ReadFile("/proc/" + pid + "/environ")
	if err != nil {
		t.Skip("no /proc here: " + err.Error())
	}
	if len(env) != 0 {
		t.Fatalf("the child's environment: %q", env)
	}
	fds, err := os.ReadDir("/proc/" + pid + "/fd")
	if err != nil {
		t.Fatal(err)
	}
	for _, fd := range fds {
		target, _ := os.Readlink("/proc/" + pid + "/fd/" + fd.Name())
		// The Go runtime itself keeps the cgroup's CPU quota files open (it
		// re-reads them for GOMAXPROCS): read-only, opened by the child.
		own := strings.HasPrefix(target, "pipe:") || strings.HasPrefix(target, "anon_inode:") || strings.HasPrefix(target, "/sys/fs/cgroup/")
		if !own {
			t.Errorf("the child holds fd %s → %s", fd.Name(), target)
		}
	}
}

func TestIsolatedHostCalls(t *testing.T) {
	p := isolatedPool(t)
	in := "echo"
	registerEcho()
	host := func(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
		if method != in {
			return nil, errors.New("unknown method")
		}
		return params, nil
	}
	out, err := p.Run(context.Background(), Script{Kind: "test-echo", Code: `echo({a: 1}).a + echo({a: 2}).a`, Limits: testLimits}, host)
	if err != nil || string(out.Result) != "3" {
		t.Fatalf("%v %v", out, err)
	}
}

// Asynchronous host calls (Host.Start) settle their Promises in a child and
// in process alike: overlapping, failing, or left unawaited.
func TestHostStart(t *testing.T) {
	registerEcho()
	host := func(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
		if string(params) == `"fail"` {
			return nil, errors.New("refused")
		}
		return params, nil
	}
	tests := []struct{ code, want string }{
		{`const [a, b] = await Promise.all([later(1), later(2)]); a + b + echo(3)`, `6`},
		{`try { await later("fail") } catch (e) { return e.message }`, `"refused"`},
		{`later(1); later(2); 5`, `5`},
		{`let n = 0; for (let i = 0; i < 50; i++) n += await later(i); n`, `1225`},
	}
	for _, r := range []struct {
		name string
		r    Runner
	}{{"isolated", nil}, {"in process", InProcess}} {
		runner := r.r
		if runner == nil {
			if ok, _ := Isolation(); !ok {
				continue
			}
			p := NewPool(1)
			defer p.Close()
			runner = p
		}
		for _, tc := range tests {
			out, err := runner.Run(context.Background(), Script{Kind: "test-echo", Code: tc.code, Limits: testLimits}, host)
			if err != nil || string(out.Result) != tc.want {
				t.Errorf("%s: %s: %v %v, want %s", r.name, tc.code, out, err, tc.want)
			}
		}
	}
}

// A child whose server went away (its stdin ends) exits by itself.
func TestChildExitsWithoutItsParent(t *testing.T) {
	if ok, why := Isolation(); !ok {
		t.Skip(why)
	}
	c, err := startChild()
	if err != nil {
		t.Fatal(err)
	}
	c.in.Close()
	select {
	case <-c.exited:
	case <-time.After(10 * time.Second):
		c.kill()
		t.Fatal("the child outlived its stdin")
	}
	if code, sig := exitCause(c.state); code != exitProtocol || sig != "" {
		t.Fatalf("exit %d %q, want %d", code, sig, exitProtocol)
	}
	c.outF.Close()
}

// A warm child that died while waiting is not handed a script.
func TestPoolSkipsDeadChild(t *testing.T) {
	p := isolatedPool(t)
	if err := p.Warm(context.Background()); err != nil {
		t.Fatal(err)
	}
	p.mu.Lock()
	dead := p.idle[0]
	p.mu.Unlock()
	killChild(dead.cmd)
	<-dead.exited
	out, err := p.Run(context.Background(), Script{Code: "6 * 7", Limits: testLimits}, nil)
	if err != nil || string(out.Result) != "42" {
		t.Fatalf("%v %v", out, err)
	}
}

// With ProfileEnv set, a script's process writes its CPU profile there.
func TestChildProfile(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(ProfileEnv, dir)
	p := isolatedPool(t)
	if out, err := p.Run(context.Background(), Script{Code: "let n = 0; for (let i = 0; i < 1e5; i++) n += i; n", Limits: testLimits}, nil); err != nil || string(out.Result) != "4999950000" {
		t.Fatalf("%v %v", out, err)
	}
	p.Close()
	files, _ := os.ReadDir(dir)
	for _, f := range files {
		if info, err := f.Info(); err == nil && strings.HasPrefix(f.Name(), "jsrun-") && info.Size() > 0 {
			return
		}
	}
	t.Fatalf("no profile in %s: %v", dir, files)
}
