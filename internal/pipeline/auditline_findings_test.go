package pipeline

import (
	"testing"
	"time"
)

// The result guard's findings are encoded as json.Marshal would.
func TestAuditLineResultFindings(t *testing.T) {
	rec := AuditRecord{Time: time.Date(2026, 12, 1, 22, 0, 0, 0, time.UTC), RequestID: "r1", Tool: "wx_get", Decision: "allowed",
		DurationMS: 2, Outcome: "error", ErrorCode: "RESULT_BLOCKED", ArgsHash: "0123456789abcdef",
		ResultFindings: []ResultFinding{{Rule: "ignore-instructions", Severity: "high", Where: "structuredContent.items[0].body", Action: "blocked"},
			{Rule: "dotenv-file", Severity: "medium", Where: "content[1]", Action: "warned"}}}
	checkAuditLine(t, rec)
	rec.ResultFindings = []ResultFinding{}
	checkAuditLine(t, rec)
}
