package pipeline

import (
	"encoding/json"
	"math"
	"strconv"
	"time"
	"unicode/utf8"
)

// appendAuditLine appends rec as json.Marshal would write it, without
// reflection: the audit record is written on every call, and encoding it
// by reflection was about as costly as the rest of the audit stage. Any
// value the fast paths do not cover exactly (a string needing escapes, an
// unusual float or time) is encoded by encoding/json itself, so the output
// is byte for byte json.Marshal's (auditline_test.go checks it).
func appendAuditLine(b []byte, rec *AuditRecord) []byte {
	b = append(b, `{"time":`...)
	b = appendTime(b, rec.Time)
	b = appendField(b, "replica", rec.Replica, true)
	b = appendField(b, "request_id", rec.RequestID, false)
	b = appendField(b, "parent", rec.Parent, true)
	b = appendField(b, "identity", rec.Identity, true)
	b = appendField(b, "session", rec.Session, true)
	b = appendField(b, "client", rec.Client, true)
	b = appendField(b, "profile", rec.Profile, true)
	b = appendField(b, "tool", rec.Tool, false)
	b = appendField(b, "provider", rec.Provider, true)
	b = appendField(b, "via", rec.Via, true)
	b = appendField(b, "decision", rec.Decision, false)
	b = append(b, `,"duration_ms":`...)
	b = appendFloat(b, rec.DurationMS)
	b = appendField(b, "outcome", rec.Outcome, false)
	b = appendField(b, "error_code", rec.ErrorCode, true)
	b = appendField(b, "args_sha256", rec.ArgsHash, false)
	b = append(b, `,"result_tokens":`...)
	b = strconv.AppendInt(b, int64(rec.ResultTokens), 10)
	if rec.ResultTokensEstimated {
		b = append(b, `,"result_tokens_estimated":true`...)
	}
	if len(rec.ResultFindings) > 0 { // rare: encoding/json writes it
		q, _ := json.Marshal(rec.ResultFindings)
		b = append(b, `,"result_findings":`...)
		b = append(b, q...)
	}
	if rec.Quota != nil { // rare: encoding/json writes it
		q, _ := json.Marshal(rec.Quota)
		b = append(b, `,"quota":`...)
		b = append(b, q...)
	}
	b = appendField(b, "cache", rec.Cache, true)
	return append(b, '}')
}

func appendField(b []byte, key, v string, omitEmpty bool) []byte {
	if omitEmpty && v == "" {
		return b
	}
	b = append(b, ',', '"')
	b = append(b, key...)
	b = append(b, '"', ':')
	return appendString(b, v)
}

// appendString quotes s; a string with a byte encoding/json would escape
// (quotes, backslashes, control characters, <, > and &, non-ASCII) is
// left to it.
func appendString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= utf8.RuneSelf || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s)
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// appendFloat writes f as encoding/json does in the range where that is
// strconv's shortest 'f' form; elsewhere it asks encoding/json.
func appendFloat(b []byte, f float64) []byte {
	if a := math.Abs(f); f == 0 || (a >= 1e-6 && a < 1e21) {
		return strconv.AppendFloat(b, f, 'f', -1, 64)
	}
	q, err := json.Marshal(f)
	if err != nil {
		return append(b, '0') // NaN or ±Inf: json.Marshal would fail the whole record
	}
	return append(b, q...)
}

// appendTime writes t as time.Time's MarshalJSON (RFC 3339 with
// nanoseconds) for the years it can write; others go through encoding/json.
func appendTime(b []byte, t time.Time) []byte {
	if y := t.Year(); y >= 0 && y <= 9999 {
		b = append(b, '"')
		b = t.AppendFormat(b, time.RFC3339Nano)
		return append(b, '"')
	}
	q, _ := json.Marshal(t)
	return append(b, q...)
}
