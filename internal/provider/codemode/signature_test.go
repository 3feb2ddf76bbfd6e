package codemode

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestSignature(t *testing.T) {
	tests := []struct {
		name, in, out, want string
	}{
		{"required and optional", `{"type":"object","properties":{"days":{"type":"integer"},"city":{"type":"string"}},"required":["city"]}`, "",
			`weather(args: {city: string, days?: number}): Promise<any>`},
		{"enum array nested", `{"type":"object","properties":{"state":{"enum":["open","closed"]},"labels":{"type":"array","items":{"type":"string"}},"page":{"type":"object","properties":{"n":{"type":"number"}}}}}`, "",
			`weather(args: {labels?: string[], page?: {n?: number}, state?: "open" | "closed"}): Promise<any>`},
		{"output schema", `{"type":"object","properties":{}}`, `{"type":"object","properties":{"temp":{"type":"number"}},"required":["temp"]}`,
			`weather(args: object): Promise<{temp: number}>`},
		{"union types and odd names", `{"type":"object","properties":{"x-y":{"type":["string","null"]},"v":{"anyOf":[{"type":"string"},{"type":"array","items":{"type":["number","string"]}}]}}}`, "",
			`weather(args: {v?: string | (number | string)[], "x-y"?: string | null}): Promise<any>`},
		{"map", `{"type":"object","additionalProperties":{"type":"string"}}`, "", `weather(args: {[key: string]: string}): Promise<any>`},
		{"no schema", ``, ``, `weather(args: {}): Promise<any>`},
		{"malformed", `{"type":`, `[1,2]`, `weather(args: {}): Promise<any>`},
		{"not an object", `"x"`, `null`, `weather(args: {}): Promise<any>`},
		{"ref", `{"type":"object","properties":{"a":{"$ref":"#/defs/x"}}}`, "", `weather(args: {a?: any}): Promise<any>`},
		{"const and boolean schema", `{"type":"object","properties":{"k":{"const":"v"},"any":true,"none":false}}`, "", `weather(args: {any?: any, k?: "v", none?: never}): Promise<any>`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Signature("weather", json.RawMessage(tc.in), json.RawMessage(tc.out)); got != tc.want {
				t.Fatalf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}

// Deep or huge schemas are summarised, never spelled out without bound.
func TestSignatureBounded(t *testing.T) {
	deep := `{"type":"string"}`
	for range 50 {
		deep = `{"type":"object","properties":{"a":` + deep + `}}`
	}
	if got := Signature("t", json.RawMessage(deep), nil); !strings.Contains(got, "object") || len(got) > 200 {
		t.Fatalf("deep: %s", got)
	}
	var b strings.Builder
	b.WriteString(`{"type":"object","properties":{`)
	for i := range 500 {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`"p` + strings.Repeat("x", i%7) + string(rune('a'+i%26)) + `_` + strings.Repeat("y", i/26) + `":{"type":"string"}`)
	}
	b.WriteString(`}}`)
	if got := Signature("t", json.RawMessage(b.String()), nil); len(got) > sigMaxLen+100 {
		t.Fatalf("wide: %d chars", len(got))
	}
}

func FuzzSignature(f *testing.F) {
	f.Add(`{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]}`, `{"type":"array","items":{"enum":[1,"x",null]}}`)
	f.Add(`{"anyOf":[true,false,{"type":["null"]}]}`, `{"additionalProperties":{"const":{}}}`)
	f.Fuzz(func(t *testing.T, in, out string) {
		s := Signature("t", json.RawMessage(in), json.RawMessage(out))
		if !strings.HasPrefix(s, "t(args: ") || !strings.HasSuffix(s, ">") {
			t.Fatalf("malformed signature %q", s)
		}
		if len(s) > 2*sigMaxLen+40 {
			t.Fatalf("unbounded signature: %d chars", len(s))
		}
	})
}
