package jsrun

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/dop251/goja"
)

// slack absorbs scheduling noise (-race, 2 cores) in time assertions.
const slack = 3 * time.Second

// run runs code; a zero Timeout becomes a generous one, for tests that are
// not about time on a loaded machine.
func run(t *testing.T, code string, l Limits) (*Output, *Error) {
	t.Helper()
	if l.Timeout == 0 {
		l.Timeout = 20 * time.Second
	}
	out, err := Run(context.Background(), code, l)
	if err != nil {
		var je *Error
		if !errors.As(err, &je) {
			t.Fatalf("Run(%q) error %T %v, want *Error", code, err, err)
		}
		return nil, je
	}
	return out, nil
}

func TestValues(t *testing.T) {
	t.Parallel()
	tests := []struct{ code, want string }{
		{"1 + 1", `2`},
		{"0.1 + 0.2", `0.30000000000000004`},
		{"const a = [3, 1, 2]; a.sort(); a.map(x => x * 2)", `[2,4,6]`},
		{"({a: 1, b: 'x', c: [true, null], d: undefined})", `{"a":1,"b":"x","c":[true,null]}`},
		{"'héllo'.toUpperCase()", `"HÉLLO"`},
		{"let x = 5; x", `5`},
		{"var y = 1;", `null`},
		{"undefined", `null`},
		{"null", `null`},
		{"NaN", `null`},
		{"2n ** 64n", `"18446744073709551616"`},
		{"new Map([['a', 1], ['b', 2]])", `{"a":1,"b":2}`},
		{"new Map([[1, 'x'], ['k', 'y']])", `{"1":"x","k":"y"}`},
		{"new Map([[{}, 'y']])", `[[{},"y"]]`},
		{"new Map([[true, 'x']])", `[[true,"x"]]`},
		{"new Set([1, 2, 2, 3])", `[1,2,3]`},
		{"new Uint8Array([1, 2, 3])", `[1,2,3]`},
		{"const o = {n: 1}; o.self = o; o", `{"n":1,"self":"[Circular]"}`},
		{"new Date(0)", `"1970-01-01T00:00:00.000Z"`},
		{"(function named() {})", `"[Function: named]"`},
		{"Symbol('s')", `"Symbol(s)"`},
		{"new Error('e')", `{"name":"Error","message":"e"}`},
		{"({toJSON() { return {j: 1} }})", `{"j":1}`},
		{"({get boom() { throw new Error('no') }})", `{"boom":"[Thrown: Error: no]"}`},
		{"Promise.resolve(7)", `7`},
		{"(async () => { const v = await Promise.resolve(2); return v * 21 })()", `42`},
		{"const r = await Promise.resolve(5); r * 2", `10`},
		{"await null;\nreturn 'top-level return'", `"top-level return"`},
		{"return 3", `3`},
		{"JSON.stringify({a: [1, {b: 2}]})", `"{\"a\":[1,{\"b\":2}]}"`},
		{"JSON.parse('{\"x\": [1, 2]}').x.length", `2`},
		{"[] instanceof Array && [].constructor === Array && Array.isArray(Array.from({length: 3}))", `true`},
		{"class L extends Array {}; const l = new L(1, 2, 3); [l.length, l instanceof L, l.map(v => v) instanceof L]", `[3,true,true]`},
		{"Array.from({length: 4}, (_, i) => i * i)", `[0,1,4,9]`},
		{"new Array(3).fill(0)", `[0,0,0]`},
		{"'ab'.repeat(3) + 'x'.padStart(3, '-') + 'y'.padEnd(2, '+')", `"ababab--xy+"`},
		{"eval('1 + 2')", `3`},
		{"Function('a', 'b', 'return a * b')(6, 7)", `42`},
		{"new Float64Array(new ArrayBuffer(16)).length", `2`},
		{"/(\\w+)\\s\\1/.test('hello hello')", `true`},
		{"const {a, ...rest} = {a: 1, b: 2, c: 3}; rest", `{"b":2,"c":3}`},
		{"[1, [2, [3, [4]]]].flat(Infinity)", `[1,2,3,4]`},
		{"({a: {b: null}})?.a?.b?.c ?? 'dflt'", `"dflt"`},
		{"let d = {}; for (let i = 0; i < 100; i++) d = {d}; JSON.stringify(d).length", `602`},
	}
	for _, tt := range tests {
		t.Run(tt.code, func(t *testing.T) {
			out, err := run(t, tt.code, Limits{})
			if err != nil {
				t.Fatalf("error %s: %v", err.Kind, err)
			}
			if string(out.Result) != tt.want {
				t.Errorf("result %s, want %s", out.Result, tt.want)
			}
			if out.Truncated || len(out.Console) != 0 {
				t.Errorf("truncated %v console %v", out.Truncated, out.Console)
			}
		})
	}
}

