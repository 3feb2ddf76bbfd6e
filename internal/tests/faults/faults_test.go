package faults

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// want is what a faulty call must give: one of codes ("" = a success).
func want(t *testing.T, o outcome, codes ...string) string {
	t.Helper()
	got := o.code
	if !o.isError {
		got = ""
	}
	if !slices.Contains(codes, got) {
		t.Fatalf("got code %q (%.300s), want one of %q", got, o.text, codes)
	}
	if got == "" {
		return "success"
	}
	if !codeRE.MatchString(o.code) || strings.TrimSpace(o.message) == "" {
		t.Fatalf("error without code or reason: %.300s", o.text)
	}
	return got
}

// eventuallyOK retries name until it succeeds (an upstream being restarted).
func eventuallyOK(t *testing.T, r *runtime, name, prefix string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for attempt := 0; ; attempt++ {
		// Each try differs in its arguments: identical failing calls would
		// trip the loop guard (refused for a minute) while a slow machine
		// is still restarting the upstream; recovery is what is tested here.
		o := r.callWith(name, 10*time.Second, map[string]any{"attempt": attempt})
		if !o.isError && strings.HasPrefix(o.text, prefix) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never worked again: %+v", name, o)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

type fault struct {
	name  string
	tries int
	run   func(t *testing.T, r *runtime) string // returns the outcome for the table
}

var faults = []fault{
	{"stdio upstream crashes mid-call, printing its env and argv", 2, func(t *testing.T, r *runtime) string {
		o := r.call(r.tool("up_crash"), 20*time.Second)
		code := want(t, o, "PROVIDER_UNAVAILABLE")
		eventuallyOK(t, r, r.tool("up_echo"), "echo-ok")
		return code + ", restarted"
	}},
	{"stdio upstream hangs one call (pings answered)", 1, func(t *testing.T, r *runtime) string {
		code := want(t, r.call(r.tool("up_hang"), 20*time.Second), "TIMEOUT")
		if o := r.call(r.tool("up_echo"), 10*time.Second); o.isError {
			t.Fatalf("a healthy upstream was not kept: %+v", o)
		}
		return code + ", upstream kept"
	}},
	{"stdio upstream stops reading its input", 1, func(t *testing.T, r *runtime) string {
		code := want(t, r.call(r.tool("raw_stopread"), 20*time.Second), "TIMEOUT")
		eventuallyOK(t, r, r.tool("raw_echo"), "raw-ok")
		return code + ", ping failed, recycled"
	}},
	{"stdio upstream floods 50 MB", 1, func(t *testing.T, r *runtime) string {
		// Producing and discarding 50 MB can outlast the 6 s deadline.
		code := want(t, r.call(r.tool("up_flood"), 30*time.Second), "BACKEND_ERROR", "PROVIDER_UNAVAILABLE", "TIMEOUT")
		eventuallyOK(t, r, r.tool("up_echo"), "echo-ok")
		return code + ", upstream usable again"
	}},
	{"stdio upstream prints junk on stdout", 2, func(t *testing.T, r *runtime) string {
		o := r.call(r.tool("raw_junk"), 10*time.Second)
		want(t, o, "")
		if o.text != "raw-ok" {
			t.Fatalf("junk reached the result: %q", o.text)
		}
		return "success with the real answer"
	}},
	{"stdio upstream answers with malformed JSON", 2, func(t *testing.T, r *runtime) string {
		return want(t, r.call(r.tool("raw_malformed"), 20*time.Second), "BACKEND_ERROR", "PROVIDER_UNAVAILABLE", "TIMEOUT")
	}},
	{"stdio upstream answers with a wrong reply id", 1, func(t *testing.T, r *runtime) string {
		return want(t, r.call(r.tool("raw_wrongid"), 20*time.Second), "TIMEOUT", "BACKEND_ERROR")
	}},
	{"stdio upstream sends a 20 MB line", 1, func(t *testing.T, r *runtime) string {
		code := want(t, r.call(r.tool("raw_bigline"), 30*time.Second), "BACKEND_ERROR", "PROVIDER_UNAVAILABLE", "TIMEOUT")
		eventuallyOK(t, r, r.tool("raw_echo"), "raw-ok")
		return code
	}},
	{"stdio upstream echoes secrets from env and argv", 2, func(t *testing.T, r *runtime) string {
		o := r.call(r.tool("up_secrets"), 10*time.Second)
		want(t, o, "")
		if !strings.Contains(o.text, "[redacted: FAULTS_ENV_SECRET]") || !strings.Contains(o.text, "[redacted: FAULTS_ARG_SECRET]") {
			t.Fatalf("secrets not replaced by their names: %q", o.text)
		}
		if strings.Contains(o.text, "${") {
			t.Fatalf("a redacted value reads as a reference that never ran: %q", o.text)
		}
		return "success, values shown as [redacted: VAR]"
	}},
	{"HTTP upstream echoes the Authorization header", 2, func(t *testing.T, r *runtime) string {
		o := r.call(r.tool("web_whoami"), 10*time.Second)
		code := want(t, o, "BACKEND_ERROR")
		if !strings.Contains(o.text, "[redacted: FAULTS_HDR_SECRET]") {
			t.Fatalf("token not replaced by its name: %q", o.text)
		}
		return code + ", token shown as [redacted: VAR]"
	}},
	{"stdio upstream exits at start, printing its secrets", 1, func(t *testing.T, r *runtime) string {
		return "no tools; " + status(t, r, "gone")
	}},
	{"stdio upstream never answers initialize", 1, func(t *testing.T, r *runtime) string {
		return "no tools; " + status(t, r, "mute")
	}},
	{"HTTP upstream unreachable, secrets in userinfo, path and query", 1, func(t *testing.T, r *runtime) string {
		return "no tools; " + status(t, r, "dead")
	}},
	{"script leaves a background job", 2, func(t *testing.T, r *runtime) string {
		before := len(pids(t, dirOf(r)))
		want(t, r.call(r.tool("background"), 10*time.Second), "")
		return "success; " + reaped(t, r, before)
	}},
	{"script leaves a setsid child holding its stdout", 2, func(t *testing.T, r *runtime) string {
		before := len(pids(t, dirOf(r)))
		o := r.call(r.tool("detached"), 10*time.Second)
		if o.isError && !strings.Contains(o.text, "output_incomplete") {
			t.Fatalf("want success or output_incomplete: %q", o.text)
		}
		out := "success"
		if o.isError {
			out = o.code + " (output_incomplete)"
		}
		return out + "; " + reaped(t, r, before)
	}},
	{"script times out, leaving a setsid child", 1, func(t *testing.T, r *runtime) string {
		before := len(pids(t, dirOf(r)))
		code := want(t, r.call(r.tool("slow"), 20*time.Second), "TIMEOUT")
		return code + "; " + reaped(t, r, before)
	}},
	{"upstream leaves background and setsid children", 1, func(t *testing.T, r *runtime) string {
		want(t, r.call(r.tool("up_spawn"), 10*time.Second), "")
		want(t, r.call(r.tool("up_spawnsetsid"), 10*time.Second), "")
		return "success; children killed when the runtime exits"
	}},
}

// dirOf is the project directory of the running suite.
func dirOf(*runtime) string { return os.Getenv("FAULTS_DIR") }

// reaped checks that the processes a script call left (pids logged since
// before) are gone right after the call.
func reaped(t *testing.T, r *runtime, before int) string {
	t.Helper()
	all := pids(t, dirOf(r))
	if len(all) <= before {
		t.Fatal("the script logged no child pid")
	}
	if left := survivors(all[before:]); len(left) > 0 {
		t.Fatalf("children outlived the call: %v", left)
	}
	return "children gone after the call"
}

// status asks the runtime about a provider that has no tools: the answer
// must say it is not available, and why.
func status(t *testing.T, r *runtime, id string) string {
	t.Helper()
	o := r.call("runtime_status", 10*time.Second)
	if o.isError || !strings.Contains(o.text, id) {
		t.Fatalf("runtime_status does not report %s: %.500s", id, o.text)
	}
	return "reported by runtime_status and doctor"
}

func TestFaults(t *testing.T) {
	if _, err := os.Stat("/bin/sh"); err != nil {
		t.Skip("needs /bin/sh for the script cases")
	}
	p := newProject(t)
	r := serve(t, p)
	r.alive()
	for _, f := range faults {
		t.Run(f.name, func(t *testing.T) {
			var out string
			for i := range f.tries {
				out = f.run(t, r)
				if t.Failed() {
					return
				}
				r.alive() // the runtime stays up after each fault
				_ = i
			}
			record(f.name, f.tries, out)
		})
	}

	// Doctor, in both formats, while the runtime still runs.
	doctor := make([]string, 4)
	var wg sync.WaitGroup
	for i, args := range [][]string{{"doctor", "--config", p.config}, {"doctor", "--json", "--config", p.config}} {
		wg.Go(func() {
			out, errOut := &syncBuf{}, &syncBuf{}
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			if code := runCLI(ctx, p.env(strings.NewReader(""), out, errOut), args); code == 0 {
				t.Errorf("%v: exit 0 although providers failed", args)
			}
			doctor[2*i], doctor[2*i+1] = out.String(), errOut.String()
			for _, id := range []string{"gone", "dead"} {
				if !strings.Contains(out.String(), id) {
					t.Errorf("%v does not report %s:\n%s", args, id, out.String())
				}
			}
		})
	}
	wg.Wait()
	r.stop()

	// Nothing leaked, anywhere.
	noCanary(t, "results", strings.Join(r.texts, "\n"))
	noCanary(t, "stderr", r.stderr.String())
	audit, err := os.ReadFile(p.audit)
	if err != nil || len(audit) == 0 {
		t.Errorf("no audit log: %v", err)
	}
	noCanary(t, "audit", string(audit))
	noCanary(t, "doctor", strings.Join(doctor, "\n"))
	if !strings.Contains(strings.Join(doctor, "\n"), "containment") {
		t.Error("doctor does not say which containment is in force")
	}

	// No child survives the runtime (upstreams, their children, scripts').
	all := pids(t, p.dir)
	if left := survivors(all); len(left) > 0 {
		t.Errorf("%d of %d processes outlived the runtime: %v", len(left), len(all), left)
	}
	record("no secret canary in results, stderr, audit, doctor", 1, fmt.Sprintf("%d results, %d KB of logs checked", len(r.texts), len(r.stderr.String())>>10))
	record("no child survives the runtime", 1, strconv.Itoa(len(all))+" processes started, 0 left")
}
