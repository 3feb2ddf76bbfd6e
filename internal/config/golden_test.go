package config_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agent-tools/agent-tools/internal/config"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden")

// TestGolden parses every testdata/*.yaml and compares with its .golden:
// the error lines, or the normalised JSON of the config (absolute paths
// under the config directory shown as $DIR).
func TestGolden(t *testing.T) {
	files, err := filepath.Glob("testdata/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden inputs: %v", err)
	}
	for _, in := range files {
		t.Run(filepath.Base(in), func(t *testing.T) {
			data, err := os.ReadFile(in)
			if err != nil {
				t.Fatal(err)
			}
			var got []byte
			c, err := config.Parse(filepath.ToSlash(in), data, lookup)
			if err != nil {
				got = []byte(err.Error() + "\n")
			} else {
				if err := c.Validate(); err != nil {
					t.Errorf("re-Validate: %v", err)
				}
				j, err := json.MarshalIndent(c, "", "  ")
				if err != nil {
					t.Fatal(err)
				}
				got = append(bytes.ReplaceAll(j, []byte(c.Dir), []byte("$DIR")), '\n')
			}
			golden := strings.TrimSuffix(in, ".yaml") + ".golden"
			if *update {
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -run TestGolden -update)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("got:\n%s\nwant:\n%s", got, want)
			}
		})
	}
}
