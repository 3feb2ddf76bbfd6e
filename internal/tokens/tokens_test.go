package tokens

import (
	"strings"
	"testing"
)

func TestMain(m *testing.M) {
	Load()
	m.Run()
}

func TestCountKnownText(t *testing.T) {
	for _, c := range []struct {
		text string
		want int
	}{
		{"", 0},
		{"hello world", 2},
		{"The quick brown fox jumps over the lazy dog.", 10},
	} {
		n, est := Count(c.text)
		if n != c.want || est {
			t.Errorf("Count(%q) = %d, %v; want %d, false", c.text, n, est, c.want)
		}
	}
}

func TestCountLongTextIsEstimated(t *testing.T) {
	s := strings.Repeat("abcd", MaxExact/4+1)
	n, est := Count(s)
	if !est || n != Estimate(s) || n != len(s)/4 {
		t.Errorf("Count(%d bytes) = %d, %v; want %d, true", len(s), n, est, len(s)/4)
	}
	exact := strings.Repeat("abcd", MaxExact/4)
	if _, est := Count(exact); est {
		t.Errorf("Count(%d bytes) estimated; MaxExact is %d", len(exact), MaxExact)
	}
}

func TestEstimate(t *testing.T) {
	if got := Estimate("héllo"); got != 2 { // 5 characters, not 6 bytes
		t.Errorf("Estimate = %d, want 2", got)
	}
}

// sample is about 1 KB of a typical tool result: JSON with prose.
var sample = strings.Repeat(`{"id": 4711, "name": "build-and-test", "status": "completed", "conclusion": "failure", "message": "The job failed at step 3: go test ./... exited with status 1."}, `, 6)

func BenchmarkCount1KB(b *testing.B) {
	b.SetBytes(int64(len(sample)))
	for b.Loop() {
		Count(sample)
	}
}

func BenchmarkCountMaxExact(b *testing.B) {
	s := strings.Repeat(sample, MaxExact/len(sample))
	b.SetBytes(int64(len(s)))
	for b.Loop() {
		Count(s)
	}
}
