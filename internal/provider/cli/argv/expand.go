package argv

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"strconv"
	"strings"

	"github.com/agent-tools/agent-tools/internal/text"
)

// Limits on an expanded argv, below what execve accepts on Linux (128 KiB
// per argument, about 2 MiB for arguments and environment together), so
// that an oversized call is a clear argument error instead of E2BIG.
const (
	MaxElemBytes  = 128 << 10
	MaxTotalBytes = 1 << 20
	MaxElems      = 10000
)

// ArgError is a problem with the arguments of a call (not of the template):
// a missing required parameter, a wrong type, a NUL byte, a value starting
// with "-" where it would be read as an option.
type ArgError struct {
	Param string // "" when it concerns the whole call
	Msg   string
	Hint  string
}

func (e *ArgError) Error() string {
	if e.Param == "" {
		return e.Msg
	}
	return fmt.Sprintf("parameter %q: %s", e.Param, e.Msg)
}

// DecodeArgs decodes a call's arguments: a JSON object, or empty/null for
// no arguments. Numbers stay json.Number so that they print exactly.
func DecodeArgs(raw []byte) (map[string]any, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return map[string]any{}, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil || m == nil {
		return nil, &ArgError{Msg: "the arguments must be a JSON object", Hint: `Pass the arguments as a JSON object, e.g. {"name": "value"}.`}
	}
	if dec.More() {
		return nil, &ArgError{Msg: "the arguments must be one JSON object"}
	}
	return m, nil
}

