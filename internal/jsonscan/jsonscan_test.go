package jsonscan

import (
	"encoding/json"
	"testing"
)

func TestIsObject(t *testing.T) {
	for in, want := range map[string]bool{`{}`: true, " \n\t{\"a\":1}": true, `[{}]`: false, `"{"`: false, ``: false, `   `: false, `x{`: false, `{`: true} {
		if got := IsObject([]byte(in)); got != want {
			t.Errorf("IsObject(%q) = %v, want %v", in, got, want)
		}
	}
}

func TestSkipValue(t *testing.T) {
	for _, tt := range []struct {
		raw  string
		i    int
		want int
	}{
		{`"a\"b",1`, 0, 6},
		{`{"a":[1,{"b":"]"}]} x`, 0, 19},
		{`[1,2] `, 0, 5},
		{`123,`, 0, 3},
		{`true}`, 0, 4},
		{`{"a":1,"b":"x"}`, 5, 6},
		{`{"a":1,"b":"x"}`, 11, 14},
		{`"open`, 0, -1},
		{`{"a":[1`, 0, -1},
		{`12`, 0, 2},
	} {
		if got := SkipValue([]byte(tt.raw), tt.i); got != tt.want {
			t.Errorf("SkipValue(%q, %d) = %d, want %d", tt.raw, tt.i, got, tt.want)
		}
	}
}

func TestMarshalKeepsHTML(t *testing.T) {
	v := map[string]any{"s": "<prefix> && <anonymous>", "raw": json.RawMessage(`{"a":"<b>&"}`)}
	b, err := Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"raw":{"a":"<b>&"},"s":"<prefix> && <anonymous>"}`; string(b) != want {
		t.Errorf("Marshal = %s, want %s", b, want)
	}
	b, _ = MarshalIndent(map[string]string{"k": "<v>"}, "", "  ")
	if want := "{\n  \"k\": \"<v>\"\n}"; string(b) != want {
		t.Errorf("MarshalIndent = %q, want %q", b, want)
	}
}
