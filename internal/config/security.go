package config

import (
	"slices"

	"go.yaml.in/yaml/v3"
)

// Security is the security: section (issue 24).
type Security struct {
	// Pin is what happens when an upstream changes a tool's pinned
	// definition: "warn" (default: log, audit, doctor, console) or
	// "quarantine" (the tool is held back until a person approves it).
	Pin string `json:"pin,omitempty" yaml:"pin,omitempty"`
}

var (
	securityKeys = []string{"pin"}
	// PinModes are the values of security.pin.
	PinModes = []string{"warn", "quarantine"}
)

func (d *Decoder) security(v *yaml.Node, path string, out *Security) {
	d.mapping(v, path, securityKeys, func(_ string, _, v *yaml.Node, p string) {
		s, ok := d.str(v, p, false)
		if !ok {
			return
		}
		if s != "" && !slices.Contains(PinModes, s) {
			d.errAt(v, p, "unknown pin mode %q (want %s)", s, orList(PinModes))
			return
		}
		out.Pin = s
	})
}
