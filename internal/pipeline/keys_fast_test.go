package pipeline

import (
	"bytes"
	"encoding/json"
	"testing"
)

func checkCanonical(t *testing.T, in []byte) {
	t.Helper()
	in = bytes.TrimSpace(in)
	if len(in) == 0 || string(in) == "null" {
		return
	}
	if got, want := CanonicalArgs(in), canonicalSlow(in); !bytes.Equal(got, want) {
		t.Fatalf("CanonicalArgs(%s) = %s, by decoding %s", in, got, want)
	}
}

// The fast path of CanonicalArgs (input already canonical) gives what
// decoding and encoding again gives.
func TestCanonicalArgsFastPath(t *testing.T) {
	for _, in := range []string{
		`{}`, `{"a":1}`, `{"a":1,"b":[true,false,null,{"c":"d"}]}`, `{"b":1,"a":2}`, `{"a":1,"a":2}`, `{"a": 1}`,
		`{"a":"<b>"}`, `{"a":"é"}`, `{"a":"\u0041"}`, `{"a":1.50,"b":-0,"c":1E5}`, `[1,2]`, `"x"`, `5`, `{"a":{}}`, `{"a":[]}`,
		`{"":1,"a":2}`, `{"token":"abc","n":3}`, `{"b":{"d":1,"c":[{"f":1,"e":2}]},"a":"x"}`, `{"b":1,"a":2,"b":3}`, `{"b":1,"a":"é"}`, `[{"b":1,"a":2},3]`, `{"a":1,"a ":2}`, `{"a ":1,"a":2}`, `{"a!":1,"b":2,"a":3}`, `{"a":1}x`, `{"a":1`, `{"ab":1,"a":2}`, `{"a":1,"ab":2}`, `{"text":"hello world"}`,
	} {
		checkCanonical(t, []byte(in))
	}
}

func FuzzCanonicalArgs(f *testing.F) {
	f.Add([]byte(`{"a":1,"b":[true,{"c":"d"}]}`))
	f.Add([]byte(`{"b":1,"a":"x\u0041"}`))
	f.Fuzz(func(t *testing.T, in []byte) {
		if len(in) <= 256 {
			checkCanonical(t, in)
		}
	})
}

// BenchmarkCanonicalArgs compares the loop guard's canonical form of
// typical arguments (keys sorted, as the go-sdk writes them, and not) by
// decoding and encoding (before) and by checking or sorting the JSON as it
// is (now).
//
//	go test -run '^$' -bench CanonicalArgs -benchmem ./internal/pipeline/
func BenchmarkCanonicalArgs(b *testing.B) {
	for name, args := range map[string]json.RawMessage{
		"sorted":   json.RawMessage(`{"limit":20,"path":"src/auth/login.go","recursive":true,"text":"hello world"}`),
		"unsorted": json.RawMessage(`{"text":"hello world","path":"src/auth/login.go","limit":20,"recursive":true}`),
	} {
		b.Run(name+"/before", func(b *testing.B) {
			for b.Loop() {
				canonicalSlow(args)
			}
		})
		b.Run(name+"/now", func(b *testing.B) {
			for b.Loop() {
				CanonicalArgs(args)
			}
		})
	}
}
