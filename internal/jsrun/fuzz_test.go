package jsrun

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"
	"unicode/utf8"
)

// FuzzRun: Run never panics, always returns within its timeout plus the
// grace period, and returns either a well-formed Output or an *Error that is
// not an interpreter panic.
func FuzzRun(f *testing.F) {
	for _, seed := range []string{
		"1 + 1",
		"while (true) {}",
		"console.log('a', {b: 1}); [1, 2, 3].map(x => x * x)",
		"function f(n) { return n < 2 ? n : f(n - 1) + f(n - 2) } f(20)",
		"const o = {}; o.o = o; o",
		"await Promise.resolve(1)",
		"return 5",
		"throw new Error('x')",
		"'x'.repeat(1e9)",
		"eval('(' + '('.repeat(3000))",
		"new Array(1e9).fill(0)",
		"let s = 'a'; for (let i = 0; i < 40; i++) s += s; s.length",
		"class A { #p = 1; get p() { return this.#p } } new A().p",
		"function* g() { yield 1; yield 2 } [...g()]",
		"new Proxy({}, {get: () => { throw 1 }})",
		"/(a*)*b/.test('a'.repeat(30))",
		"JSON.parse('[' .repeat(10000))",
		"label: for (;;) { break label }",
		"`${1}${`${2}`}`",
		"Object.defineProperty(Array.prototype, 'constructor', {get() { throw 1 }}); [1].map(x => x)",
		"globalThis.JSON = null; ({a: 1})",
		"Object.prototype.toJSON = () => { for (;;) {} }; ({})",
		"String.prototype.repeat = null; 'a'",
		"Error.prototype.toString = () => { throw 1 }; throw new Error('x')",
		"Symbol.prototype.toString = 1; Symbol()",
		"\xff\xfe",
		"/*",
	} {
		f.Add(seed)
	}
	// A short watchdog keeps the seeds that never end (while (true)) from
	// dominating the run: the fuzzer replays seeds often.
	const timeout = 10 * time.Millisecond
	f.Fuzz(func(t *testing.T, code string) {
		if len(code) > 2048 {
			return // longer programs add nothing the seeds do not cover, only time
		}
		start := time.Now()
		out, err := Run(context.Background(), code, Limits{Timeout: timeout, MaxHeapGrowth: 256 << 20})
		if took := time.Since(start); took > timeout+Grace+3*time.Second {
			t.Fatalf("returned after %v", took)
		}
		if err != nil {
			var je *Error
			if !errors.As(err, &je) {
				t.Fatalf("error %T %v", err, err)
			}
			if je.Kind == KindInternal {
				t.Fatalf("internal error: %v", je)
			}
			return
		}
		if !json.Valid(out.Result) {
			t.Fatalf("result is not JSON: %q", out.Result)
		}
		if len(out.Console) > DefaultMaxConsole {
			t.Fatalf("%d console entries", len(out.Console))
		}
		n := utf8.RuneCount(out.Result)
		for _, e := range out.Console {
			n += utf8.RuneCountInString(e.Text)
		}
		if n > DefaultMaxOutput+2 {
			t.Fatalf("%d characters of output", n)
		}
	})
}
