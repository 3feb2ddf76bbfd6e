package pipeline

import (
	"encoding/json"
	"testing"
	"time"
)

func checkAuditLine(t *testing.T, rec AuditRecord) {
	t.Helper()
	want, err := json.Marshal(rec)
	if err != nil {
		return
	}
	if got := appendAuditLine(nil, &rec); string(got) != string(want) {
		t.Fatalf("appendAuditLine:\n got %s\nwant %s", got, want)
	}
}

// The append-based audit line is json.Marshal's, byte for byte.
func TestAuditLineIsJSONMarshal(t *testing.T) {
	base := AuditRecord{Time: time.Date(2026, 12, 1, 22, 0, 0, 123456789, time.UTC), RequestID: "r1", Tool: "gh_list", Decision: "allow",
		DurationMS: 1.234, Outcome: "ok", ArgsHash: "0123456789abcdef"}
	checkAuditLine(t, base)
	full := base
	full.Replica, full.Parent, full.Identity, full.Session, full.Client, full.Profile, full.Provider, full.Via, full.ErrorCode = "r", "p1", "alice@x", "s1", "claude-code", "ops", "gh", "flat", "TIMEOUT"
	full.Cache, full.ResultTokens, full.ResultTokensEstimated = "hit", 1234, true
	checkAuditLine(t, full)
	for _, s := range []string{"<script>&", "quote\"back\\slash", "tab\tnl\n\x01", "héllo", "\u2028", "bad\xffutf8", ""} {
		r := full
		r.Tool, r.Identity = s, s
		checkAuditLine(t, r)
	}
	for _, d := range []float64{0, 1e-7, 1e-6, 0.001, 12345.678, 1e20, 1e21, -3.5} {
		r := base
		r.DurationMS = d
		checkAuditLine(t, r)
	}
	for _, tm := range []time.Time{{}, time.Date(2026, 1, 2, 3, 4, 5, 0, time.FixedZone("x", 3600)), time.Date(12000, 1, 1, 0, 0, 0, 0, time.UTC)} {
		r := base
		r.Time = tm
		checkAuditLine(t, r)
	}
}

func FuzzAuditLine(f *testing.F) {
	f.Add("gh_list", "alice", 1.5, int64(1764626400123456789))
	f.Add("<&>\x00é", "\xff", 1e-9, int64(-1))
	f.Fuzz(func(t *testing.T, tool, identity string, d float64, ns int64) {
		checkAuditLine(t, AuditRecord{Time: time.Unix(0, ns).UTC(), Tool: tool, Identity: identity, DurationMS: d, Outcome: "ok", Decision: "allow"})
	})
}

// BenchmarkAuditLine compares encoding one audit record by reflection
// (before) and by appending (now), side by side.
//
//	go test -run '^$' -bench AuditLine -benchmem ./internal/pipeline/
func BenchmarkAuditLine(b *testing.B) {
	rec := AuditRecord{Time: time.Now().UTC(), RequestID: "Q2VZ4H7KXN3M5P8R", Session: "9f8e7d6c5b4a", Client: "bench",
		Tool: "bench_echo", Provider: "bench", Via: "flat", Decision: "allow", DurationMS: 0.042, Outcome: "ok", ArgsHash: ArgsHash([]byte(`{"text":"x"}`))}
	b.Run("before", func(b *testing.B) {
		for b.Loop() {
			line, _ := json.Marshal(rec)
			_ = append(line, '\n')
		}
	})
	b.Run("now", func(b *testing.B) {
		for b.Loop() {
			_ = append(appendAuditLine(make([]byte, 0, 320), &rec), '\n')
		}
	})
}
