package workers

import (
	"strings"
	"testing"
)

func TestEventTap(t *testing.T) {
	tests := []struct {
		name   string
		chunks []string
		events int
		last   string
	}{
		{"whole lines", []string{`{"type":"thread.started"}` + "\n" + `{"type":"item.completed"}` + "\n"}, 2, "item.completed"},
		{"split mid-line", []string{`{"ty`, `pe":"turn.started"}`, "\n"}, 1, "turn.started"},
		{"no newline yet", []string{`{"type":"pending"}`}, 0, ""},
		{"junk is counted, not named", []string{"not json\n", `{"type":"a"}` + "\n", "{}\n"}, 3, "a"},
		{"overlong line", []string{`{"type":"` + strings.Repeat("x", maxEventLine) + `"}` + "\n", `{"type":"after"}` + "\n"}, 2, "after"},
		{"blank lines", []string{"\n\n"}, 0, ""},
	}
	for _, tt := range tests {
		var tap eventTap
		for _, c := range tt.chunks {
			tap.Write([]byte(c))
		}
		if n, last := tap.seen(); n != tt.events || last != tt.last {
			t.Errorf("%s: %d events, last %q; want %d, %q", tt.name, n, last, tt.events, tt.last)
		}
	}
}

func FuzzEventTap(f *testing.F) {
	f.Add([]byte(`{"type":"a"}`+"\n"), 3)
	f.Fuzz(func(t *testing.T, b []byte, cut int) {
		if len(b) > 4096 {
			return
		}
		var whole, split eventTap
		whole.Write(b)
		if cut < 0 {
			cut = -cut
		}
		cut %= len(b) + 1
		split.Write(b[:cut])
		split.Write(b[cut:])
		n1, l1 := whole.seen()
		n2, l2 := split.seen()
		if n1 != n2 || l1 != l2 {
			t.Fatalf("chunking changed the result: %d %q vs %d %q", n1, l1, n2, l2)
		}
	})
}