// Normalize turns a Go value (from YAML, say) into the JSON value
// DecodeArgs would give for it.
func Normalize(v any) (any, error) {
	if v == nil {
		return nil, nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var out any
	err = dec.Decode(&out)
	return out, err
}

// Expand renders the template with args (as DecodeArgs returns them).
// Absent arguments take their parameter's default; arguments that name no
// parameter are refused.
func (t *Template) Expand(params map[string]Param, args map[string]any) ([]string, error) {
	vals := make(map[string]any, len(params))
	for name, v := range args {
		if _, ok := params[name]; !ok {
			return nil, &ArgError{Param: name, Msg: "is not a parameter of this tool", Hint: "Use only the parameters in the tool's input schema."}
		}
		if v != nil {
			vals[name] = v
		}
	}
	for name, p := range params {
		if _, ok := vals[name]; ok {
			continue
		}
		switch {
		case p.Default != nil:
			vals[name] = p.Default
		case p.Required:
			return nil, &ArgError{Param: name, Msg: "is required", Hint: "Pass every parameter the input schema lists as required."}
		}
	}
	out := make([]string, 0, len(t.Elems))
	total := 0
	add := func(s string) error {
		if len(s) > MaxElemBytes {
			return &ArgError{Msg: fmt.Sprintf("an argument of %d bytes is longer than the %d a program argument may have", len(s), MaxElemBytes)}
		}
		total += len(s) + 1
		if total > MaxTotalBytes || len(out) >= MaxElems {
			return &ArgError{Msg: fmt.Sprintf("the command line would exceed %d bytes or %d arguments", MaxTotalBytes, MaxElems), Hint: "Pass fewer or shorter values."}
		}
		out = append(out, s)
		return nil
	}
	for i, e := range t.Elems {
		guarded := t.sep >= 0 && i > t.sep
		if e.Cond != "" {
			v, ok := vals[e.Cond]
			if !ok {
				continue
			}
			b, isBool := v.(bool)
			if !isBool {
				return nil, &ArgError{Param: e.Cond, Msg: fmt.Sprintf("want true or false, got %s", kind(v))}
			}
			if b {
				if err := add(e.CondText); err != nil {
					return nil, err
				}
			}
			continue
		}
		if name, whole := e.Whole(); whole {
			v, ok := vals[name]
			if !ok {
				continue // an absent optional parameter drops its element
			}
			items := []any{v}
			if list, isList := v.([]any); isList && params[name].Type == "array" {
				items = list
			}
			for _, it := range items {
				s, err := render(name, params[name], it, len(items) > 1 || params[name].Type == "array")
				if err != nil {
					return nil, err
				}
				if err := checkValue(name, s, !guarded); err != nil {
					return nil, err
				}
				if err := add(s); err != nil {
					return nil, err
				}
			}
			continue
		}
		var b strings.Builder
		drop := false
		for _, p := range e.Parts {
			if p.Param == "" {
				b.WriteString(p.Text)
				continue
			}
			v, ok := vals[p.Param]
			if !ok {
				drop = true // an element naming an absent parameter goes whole
				break
			}
			if _, isList := v.([]any); isList && params[p.Param].Type == "array" {
				return nil, &ArgError{Param: p.Param, Msg: "an array cannot be part of a longer argument"}
			}
			s, err := render(p.Param, params[p.Param], v, false)
			if err != nil {
				return nil, err
			}
			if err := checkValue(p.Param, s, false); err != nil {
				return nil, err
			}
			b.WriteString(s)
		}
		if drop {
			continue
		}
		s := b.String()
		if !guarded && e.startsWithValue() && strings.HasPrefix(s, "-") {
			return nil, dashError(e.Parts[firstParam(e)].Param)
		}
		if err := add(s); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// checkValue refuses NUL bytes (no program argument can carry them) and,
// when the value starts an element unguarded by "--", a leading "-".
func checkValue(name, s string, leading bool) error {
	if strings.IndexByte(s, 0) >= 0 {
		return &ArgError{Param: name, Msg: "contains a NUL byte, which no program argument can hold", Hint: "Remove the NUL (\\u0000) characters from the value."}
	}
	if leading && strings.HasPrefix(s, "-") {
		return dashError(name)
	}
	return nil
}

func dashError(name string) error {
	return &ArgError{Param: name,
		Msg:  `starts with "-", so the program would read it as an option`,
		Hint: `Values of this parameter cannot start with "-" (the tool's command line has no "--" before it). If you meant a file name, prefix it with ./ as in ./-name.`}
}

// render prints one value as an argument: strings as is, numbers and
// booleans as their JSON text (integers without exponent or fraction),
// objects and nested arrays as compact JSON.
func render(name string, p Param, v any, item bool) (string, error) {
	typ := p.Type
	if item {
		typ = p.Items
	}
	switch x := v.(type) {
	case string:
		if typ != "" && typ != "string" {
			return "", &ArgError{Param: name, Msg: fmt.Sprintf("want %s, got a string", article(typ))}
		}
		return x, nil
	case bool:
		if typ != "" && typ != "boolean" {
			return "", &ArgError{Param: name, Msg: fmt.Sprintf("want %s, got a boolean", article(typ))}
		}
		return strconv.FormatBool(x), nil
	case json.Number:
		switch typ {
		case "", "number":
			return number(x)
		case "integer":
			s, err := integer(x)
			if err != nil {
				return "", &ArgError{Param: name, Msg: err.Error()}
			}
			return s, nil
		}
		return "", &ArgError{Param: name, Msg: fmt.Sprintf("want %s, got a number", article(typ))}
	case []any, map[string]any:
		if typ != "" && typ != "array" && typ != "object" {
			return "", &ArgError{Param: name, Msg: fmt.Sprintf("want %s, got %s", article(typ), kind(v))}
		}
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(x); err != nil {
			return "", &ArgError{Param: name, Msg: err.Error()}
		}
		return strings.TrimSuffix(b.String(), "\n"), nil
	case nil:
		return "", &ArgError{Param: name, Msg: "null is not a value here"}
	}
	return "", &ArgError{Param: name, Msg: fmt.Sprintf("unsupported value %T", v)}
}

func kind(v any) string {
	switch v.(type) {
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case json.Number:
		return "a number"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return "null"
}

// integer prints an integral JSON number in plain decimal (1e3 → 1000).
func integer(n json.Number) (string, error) {
	if i, err := strconv.ParseInt(string(n), 10, 64); err == nil {
		return strconv.FormatInt(i, 10), nil
	}
	f, _, err := big.ParseFloat(string(n), 10, 256, big.ToNearestEven)
	if err != nil || !f.IsInt() {
		return "", errors.New("want an integer, got " + clip(string(n)))
	}
	if f.MantExp(nil) > 4096 {
		return "", errors.New("integer too large")
	}
	i, _ := f.Int(nil)
	return i.String(), nil
}

// number prints a JSON number without an exponent when it is reasonable.
func number(n json.Number) (string, error) {
	s := string(n)
	if !strings.ContainsAny(s, "eE") {
		return s, nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return s, nil // out of float range: the JSON text is the best we have
	}
	return strconv.FormatFloat(f, 'f', -1, 64), nil
}

// clip shortens a value quoted in an error, never splitting a character.
func clip(s string) string { return text.Clip(s, 40) }
