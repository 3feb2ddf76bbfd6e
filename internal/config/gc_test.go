package config_test

import (
	"strings"
	"testing"

	"github.com/agent-tools/agent-tools/internal/config"
)

func TestGCSettings(t *testing.T) {
	noEnv := func(string) (string, bool) { return "", false }
	tests := []struct {
		src     string
		want    config.GC
		wantErr string
	}{
		{"server:\n  gc: {percent: 200, memoryLimit: 512MiB}\n", config.GC{Percent: 200, MemoryLimit: 512 << 20}, ""},
		{"server:\n  gc: {percent: -1, memoryLimit: 1000000}\n", config.GC{Percent: -1, MemoryLimit: 1000000}, ""},
		{"server:\n  gc: {memoryLimit: \"2 GiB\"}\n", config.GC{MemoryLimit: 2 << 30}, ""},
		{"server: {}\n", config.GC{}, ""},
		{"server:\n  gc: {percent: -2}\n", config.GC{}, "want -1 (off) or more"},
		{"server:\n  gc: {memoryLimit: lots}\n", config.GC{}, "invalid size"},
		{"server:\n  gc: {memoryLimit: -5MiB}\n", config.GC{}, "invalid size"},
		{"server:\n  gc: {percent: many}\n", config.GC{}, "want an integer"},
		{"server:\n  gc: {precent: 100}\n", config.GC{}, "precent"},
	}
	for _, tt := range tests {
		t.Run(tt.src, func(t *testing.T) {
			c, err := config.Parse("agent-tools.yaml", []byte(tt.src), noEnv)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.Server.GC != tt.want {
				t.Errorf("gc = %+v, want %+v", c.Server.GC, tt.want)
			}
		})
	}
}

func TestParseSize(t *testing.T) {
	tests := []struct {
		in   string
		want int64
		ok   bool
	}{
		{"0", 0, true}, {"256MiB", 256 << 20, true}, {"1GB", 1e9, true}, {"12B", 12, true}, {" 3 KiB ", 3 << 10, true},
		{"", 0, false}, {"MiB", 0, false}, {"1.5GiB", 0, false}, {"-1", 0, false}, {"99999999999GiB", 0, false}, {"1TiB", 0, false},
	}
	for _, tt := range tests {
		got, err := config.ParseSize(tt.in)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d ok=%v", tt.in, got, err, tt.want, tt.ok)
		}
	}
}

func FuzzParseSize(f *testing.F) {
	for _, s := range []string{"256MiB", "1", "1GB", "-1", "x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if len(s) > 64 {
			return
		}
		n, err := config.ParseSize(s)
		if err == nil && n < 0 {
			t.Errorf("ParseSize(%q) = %d", s, n)
		}
		if err != nil && strings.Contains(err.Error(), "\n") {
			t.Errorf("multi-line error %q", err)
		}
	})
}
