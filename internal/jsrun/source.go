package jsrun

import (
	"errors"
	"fmt"
	"strings"

	"github.com/dop251/goja"
	"github.com/dop251/goja/ast"
	"github.com/dop251/goja/parser"
)

// CheckSource reports why a source must not reach goja's parser ("" = it may):
// too long, brackets nested too deep, or too many arrow functions. The scan
// ignores strings and comments, so it errs on the side of refusing.
func CheckSource(src string) string {
	if len(src) > MaxSourceLen {
		return fmt.Sprintf("source is %d bytes; this sandbox parses at most %d", len(src), MaxSourceLen)
	}
	depth, arrows := 0, 0
	for i := 0; i < len(src); i++ {
		switch src[i] {
		case '(', '[', '{':
			depth++
			if depth > MaxNesting {
				return fmt.Sprintf("brackets nest deeper than %d levels; flatten the code", MaxNesting)
			}
		case ')', ']', '}':
			if depth > 0 {
				depth--
			}
		case '=':
			if i+1 < len(src) && src[i+1] == '>' {
				arrows++
				if arrows > MaxArrows {
					return fmt.Sprintf("more than %d arrow functions; simplify the code", MaxArrows)
				}
			}
		}
	}
	return ""
}

// asyncPrefix wraps code that uses top-level await or return; it sits on the
// first line so that line numbers stay those of the user's code.
const asyncPrefix = "(async () => {"

// compileMain compiles a program whose completion value is the result. Code
// that only parses inside a function (top-level await or return) is wrapped
// in an async arrow whose last expression statement is returned; the second
// result is the column shift of line 1.
func compileMain(name, code string) (*goja.Program, int, error) {
	if why := CheckSource(code); why != "" {
		return nil, 0, &Error{Kind: KindLimit, Message: "SyntaxError: " + why}
	}
	prg, err := Compile(name, code)
	if err == nil {
		return prg, 0, nil
	}
	if strings.Contains(code, "await") || strings.Contains(code, "return") {
		if wrapped, ok := wrapAsync(name, code); ok {
			if p, werr := Compile(name, wrapped); werr == nil {
				return p, len(asyncPrefix), nil
			}
		}
	}
	return nil, 0, err
}

// Compile parses and compiles a script (not a module) without running
// CheckSource. A failure is an *Error of KindSyntax with its position.
func Compile(name, src string) (*goja.Program, error) {
	tree, err := parser.ParseFile(nil, name, src, 0)
	if err != nil {
		return nil, syntaxError(err)
	}
	prg, err := goja.CompileAST(tree, false)
	if err != nil {
		return nil, syntaxError(err)
	}
	return prg, nil
}

// wrapAsync returns code inside an async arrow, with `return (...)` around
// its last statement when that is an expression.
func wrapAsync(name, code string) (string, bool) {
	src := asyncPrefix + code + "\n})()"
	prg, err := parser.ParseFile(nil, name, src, 0)
	if err != nil || len(prg.Body) != 1 {
		return "", false
	}
	es, ok := prg.Body[0].(*ast.ExpressionStatement)
	if !ok {
		return "", false
	}
	call, ok := es.Expression.(*ast.CallExpression)
	if !ok {
		return "", false
	}
	fn, ok := call.Callee.(*ast.ArrowFunctionLiteral)
	if !ok {
		return "", false
	}
	body, ok := fn.Body.(*ast.BlockStatement)
	if !ok || len(body.List) == 0 {
		return src, true
	}
	last, ok := body.List[len(body.List)-1].(*ast.ExpressionStatement)
	if !ok {
		return src, true
	}
	start, end := int(last.Idx0())-1, int(last.Idx1())-1
	if start < len(asyncPrefix) || end <= start || end > len(src) {
		return src, true
	}
	withReturn := src[:start] + "return (" + src[start:end] + ");" + src[end:]
	if _, err := parser.ParseFile(nil, name, withReturn, 0); err != nil {
		return src, true
	}
	return withReturn, true
}

// syntaxError converts a compile error.
func syntaxError(err error) *Error {
	var ce *goja.CompilerSyntaxError
	if errors.As(err, &ce) {
		e := &Error{Kind: KindSyntax, Message: "SyntaxError: " + ce.Message}
		if ce.File != nil {
			p := ce.File.Position(ce.Offset)
			e.Line, e.Column = p.Line, p.Column
		}
		return e
	}
	var el parser.ErrorList
	if errors.As(err, &el) && len(el) > 0 {
		return &Error{Kind: KindSyntax, Message: "SyntaxError: " + el[0].Message, Line: el[0].Position.Line, Column: el[0].Position.Column}
	}
	var pe *parser.Error
	if errors.As(err, &pe) {
		return &Error{Kind: KindSyntax, Message: "SyntaxError: " + pe.Message, Line: pe.Position.Line, Column: pe.Position.Column}
	}
	return &Error{Kind: KindSyntax, Message: "SyntaxError: " + err.Error()}
}
