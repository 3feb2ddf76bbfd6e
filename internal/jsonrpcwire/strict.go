package jsonrpcwire

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// Invalid is a message that the go-sdk decodes but would answer wrongly or
// never: DecodeStrict refuses it. Answer it with jsonrpc.CodeInvalidRequest,
// Error() as the message, and ID ("id": null when it is not valid, as
// JSON-RPC 2.0 answers a request whose id could not be read).
type Invalid struct {
	ID     jsonrpc.ID
	Reason string
}

func (e *Invalid) Error() string { return "invalid request: " + e.Reason }

// MaxID is the largest numeric id DecodeStrict accepts (and -MaxID the
// smallest): 2^53-1, the largest integer every JSON peer reads exactly.
const MaxID = 1<<53 - 1

// DecodeStrict is Decode, and refuses (an *Invalid) what the go-sdk
// accepts but cannot answer rightly:
//   - a numeric id that is not a whole number from -MaxID to MaxID: the SDK
//     reads the id as a float64 and answers with its int64 conversion, so
//     1.5 came back as 1, 1.5e308 as -9223372036854775808 and
//     9007199254740993 as 9007199254740992. Refused with "id": null;
//   - a message with neither "method", "result" nor "error" (a mis-cased
//     "Method": member names are case-sensitive): the SDK takes it for the
//     response to a call it never made and drops it, so its sender waits
//     forever. Refused with its id;
//   - a notification with a mis-cased "id" ("ID"), which nobody would
//     answer either. Refused with the id that member holds, if valid.
func DecodeStrict(data []byte) (jsonrpc.Message, error) {
	m, w, err := decode(data)
	if err != nil {
		return nil, err
	}
	if why := numericID(w.ID); why != "" {
		return nil, &Invalid{Reason: why}
	}
	switch m := m.(type) {
	case *jsonrpc.Request:
		if m.ID.IsValid() {
			break
		}
		if key, val, ok := misCased(data, "id"); ok { // a notification, unless its id was mis-cased
			return nil, &Invalid{ID: ExactID(val), Reason: fmt.Sprintf(`member names are case-sensitive: %q is not "id"`, clip(key))}
		}
	case *jsonrpc.Response:
		if len(w.Result) > 0 || w.Error != nil {
			break
		}
		why := `the message has no "method" (nor the "result" or "error" of a response)`
		if key, _, ok := misCased(data, "method"); ok {
			why = fmt.Sprintf(`member names are case-sensitive: %q is not "method"`, clip(key))
		}
		return nil, &Invalid{ID: m.ID, Reason: why}
	}
	return m, nil
}

// numericID says why raw, a message's id as written, is a number the SDK
// would not give back as written; "" when it is not a number, or is a
// whole number within ±MaxID. It reads the literal's digits (no float, no
// big number: an exponent cannot make it costly).
func numericID(raw json.RawMessage) string {
	s := string(bytes.TrimSpace(raw))
	if s == "" || (s[0] != '-' && (s[0] < '0' || s[0] > '9')) {
		return ""
	}
	if n, err := strconv.ParseInt(s, 10, 64); err == nil && n >= -MaxID && n <= MaxID {
		return "" // the common case
	}
	whole, inRange := wholeNumber(s)
	switch {
	case !whole:
		return fmt.Sprintf("the id %s is not a whole number: a numeric id must be one from -%d to %d (or use a string id)", clip(s), MaxID, MaxID)
	case !inRange:
		return fmt.Sprintf("the id %s is out of range: a numeric id must be a whole number from -%d to %d (or use a string id)", clip(s), MaxID, MaxID)
	}
	return ""
}

// wholeNumber reads a JSON number literal: whether it is a whole number,
// and whether its magnitude is at most MaxID.
func wholeNumber(s string) (whole, inRange bool) {
	s = strings.TrimPrefix(s, "-")
	mant, exp := s, ""
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		mant, exp = s[:i], s[i+1:]
	}
	intPart, frac, _ := strings.Cut(mant, ".")
	digits := strings.TrimLeft(intPart+frac, "0")
	shift := -len(frac) // value = digits × 10^(e + shift)
	trimmed := strings.TrimRight(digits, "0")
	shift += len(digits) - len(trimmed)
	digits = trimmed
	if digits == "" {
		return true, true // zero, however written
	}
	e, err := strconv.Atoi(strings.TrimPrefix(exp, "+"))
	if exp == "" {
		e, err = 0, nil
	}
	if err != nil { // an exponent too long for an int: far out either way
		return !strings.HasPrefix(exp, "-"), false
	}
	e += shift
	if e < 0 {
		return false, false // digits has no trailing zero: a fraction is left
	}
	if len(digits)+e > 16 { // MaxID has 16 digits
		return true, false
	}
	n, _ := strconv.ParseUint(digits+strings.Repeat("0", e), 10, 64)
	return true, n <= MaxID
}

// misCased finds a top-level member whose name is name in other letter
// cases ("Method" for "method"), and its value. A scan of the bytes
// rules most messages out before any decoding.
func misCased(data []byte, name string) (key string, val json.RawMessage, ok bool) {
	if !mayHaveMisCased(data, name) {
		return "", nil, false
	}
	var members map[string]json.RawMessage
	if unmarshal(data, &members) != nil {
		return "", nil, false
	}
	for k, v := range members {
		if k != name && strings.EqualFold(k, name) {
			return k, v, true
		}
	}
	return "", nil, false
}

// mayHaveMisCased reports whether data holds `"<name>"` in other letter
// cases anywhere (a member name, or a string value: misCased decodes to
// tell them apart).
func mayHaveMisCased(data []byte, name string) bool {
	for i := 0; i+len(name)+1 < len(data); i++ {
		if data[i] != '"' || data[i+len(name)+1] != '"' {
			continue
		}
		if w := data[i+1 : i+1+len(name)]; string(w) != name && strings.EqualFold(string(w), name) {
			return true
		}
	}
	return false
}

// ExactID is the id val (an "id" member's value as written) holds, if it
// is one DecodeStrict accepts: a string, or a whole number within ±MaxID;
// else an invalid ID (an error's "id": null).
func ExactID(val json.RawMessage) jsonrpc.ID {
	if len(val) == 0 || numericID(val) != "" {
		return jsonrpc.ID{}
	}
	var v any
	if unmarshal(val, &v) != nil {
		return jsonrpc.ID{}
	}
	id, _ := jsonrpc.MakeID(v)
	return id
}

// clip keeps what is quoted from a message short.
func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}
