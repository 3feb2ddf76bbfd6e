package catalog

import (
	"encoding/json"
	"slices"
)

// Override is an operator's view of one tool (config `overrides:`, issue
// 24): the text the model reads, its annotations, argument defaults and
// arguments hidden from the model. The upstream still gets every argument.
type Override struct {
	Description string
	Title       string
	// ReadOnly and AlwaysConfirm replace the tool's annotations when set.
	ReadOnly, AlwaysConfirm *bool
	// Defaults are merged into the arguments before validation: an absent
	// argument takes its default; a hidden one always does.
	Defaults map[string]json.RawMessage
	// Hide are arguments removed from the published schema.
	Hide []string
}

// Apply returns t as the model sees it under o.
func (o Override) Apply(t Tool) Tool {
	if o.Description != "" {
		t.Description = o.Description
	}
	if o.Title != "" {
		t.Title = o.Title
	}
	if o.ReadOnly != nil {
		t.ReadOnly = *o.ReadOnly
	}
	if o.AlwaysConfirm != nil {
		t.AlwaysConfirm = *o.AlwaysConfirm
	}
	if len(o.Defaults) > 0 {
		t.Defaults, t.Hidden = o.Defaults, o.Hide
	}
	var shown map[string]json.RawMessage // visible defaults: published
	for k, v := range o.Defaults {
		if !slices.Contains(o.Hide, k) {
			if shown == nil {
				shown = map[string]json.RawMessage{}
			}
			shown[k] = v
		}
	}
	if len(o.Hide) > 0 || len(shown) > 0 {
		t.InputSchema = reshape(t.InputSchema, o.Hide, shown)
	}
	return t
}

// reshape removes hidden names from a schema's properties and required,
// and publishes each visible default: the property carries it as its
// "default" and leaves required, since an argument left out takes it (a
// model that sees it required never omits it). A schema it cannot read is
// returned as it is; a default for a property the schema does not declare
// changes nothing in it.
func reshape(schema json.RawMessage, hide []string, defaults map[string]json.RawMessage) json.RawMessage {
	var s map[string]json.RawMessage
	if json.Unmarshal(schema, &s) != nil {
		return schema
	}
	optional := slices.Clone(hide)
	if raw, ok := s["properties"]; ok {
		var props map[string]json.RawMessage
		if json.Unmarshal(raw, &props) == nil {
			for _, n := range hide {
				delete(props, n)
			}
			for n, v := range defaults {
				var prop map[string]json.RawMessage
				if json.Unmarshal(props[n], &prop) != nil || prop == nil {
					continue
				}
				prop["default"] = v
				if b, err := json.Marshal(prop); err == nil {
					props[n] = b
					optional = append(optional, n)
				}
			}
			s["properties"], _ = json.Marshal(props)
		}
	}
	if raw, ok := s["required"]; ok {
		var req []string
		if json.Unmarshal(raw, &req) == nil {
			req = slices.DeleteFunc(req, func(r string) bool { return slices.Contains(optional, r) })
			s["required"], _ = json.Marshal(req)
			if len(req) == 0 {
				delete(s, "required") // an empty list is invalid in draft-04 schemas
			}
		}
	}
	out, err := json.Marshal(s)
	if err != nil {
		return schema
	}
	return out
}

// MergeDefaults returns args with t's defaults for the arguments the
// model sees and left out (validation then checks them). Hidden arguments
// are not in the published schema, so they are filled after validation,
// right before the call (FillHidden). args that are not a JSON object are
// returned as they are, for validation to refuse.
func (t Tool) MergeDefaults(args json.RawMessage) json.RawMessage {
	if len(t.Defaults) == 0 || len(t.Defaults) == len(t.Hidden) {
		return args
	}
	return t.merge(args, false)
}

// FillHidden returns args with every hidden argument set to its default,
// whatever the model sent for it: the model does not see it, the value is
// the operator's.
func (t Tool) FillHidden(args json.RawMessage) json.RawMessage {
	if len(t.Hidden) == 0 {
		return args
	}
	return t.merge(args, true)
}

func (t Tool) merge(args json.RawMessage, hidden bool) json.RawMessage {
	m := map[string]json.RawMessage{}
	if len(args) > 0 && string(args) != "null" {
		if json.Unmarshal(args, &m) != nil || m == nil {
			return args
		}
	}
	for k, v := range t.Defaults {
		isHidden := slices.Contains(t.Hidden, k)
		if hidden && isHidden {
			m[k] = v
		} else if _, set := m[k]; !hidden && !isHidden && !set {
			m[k] = v
		}
	}
	out, err := json.Marshal(m)
	if err != nil {
		return args
	}
	return out
}
