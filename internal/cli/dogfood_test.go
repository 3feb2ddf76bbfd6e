package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Regression: the dogfood `test` tool passed `-- "$pkg"`,
// so go test ignored the package it was asked to test. A fake `go` on PATH
// records the arguments the script passes.
func TestDogfoodTestToolPassesThePackage(t *testing.T) {
	script, err := filepath.Abs("../../.agents/tools/test")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(script); err != nil {
		t.Skipf("the dogfood script is not here: %v", err)
	}
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash is not installed")
	}
	bin := t.TempDir()
	out := filepath.Join(bin, "args")
	fake := "#!/bin/sh\nprintf '%s\\n' \"$@\" > " + out + "\n"
	if err := os.WriteFile(filepath.Join(bin, "go"), []byte(fake), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(script)
	cmd.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"),
		"AGENT_TOOLS_WORKDIR="+t.TempDir(), "AGENT_TOOLS_PARAM_PACKAGE=./internal/pipeline/...", "AGENT_TOOLS_PARAM_RUN=TestX")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("script failed: %v\n%s", err, b)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	args := strings.Fields(string(b))
	want := []string{"test", "-count=1", "-run", "TestX", "./internal/pipeline/..."}
	if strings.Join(args, " ") != strings.Join(want, " ") {
		t.Fatalf("go was run with %q, want %q", args, want)
	}
}
