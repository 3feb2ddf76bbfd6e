package quota

import (
	"testing"

	"github.com/agent-tools/agent-tools/internal/tokens"
)

// TestMain loads the tokenizer first: a result's tokens are then always
// the o200k_base count (tokens.Count estimates until it is loaded, which
// would make the token windows' tests depend on timing).
func TestMain(m *testing.M) {
	tokens.Load()
	m.Run()
}
