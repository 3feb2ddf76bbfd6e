package jsrun

import (
	"runtime"
	"strings"
	"testing"
)

// Every system's list names the three settings, says which it cannot set,
// and names the mechanism it uses; this system's list agrees with whether
// scripts run in a limited process here.
func TestProcessLimits(t *testing.T) {
	tests := []struct {
		goos     string
		isolated bool
		mentions []string // in the description, in order
	}{
		{"linux", true, []string{"code.memory", "RLIMIT_AS", "code.cpu", "RLIMIT_CPU", "code.timeout", "RLIMIT_NOFILE"}},
		{"android", true, []string{"RLIMIT_AS"}},
		{"darwin", true, []string{"code.memory", "no address-space backstop", "code.cpu", "RLIMIT_CPU", "code.timeout"}},
		{"freebsd", true, []string{"RLIMIT_CPU"}},
		{"windows", true, []string{"code.memory", "JOB_OBJECT_LIMIT_PROCESS_MEMORY", "code.cpu", "JOB_OBJECT_LIMIT_JOB_TIME", "code.timeout",
			"JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE", "JOB_OBJECT_LIMIT_ACTIVE_PROCESS"}},
		{"plan9", false, []string{"inside the server", "code.memory: cannot be set", "code.cpu: cannot be set", "code.timeout"}},
		{"js", false, []string{"code.memory: cannot be set"}},
	}
	for _, tc := range tests {
		t.Run(tc.goos, func(t *testing.T) {
			limits := processLimits(tc.goos)
			in := map[string]bool{}
			for _, l := range limits {
				in[l.Setting] = l.InForce
				if l.How == "" {
					t.Errorf("%s: no description", l.Setting)
				}
			}
			for _, s := range []string{"code.memory", "code.cpu", "code.timeout"} {
				force, ok := in[s]
				if !ok {
					t.Errorf("%s missing", s)
				}
				if want := tc.isolated || s == "code.timeout"; force != want {
					t.Errorf("%s in force: %v, want %v", s, force, want)
				}
			}
			text := describeLimits(tc.goos)
			if strings.HasPrefix(text, "each script runs in its own process") != tc.isolated {
				t.Errorf("description %q", text)
			}
			rest := text
			for _, m := range tc.mentions {
				i := strings.Index(rest, m)
				if i < 0 {
					t.Fatalf("%q does not mention %q (in order)", text, m)
				}
				rest = rest[i+len(m):]
			}
		})
	}
	ok, how := isolation()
	if limitFamily(runtime.GOOS) != "" != ok || how != describeLimits(runtime.GOOS) {
		t.Errorf("here (%s): isolation %v %q, limits %+v", runtime.GOOS, ok, how, ProcessLimits())
	}
}
