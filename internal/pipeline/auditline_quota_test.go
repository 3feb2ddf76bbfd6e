package pipeline

import (
	"testing"
	"time"
)

// A quota's refusal is encoded as json.Marshal would, beside the other
// rare fields.
func TestAuditLineQuota(t *testing.T) {
	rec := AuditRecord{Time: time.Date(2026, 12, 1, 22, 0, 0, 0, time.UTC), RequestID: "r1", Tool: "gh_issues", Decision: "refused",
		DurationMS: 0.01, Outcome: "error", ErrorCode: "RATE_LIMITED", ArgsHash: "0123456789abcdef",
		Quota: &QuotaRefusal{Limit: "rate", Index: 2, Tools: []string{"gh_*", "<x>"}, RetryAfterMS: 1500}}
	checkAuditLine(t, rec)
	rec.Quota = &QuotaRefusal{Limit: "tokens", RetryAfterMS: 1, EstTokensUsed: 200001}
	rec.ResultFindings = []ResultFinding{{Rule: "r", Severity: "high", Where: "text", Action: "warned"}}
	checkAuditLine(t, rec)
}
