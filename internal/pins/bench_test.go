package pins

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/agent-tools/agent-tools/internal/catalog"
)

// BenchmarkWarmStart10k is what pinning adds to a warm start with 10,000
// upstream tools (bench/startup's shape): the digests, reading the pins
// (from the index, the file's bytes checked against it), and checking the
// cached list against them. NoIndex reads and parses the file instead.
func BenchmarkWarmStart10k(b *testing.B) {
	b.Run("index", func(b *testing.B) { benchWarm(b, true) })
	b.Run("NoIndex", func(b *testing.B) { benchWarm(b, false) })
}

func benchWarm(b *testing.B, indexed bool) {
	tools := make([]catalog.Tool, 10000)
	for i := range tools {
		name := fmt.Sprintf("issue_repo_%d", i)
		tools[i] = catalog.Tool{Provider: "big", Name: name, Canonical: "big_" + name,
			Description: fmt.Sprintf("Issue the repo of a branch (generated tool %d).", i),
			InputSchema: json.RawMessage(`{"properties":{"id":{"description":"the repo id","type":"string"},"limit":{"description":"at most this many","type":"integer"}},"required":["id"],"type":"object"}`)}
		tools[i].Digest = tools[i].Def().Digest()
	}
	dir := b.TempDir()
	path, index := filepath.Join(dir, FileName), ""
	if indexed {
		index = filepath.Join(dir, "index", "pins.idx")
	}
	s, _ := OpenIndexed(path, index, Warn, nil)
	s.ObserveBatch(Batch{Tools: tools})
	b.ReportAllocs()
	for b.Loop() {
		for i := range tools {
			tools[i].Digest = tools[i].Def().Digest()
		}
		s, err := OpenIndexed(path, index, Warn, nil)
		if err != nil {
			b.Fatal(err)
		}
		if (s.lazy != nil) != indexed {
			b.Fatal("index not used")
		}
		if held := s.ObserveBatch(Batch{Tools: tools, Cached: true}); len(held) != 0 {
			b.Fatal(held)
		}
	}
}
