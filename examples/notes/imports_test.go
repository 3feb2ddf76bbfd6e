package notes_test

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestOnlyThePublicPackage: Go lets a module whose path lies under
// agent-tools' import agent-tools' internal packages, so the go.mod alone
// does not prove this module is what an outside author could write. This
// does: no file here, tests included, imports an internal package.
func TestOnlyThePublicPackage(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("no Go files: %v", err)
	}
	for _, name := range files {
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if strings.HasPrefix(path, "github.com/agent-tools/agent-tools/") && strings.Contains(path+"/", "/internal/") {
				t.Errorf("%s imports %s: an outside module could not", name, path)
			}
		}
	}
}
