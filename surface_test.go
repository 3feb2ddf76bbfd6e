package agenttools_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	agenttools "github.com/agent-tools/agent-tools"
	"github.com/agent-tools/agent-tools/internal/facade"
	"github.com/agent-tools/agent-tools/internal/policy"
)

// TestNoInternalInThePublicAPI: what go doc shows of the package (exported
// declarations, their exported fields and methods, the values of exported
// vars and consts) names no type or value of an internal package, which a
// program outside this module could not name.
func TestNoInternalInThePublicAPI(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		internal := map[string]bool{} // import names of internal packages
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if strings.Contains(path, "/internal/") {
				n := path[strings.LastIndex(path, "/")+1:]
				if imp.Name != nil {
					n = imp.Name.Name
				}
				internal[n] = true
			}
		}
		check := func(what string, n ast.Node) {
			if n == nil {
				return
			}
			ast.Inspect(n, func(n ast.Node) bool {
				switch x := n.(type) {
				case *ast.Field:
					if len(x.Names) > 0 && !x.Names[0].IsExported() {
						return false // an unexported field go doc does not show
					}
				case *ast.SelectorExpr:
					if id, ok := x.X.(*ast.Ident); ok && internal[id.Name] {
						t.Errorf("%s: %s names %s.%s", fset.Position(x.Pos()), what, id.Name, x.Sel.Name)
					}
				}
				return true
			})
		}
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if !d.Name.IsExported() || (d.Recv != nil && !exportedRecv(d.Recv)) {
					continue
				}
				check(d.Name.Name, d.Type)
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						if s.Name.IsExported() {
							check(s.Name.Name, s.Type)
						}
					case *ast.ValueSpec:
						for i, n := range s.Names {
							if !n.IsExported() {
								continue
							}
							check(n.Name, s.Type)
							if i < len(s.Values) {
								check(n.Name, s.Values[i])
							}
						}
					}
				}
			}
		}
	}
}

func exportedRecv(fl *ast.FieldList) bool {
	typ := fl.List[0].Type
	if st, ok := typ.(*ast.StarExpr); ok {
		typ = st.X
	}
	id, ok := typ.(*ast.Ident)
	return ok && id.IsExported()
}

// TestPublicValuesMatchTheRuntime: the public copies of the runtime's
// values are the runtime's.
func TestPublicValuesMatchTheRuntime(t *testing.T) {
	if agenttools.ConfirmArg != facade.ConfirmArg {
		t.Errorf("ConfirmArg = %q, the runtime reads %q", agenttools.ConfirmArg, facade.ConfirmArg)
	}
	for _, tc := range []struct {
		public   agenttools.Approval
		internal policy.Approval
	}{
		{agenttools.Declined, policy.Declined},
		{agenttools.ApprovedOnce, policy.ApprovedOnce},
		{agenttools.ApprovedForSession, policy.ApprovedForSession},
		{agenttools.ApprovedAlways, policy.ApprovedAlways},
	} {
		if int(tc.public) != int(tc.internal) {
			t.Errorf("Approval %d is policy's %d", tc.public, tc.internal)
		}
	}
}
