// Package jsonrpcwire decodes a JSON-RPC message as the go-sdk's
// jsonrpc.DecodeMessage does, without its cost: the SDK decodes through a
// stream decoder that allocates a 32 KiB buffer for each of its two
// unmarshals (66 KB and ~50 µs for a small tools/call on a busy 2-core VM,
// against 0.3 KB and ~2 µs here). Decode makes the same checks with the
// same decoder (segmentio/encoding, case-sensitive field names, the same
// nesting limit) into a copy of the SDK's wire struct, and builds the same
// jsonrpc.Request or jsonrpc.Response. FuzzDecode holds it to the SDK's.
package jsonrpcwire

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	segjson "github.com/segmentio/encoding/json"
)

var errDepth = fmt.Errorf("json: exceeded maximum nesting depth of %d", maxDepth)

// Decode is jsonrpc.DecodeMessage (go-sdk v1.8.0) for one JSON value: the
// same messages accepted, the same ones refused (the errors' text may
// differ). RawMessage fields are copies: data may be reused afterwards.
func Decode(data []byte) (jsonrpc.Message, error) {
	m, _, err := decode(data)
	return m, err
}

// decode is Decode, with the wire form it read.
func decode(data []byte) (jsonrpc.Message, *wireDecode, error) {
	var w wireDecode
	if err := unmarshal(data, &w); err != nil {
		return nil, nil, fmt.Errorf("unmarshaling jsonrpc message: %w", err)
	}
	if w.VersionTag != "2.0" {
		return nil, nil, fmt.Errorf("invalid message version tag %q; expected %q", w.VersionTag, "2.0")
	}
	var rawID any // what the SDK's wire struct holds: its "id" decoded into an interface
	if len(w.ID) > 0 {
		if err := unmarshal(w.ID, &rawID); err != nil {
			return nil, nil, fmt.Errorf("unmarshaling jsonrpc message: %w", err)
		}
	}
	id, err := jsonrpc.MakeID(rawID)
	if err != nil {
		return nil, nil, err
	}
	if len(w.Method) > 0 {
		var method string
		if err := unmarshal(w.Method, &method); err != nil {
			return nil, nil, fmt.Errorf("unmarshaling jsonrpc message: %w", err)
		}
		return &jsonrpc.Request{Method: method, ID: id, Params: w.Params}, &w, nil
	}
	if !id.IsValid() {
		return nil, nil, errInvalidRequest
	}
	resp := &jsonrpc.Response{ID: id, Result: w.Result}
	if w.Error != nil {
		resp.Error = w.Error
	}
	return resp, &w, nil
}

var errInvalidRequest = errors.New("JSON RPC invalid request")

// Unmarshal decodes data into v as the go-sdk decodes a message's result
// or params (its internal/json.Unmarshal): see unmarshal.
func Unmarshal(data []byte, v any) error { return unmarshal(data, v) }

// unmarshal is the go-sdk's internal/json.Unmarshal: the nesting limit,
// then one value decoded case-sensitively (the rest of data is not looked
// at, as the SDK's stream decoder does not).
func unmarshal(data []byte, v any) error {
	if !withinDepth(data, maxDepth) {
		return errDepth
	}
	_, err := segjson.Parse(data, v, segjson.DontMatchCaseInsensitiveStructFields)
	return err
}

// wireDecode is the go-sdk's jsonrpc2.wireDecode (v1.8.0), but for ID,
// kept as written (decode reads it as the SDK does, and DecodeStrict looks
// at the number as written).
type wireDecode struct {
	VersionTag string          `json:"jsonrpc"`
	ID         json.RawMessage `json:"id,omitempty"` // decoded as the SDK's (an interface) by decode
	Method     json.RawMessage `json:"method"`
	Params     json.RawMessage `json:"params,omitempty"`
	Result     json.RawMessage `json:"result,omitempty"`
	Error      *jsonrpc.Error  `json:"error,omitempty"`
}

// maxDepth is the go-sdk's internal/json nesting limit.
const maxDepth = 1000

// withinDepth is the go-sdk's internal/json checkMaxDepth.
func withinDepth(data []byte, max int) bool {
	depth, inString, escaped := 0, false, false
	for _, b := range data {
		if inString {
			switch {
			case escaped:
				escaped = false
			case b == '\\':
				escaped = true
			case b == '"':
				inString = false
			}
			continue
		}
		switch b {
		case '"':
			inString = true
		case '{', '[':
			depth++
			if depth > max {
				return false
			}
		case '}', ']':
			if depth > 0 {
				depth--
			}
		}
	}
	return true
}

// DecodeBatch is what the go-sdk's stdio connection (v1.8.0, mcp.ioConn's
// readBatch) makes of one JSON value read from the stream: a JSON array is
// a batch of messages, each decoded as Decode does (an empty array, or one
// element that is not a message, is an error for the whole batch); anything
// else is one message. isBatch reports which it was taken for. data is one
// JSON value (what follows the first value is not looked at).
func DecodeBatch(data []byte) (msgs []jsonrpc.Message, isBatch bool, err error) {
	var raw []json.RawMessage
	if unmarshal(data, &raw) == nil {
		if len(raw) == 0 {
			return nil, true, errEmptyBatch
		}
		msgs = make([]jsonrpc.Message, 0, len(raw))
		for _, r := range raw {
			m, err := Decode(r)
			if err != nil {
				return nil, true, err
			}
			msgs = append(msgs, m)
		}
		return msgs, true, nil
	}
	m, err := Decode(data)
	if err != nil {
		return nil, false, err
	}
	return []jsonrpc.Message{m}, false, nil
}

var errEmptyBatch = errors.New("empty batch")
