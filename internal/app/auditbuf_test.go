package app

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestAuditBuffer(t *testing.T) {
	line := func(s string) []byte { return []byte(s + "\n") }
	big := strings.Repeat("x", auditBufSize+10)
	tests := []struct {
		name        string
		writes      []string
		beforeClose string // file content before Close
		afterClose  string
	}{
		{"small lines wait for a flush", []string{"a", "b", "c"}, "", "a\nb\nc\n"},
		{"a line larger than the buffer goes through after the buffered ones", []string{"a", big, "b"}, "a\n" + big + "\n", "a\n" + big + "\nb\n"},
		{"nothing written", nil, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "audit.jsonl")
			f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
			if err != nil {
				t.Fatal(err)
			}
			b := newAuditBuffer(f, time.Hour) // no timer flush during the test
			for _, w := range tt.writes {
				if n, err := b.Write(line(w)); err != nil || n != len(w)+1 {
					t.Fatalf("Write = %d, %v", n, err)
				}
			}
			if got, _ := os.ReadFile(path); string(got) != tt.beforeClose {
				t.Errorf("before Close: %d bytes, want %d", len(got), len(tt.beforeClose))
			}
			if (b.timer != nil) != (len(tt.writes) > 0) {
				t.Errorf("flush timer armed = %v after %d writes", b.timer != nil, len(tt.writes))
			}
			if err := b.Close(); err != nil {
				t.Fatal(err)
			}
			if got, _ := os.ReadFile(path); string(got) != tt.afterClose {
				t.Errorf("after Close: %d bytes, want %d", len(got), len(tt.afterClose))
			}
			if err := b.Close(); err != nil {
				t.Errorf("second Close: %v", err)
			}
		})
	}
}

// The timer's flush writes the lines without a Close.
func TestAuditBufferTimerFlush(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	b := newAuditBuffer(f, time.Hour)
	defer b.Close()
	if _, err := b.Write([]byte("a\n")); err != nil {
		t.Fatal(err)
	}
	b.flush() // what the timer runs
	if got, _ := os.ReadFile(path); string(got) != "a\n" {
		t.Errorf("after the timer's flush: %q", got)
	}
	if b.timer != nil {
		t.Error("the timer is still marked pending")
	}
	if _, err := b.Write([]byte("b\n")); err != nil {
		t.Fatal(err)
	}
	if b.timer == nil {
		t.Error("a write after a flush did not arm the timer")
	}
}

func BenchmarkAuditWrite(b *testing.B) {
	line := []byte(`{"time":"2026-12-01T00:00:00Z","tool":"ev_echo","provider":"ev","decision":"allow","duration_ms":0.8,"outcome":"ok","args_hash":"0123456789abcdef"}` + "\n")
	for _, bc := range []struct {
		name     string
		buffered bool
	}{{"unbuffered", false}, {"buffered", true}} {
		b.Run(bc.name, func(b *testing.B) {
			f, err := os.OpenFile(filepath.Join(b.TempDir(), "audit.jsonl"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
			if err != nil {
				b.Fatal(err)
			}
			var w interface{ Write([]byte) (int, error) } = f
			if bc.buffered {
				ab := newAuditBuffer(f, AuditFlushEvery)
				defer ab.Close()
				w = ab
			} else {
				defer f.Close()
			}
			for b.Loop() {
				if _, err := w.Write(line); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