func TestEncodeDepth(t *testing.T) {
	out, err := run(t, "let d = {}; for (let i = 0; i < 200; i++) d = {d}; d", Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out.Result), `"[Object]"`) || strings.Count(string(out.Result), `"d"`) != MaxEncodeDepth {
		t.Errorf("result %s: want %d levels then [Object]", out.Result, MaxEncodeDepth)
	}
}

func TestConsole(t *testing.T) {
	out, err := run(t, `
console.log("a", 1, {b: [2]}, undefined, null, 3n, [1, "x"]);
console.info("info");
console.warn("warn");
console.error(new TypeError("bad"));
console.debug(Symbol("s"), function f() {});
"done"`, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	want := []Entry{
		{"log", `a 1 {"b":[2]} undefined null 3n [1,"x"]`},
		{"info", "info"},
		{"warn", "warn"},
		{"error", "TypeError: bad"},
		{"debug", "Symbol(s) [Function: f]"},
	}
	if len(out.Console) != len(want) {
		t.Fatalf("console %v, want %v", out.Console, want)
	}
	for i := range want {
		if out.Console[i] != want[i] {
			t.Errorf("entry %d = %v, want %v", i, out.Console[i], want[i])
		}
	}
	if string(out.Result) != `"done"` || out.Truncated {
		t.Errorf("result %s truncated %v", out.Result, out.Truncated)
	}
}

func TestConsoleCaps(t *testing.T) {
	t.Run("entries", func(t *testing.T) {
		out, err := run(t, "for (let i = 0; i < 1000; i++) console.log(i); 'ok'", Limits{})
		if err != nil {
			t.Fatal(err)
		}
		if len(out.Console) != DefaultMaxConsole || !out.Truncated {
			t.Errorf("%d entries truncated=%v, want %d and true", len(out.Console), out.Truncated, DefaultMaxConsole)
		}
		if out.Console[199].Text != "199" || string(out.Result) != `"ok"` {
			t.Errorf("last %v result %s", out.Console[199], out.Result)
		}
	})
	t.Run("characters", func(t *testing.T) {
		out, err := run(t, "for (let i = 0; i < 10; i++) console.log('é'.repeat(5000)); 1", Limits{})
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, e := range out.Console {
			n += utf8.RuneCountInString(e.Text)
		}
		if n+1 > DefaultMaxOutput || !out.Truncated || len(out.Console) != 6 {
			t.Errorf("%d characters in %d entries, truncated=%v", n, len(out.Console), out.Truncated)
		}
	})
	t.Run("custom", func(t *testing.T) {
		out, err := run(t, "for (let i = 0; i < 10; i++) console.log(i)", Limits{MaxConsole: 3})
		if err != nil {
			t.Fatal(err)
		}
		if len(out.Console) != 3 || !out.Truncated {
			t.Errorf("console %v truncated=%v", out.Console, out.Truncated)
		}
	})
}

func TestOutputTruncation(t *testing.T) {
	t.Run("result", func(t *testing.T) {
		out, err := run(t, "'x'.repeat(100000)", Limits{})
		if err != nil {
			t.Fatal(err)
		}
		var s string
		if json.Unmarshal(out.Result, &s) != nil || !out.Truncated {
			t.Fatalf("result %.40s... truncated=%v: want a JSON string and true", out.Result, out.Truncated)
		}
		if n := utf8.RuneCountInString(s); n != DefaultMaxOutput {
			t.Errorf("kept %d characters, want %d", n, DefaultMaxOutput)
		}
	})
	t.Run("big value costs only the cap", func(t *testing.T) {
		start := time.Now()
		out, err := run(t, "Array.from({length: 2e5}, (_, i) => ({i, s: 'abcdef'}))", Limits{Timeout: 30 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		if !out.Truncated || len(out.Result) > 2*DefaultMaxOutput {
			t.Errorf("result of %d bytes truncated=%v", len(out.Result), out.Truncated)
		}
		t.Logf("built and encoded in %v", time.Since(start))
	})
	t.Run("result before console", func(t *testing.T) {
		out, err := run(t, "console.log('c'.repeat(20000)); 'r'.repeat(20000)", Limits{})
		if err != nil {
			t.Fatal(err)
		}
		var s string
		_ = json.Unmarshal(out.Result, &s)
		if len(s) != 20000 || !out.Truncated || len(out.Console) != 1 || len(out.Console[0].Text) != 10000-2 {
			t.Errorf("result %d chars, console %d entries, truncated=%v", len(s), len(out.Console), out.Truncated)
		}
	})
}

func TestTimeout(t *testing.T) {
	for _, code := range []string{
		"while (true) {}",
		"for (;;) {}",
		"function f() { try { while (true) {} } catch (e) { return 'caught' } finally { return 'finally' } } f()",
		"const p = new Proxy({}, {ownKeys() { for (;;) {} }}); p",
		"let o = {}; for (let i = 0; i < 3e5; i++) o = {o}; JSON.stringify(o); for (;;) {}",
		"async function f() { for (;;) {} } f()",
		"Promise.resolve().then(() => { for (;;) {} })",
		"[3, 2, 1].sort(() => { for (;;) {} })",
		"console.log('before'); while (true) {}",
	} {
		t.Run(code, func(t *testing.T) {
			start := time.Now()
			_, err := run(t, code, Limits{Timeout: 200 * time.Millisecond})
			took := time.Since(start)
			if err == nil || err.Kind != KindTimeout {
				t.Fatalf("err %v, want a timeout", err)
			}
			if took > 200*time.Millisecond+Grace+slack {
				t.Errorf("returned after %v", took)
			}
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("errors.Is(err, DeadlineExceeded) = false")
			}
			if strings.HasPrefix(code, "console") && (len(err.Console) != 1 || err.Console[0].Text != "before") {
				t.Errorf("console %v, want the entry logged before the loop", err.Console)
			}
		})
	}
}

func TestParentDeadlineAndCancel(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err := Run(ctx, "while (true) {}", Limits{Timeout: time.Minute})
	var je *Error
	if !errors.As(err, &je) || je.Kind != KindTimeout || !strings.HasSuffix(je.Message, "0ms") {
		t.Errorf("err %v, want the caller's ~100ms timeout", err)
	}

	ctx, cancel = context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	_, err = Run(ctx, "while (true) {}", Limits{Timeout: time.Minute})
	if !errors.As(err, &je) || je.Kind != KindCancelled || !errors.Is(err, context.Canceled) {
		t.Errorf("err %v, want cancelled", err)
	}
}

func TestNoHostAccess(t *testing.T) {
	out, err := run(t, `[typeof require, typeof process, typeof fetch, typeof setTimeout, typeof setInterval,
		typeof XMLHttpRequest, typeof WebSocket, typeof module, typeof exports, typeof Deno, typeof Bun,
		typeof GoError, typeof __dirname, typeof importScripts, typeof globalThis.console]`, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	want := `["undefined","undefined","undefined","undefined","undefined","undefined","undefined","undefined","undefined","undefined","undefined","undefined","undefined","undefined","object"]`
	if string(out.Result) != want {
		t.Errorf("got %s", out.Result)
	}
	// The prelude leaves nothing of its own on the global object.
	out, _ = run(t, "Object.getOwnPropertyNames(globalThis).filter(n => !/^[A-Z]/.test(n)).sort().join(',')", Limits{})
	if got := string(out.Result); got != `"console,decodeURI,decodeURIComponent,encodeURI,encodeURIComponent,escape,eval,globalThis,isFinite,isNaN,parseFloat,parseInt,undefined,unescape"` {
		t.Errorf("globals %s", got)
	}
	for _, code := range []string{"require('fs')", "import('fs')", "import fs from 'fs'", "fetch('http://127.0.0.1')", "process.exit(1)"} {
		if _, err := run(t, code, Limits{}); err == nil {
			t.Errorf("%s succeeded", code)
		}
	}
}

func TestExceptions(t *testing.T) {
	tests := []struct {
		code       string
		kind       Kind
		msg        string
		line, col  int
		stackMatch string
	}{
		{"x.y", KindException, "ReferenceError: x is not defined", 1, 1, "code.js:1:1"},
		{"const a = 1;\nfunction f() {\n  throw new Error('boom');\n}\nf();", KindException, "Error: boom", 3, 9, "at f (code.js:3:9)"},
		{"null.x", KindException, "TypeError: Cannot read property 'x'", 1, 6, ""},
		{"let x = ;", KindSyntax, "SyntaxError: Unexpected token ;", 1, 9, ""},
		{"\n\nfunction (", KindSyntax, "SyntaxError: Unexpected token (", 3, 10, ""},
		{"throw 'plain'", KindException, "Uncaught plain", 1, 1, ""},
		{"throw {code: 7}", KindException, `Uncaught {"code":7}`, 1, 1, ""},
		{"function r() { return r() } r()", KindException, "RangeError: Maximum call stack size exceeded", 1, 24, "more frames"},
		{"await Promise.reject(new Error('nope'))", KindException, "Error: nope", 1, 30, ""},
		{"async function f() {\n  throw new TypeError('async boom')\n}\nf()", KindException, "TypeError: async boom", 2, 9, "at f (code.js:2:9)"},
		{"new Promise(() => {})", KindException, "Error: the returned Promise never settled (this sandbox has no timers or I/O to wait for)", 0, 0, ""},
		{"JSON.parse('{bad')", KindException, "SyntaxError", 1, 11, ""},
		{"eval('(')", KindException, "SyntaxError", 1, 5, ""},
	}
	for _, tt := range tests {
		t.Run(tt.code, func(t *testing.T) {
			_, err := run(t, tt.code, Limits{})
			if err == nil {
				t.Fatal("no error")
			}
			if err.Kind != tt.kind || !strings.HasPrefix(err.Message, tt.msg) {
				t.Errorf("%s %q, want %s %q", err.Kind, err.Message, tt.kind, tt.msg)
			}
			if err.Line != tt.line || err.Column != tt.col {
				t.Errorf("at %d:%d, want %d:%d (stack %q)", err.Line, err.Column, tt.line, tt.col, err.Stack)
			}
			if !strings.Contains(err.Stack, tt.stackMatch) {
				t.Errorf("stack %q lacks %q", err.Stack, tt.stackMatch)
			}
			if strings.Contains(err.Stack, "prelude.js") {
				t.Errorf("stack shows the prelude: %q", err.Stack)
			}
		})
	}
}

func TestGuards(t *testing.T) {
	tests := []struct{ code, msg string }{
		{"'x'.repeat(1e8)", "RangeError: Invalid string length"},
		{"'x'.padStart(2 ** 30)", "RangeError: Invalid string length"},
		{"''.padEnd(1e9, 'ab')", "RangeError: Invalid string length"},
		{"new Array(1e9)", "RangeError: Invalid array length"},
		{"Array(2 ** 31).length", "RangeError: Invalid array length"},
		{"[].constructor(1e9)", "RangeError: Invalid array length"},
		{"Array.from({length: 1e9})", "RangeError: Invalid array length"},
		{"const a = []; a.length = 1e9; a.fill(0)", "RangeError: Invalid array length"},
		{"const a = []; a.length = 1e9; a.join()", "RangeError: Invalid array length"},
		{"const a = []; a.length = 1e9; a.map(x => x)", "RangeError: Invalid array length"},
		{"const a = []; a.length = 1e9; String(a)", "RangeError: Invalid array length"},
		{"new Uint8Array(1e9)", "RangeError: Invalid typed array length"},
		{"new Float64Array({length: 1e8})", "RangeError: Invalid typed array length"},
		{"new ArrayBuffer(2 ** 31)", "RangeError: Invalid typed array length"},
		{"eval('('.repeat(5000))", "SyntaxError: brackets nest deeper"},
		{"Function('return ' + '['.repeat(2000))", "SyntaxError: brackets nest deeper"},
		{"(() => {}).constructor('x=>'.repeat(6000) + '1')", "SyntaxError: more than 5000 arrow functions"},
		{"(async () => {}).constructor('{'.repeat(3000))", "SyntaxError: brackets nest deeper"},
		{"(function* () {}).constructor('{'.repeat(3000))", "SyntaxError: brackets nest deeper"},
		{"eval(' '.repeat(600 * 1024))", "SyntaxError: source is"},
	}
	for _, tt := range tests {
		t.Run(tt.code, func(t *testing.T) {
			start := time.Now()
			_, err := run(t, tt.code, Limits{})
			if err == nil || !strings.HasPrefix(err.Message, tt.msg) {
				t.Fatalf("err %v, want %q", err, tt.msg)
			}
			if took := time.Since(start); took > time.Second+slack {
				t.Errorf("took %v", took)
			}
		})
	}
	// Legitimate uses of the same built-ins still work.
	out, err := run(t, "[new Uint8Array(1 << 20).length, 'ab'.repeat(1 << 20).length, new Array(1e4).fill(1).length]", Limits{Timeout: 20 * time.Second})
	if err != nil || string(out.Result) != "[1048576,2097152,10000]" {
		t.Errorf("got %v %v", out, err)
	}
	// The program itself is checked too.
	if _, err := run(t, strings.Repeat("(", 2000)+"1"+strings.Repeat(")", 2000), Limits{}); err == nil || err.Kind != KindLimit {
		t.Errorf("deep program: %v, want KindLimit", err)
	}
}

func TestMemoryGuard(t *testing.T) {
	// The sampler, not the (long) watchdog, must end this run.
	_, err := run(t, "const keep = []; for (;;) keep.push('x'.repeat(1 << 18) + Math.random())", Limits{Timeout: time.Minute, MaxHeapGrowth: 32 << 20})
	if err == nil || err.Kind != KindMemory || !strings.Contains(err.Message, "32 MiB") {
		t.Fatalf("err %v, want the heap limit", err)
	}
}

func TestRegexpBacktrackingIsBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("takes RegexpMatchTimeout")
	}
	start := time.Now()
	out, err := run(t, "/(a+)+\\1$/.test('a'.repeat(40) + 'b')", Limits{Timeout: 5 * time.Second})
	if err != nil || string(out.Result) != "false" {
		t.Fatalf("got %v %v", out, err)
	}
	if took := time.Since(start); took > RegexpMatchTimeout+slack {
		t.Errorf("took %v", took)
	}
}

func TestCheckSource(t *testing.T) {
	tests := []struct {
		src, want string
	}{
		{"", ""},
		{"f(a[b{c}])", ""},
		{strings.Repeat("[", MaxNesting), ""},
		{strings.Repeat("[", MaxNesting+1), "brackets nest deeper"},
		{strings.Repeat("(a)", 100000), ""},
		{strings.Repeat("x=>", MaxArrows), ""},
		{strings.Repeat("x=>", MaxArrows+1), "more than 5000 arrow"},
		{strings.Repeat(" ", MaxSourceLen+1), "source is"},
	}
	for _, tt := range tests {
		got := CheckSource(tt.src)
		if tt.want == "" && got != "" || !strings.Contains(got, tt.want) {
			t.Errorf("CheckSource(%.20q) = %q, want %q", tt.src, got, tt.want)
		}
	}
}

func TestSessionInjection(t *testing.T) {
	s, err := NewSession("host.js", Limits{})
	if err != nil {
		t.Fatal(err)
	}
	var seen string
	if err := s.Runtime().Set("hostAdd", func(a, b int) int { return a + b }); err != nil {
		t.Fatal(err)
	}
	out, err := s.Exec(context.Background(), func(ctx context.Context, vm *goja.Runtime) (goja.Value, error) {
		v, err := vm.RunScript("host.js", "hostAdd(2, 3)")
		if err == nil {
			seen = v.String()
		}
		return v, err
	})
	if err != nil || string(out.Result) != "5" || seen != "5" {
		t.Fatalf("got %v %v %q", out, err, seen)
	}
	if _, err := s.Exec(context.Background(), nil); err == nil {
		t.Error("a session ran twice")
	}
}

func TestConcurrentRuns(t *testing.T) {
	errs := make(chan error, 8)
	for i := 0; i < 8; i++ {
		go func() {
			out, err := Run(context.Background(), "let s = 0; for (let i = 0; i < 1e4; i++) s += i; console.log(s); s", Limits{Timeout: 20 * time.Second})
			if err == nil && string(out.Result) != "49995000" {
				err = errors.New(string(out.Result))
			}
			errs <- err
		}()
	}
	for i := 0; i < 8; i++ {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}
