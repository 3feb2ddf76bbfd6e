package catalog

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"testing"
	"unicode/utf8"
)

func slowDigest(d Definition) string {
	b, err := json.Marshal(d)
	if err != nil {
		return ""
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// digestFast writes what json.Marshal writes, or gives up.
func TestDigestFastIsJSONMarshal(t *testing.T) {
	for _, d := range []Definition{
		{Name: "a", Description: "plain"},
		{Name: "a<b>&", Title: "t\u2028x\u2029", Description: "q\"\\\n\t\x01 \xff é 😀", InputSchema: json.RawMessage(`{"type":"object","properties":{"x":{"description":"a b \"c\" é"}}}`)},
		{Name: "a", InputSchema: json.RawMessage(`{"type": "object"}`)},
		{Name: "a", InputSchema: json.RawMessage(`{"d":"<b>"}`)},
		{Name: "a", ReadOnly: true, AlwaysConfirm: true, OutputSchema: json.RawMessage(`{"type":"object"}`), Icons: json.RawMessage(`[{"src":"x"}]`), Meta: json.RawMessage(`{"k":1}`)},
	} {
		if got, want := d.Digest(), slowDigest(d); got != want {
			t.Errorf("%+v: %s, want %s", d, got, want)
		}
	}
}

func FuzzDigestFast(f *testing.F) {
	f.Add("n", "d", `{"type":"object"}`)
	f.Add("<", "\u2028\xff", `{"a":"b c"}`)
	f.Fuzz(func(t *testing.T, name, desc, schema string) {
		d := Definition{Name: name, Description: desc, InputSchema: json.RawMessage(schema)}
		if !json.Valid(d.InputSchema) {
			return
		}
		if got, want := d.Digest(), slowDigest(d); got != want {
			t.Fatalf("%q %q %q: %s, want %s", name, desc, schema, got, want)
		}
	})
}

// BenchmarkDigest10k is the digests a warm start with 10,000 upstream
// tools takes (bench/startup's shape: a sentence, a two-property schema).
func BenchmarkDigest10k(b *testing.B) {
	defs := make([]Definition, 10000)
	for i := range defs {
		defs[i] = Definition{Name: fmt.Sprintf("issue_repo_%d", i),
			Description: fmt.Sprintf("Issue the repo of a branch (generated tool %d).", i),
			InputSchema: json.RawMessage(`{"properties":{"id":{"description":"the repo id","type":"string"},"limit":{"description":"at most this many","type":"integer"}},"required":["id"],"type":"object"}`)}
	}
	b.ReportAllocs()
	for b.Loop() {
		for i := range defs {
			_ = defs[i].Digest()
		}
	}
}

// plainBefore is plain as it was written first (a byte at a time, with an
// escape state), which plain must agree with on any input, JSON or not:
// a digest must not change with the code that takes it.
func plainBefore(r []byte) bool {
	in, esc := false, false
	for i := 0; i < len(r); i++ {
		c := r[i]
		switch {
		case c >= utf8.RuneSelf:
			if c == 0xE2 && i+2 < len(r) && r[i+1] == 0x80 && (r[i+2] == 0xA8 || r[i+2] == 0xA9) {
				return false
			}
			rr, n := utf8.DecodeRune(r[i:])
			if rr == utf8.RuneError && n == 1 {
				return false
			}
			i += n - 1
			esc = false
		case c == '<' || c == '>' || c == '&':
			return false
		case in:
			switch {
			case esc:
				esc = false
			case c == '\\':
				esc = true
			case c == '"':
				in = false
			}
		case c == '"':
			in = true
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			return false
		}
	}
	return !in
}

func FuzzPlain(f *testing.F) {
	for _, s := range []string{`{"a":"b c"}`, `{"a": 1}`, `"\"<"`, `"\\"`, "\"\\\xe2\x80\xa8\"", `"\é"`, `x\ y`, `"a\`, "\"\\\xff\"", `{"k":"\u003c"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, r []byte) {
		if got, want := plain(r), plainBefore(r); got != want {
			t.Fatalf("plain(%q) = %v, before %v", r, got, want)
		}
	})
}
