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
// file, and checking the cached list against it.
func BenchmarkWarmStart10k(b *testing.B) {
	tools := make([]catalog.Tool, 10000)
	for i := range tools {
		name := fmt.Sprintf("issue_repo_%d", i)
		tools[i] = catalog.Tool{Provider: "big", Name: name, Canonical: "big_" + name,
			Description: fmt.Sprintf("Issue the repo of a branch (generated tool %d).", i),
			InputSchema: json.RawMessage(`{"properties":{"id":{"description":"the repo id","type":"string"},"limit":{"description":"at most this many","type":"integer"}},"required":["id"],"type":"object"}`)}
		tools[i].Digest = tools[i].Def().Digest()
	}
	path := filepath.Join(b.TempDir(), FileName)
	s, _ := Open(path, Warn, nil)
	s.ObserveBatch(Batch{Tools: tools})
	b.ResetTimer()
	for range b.N {
		for i := range tools {
			tools[i].Digest = tools[i].Def().Digest()
		}
		s, err := Open(path, Warn, nil)
		if err != nil {
			b.Fatal(err)
		}
		if held := s.ObserveBatch(Batch{Tools: tools, Cached: true}); len(held) != 0 {
			b.Fatal(held)
		}
	}
}
