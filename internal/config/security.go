package config

import (
	"slices"

	"go.yaml.in/yaml/v3"
)

// Security is the security: section.
type Security struct {
	// Pin is what happens when an upstream changes a tool's pinned
	// definition: "warn" (default: log, audit, doctor, console) or
	// "quarantine" (the tool is held back until a person approves it).
	Pin string `json:"pin,omitempty" yaml:"pin,omitempty"`
}

// PinModes are the values of security.pin.
var PinModes = []string{"warn", "quarantine"}

func (sec *Security) decodeField(d *Decoder, key string, v *yaml.Node, p string) bool {
	if key != "pin" {
		return false
	}
	s, ok := d.str(v, p, false)
	if !ok {
		return true
	}
	if s != "" && !slices.Contains(PinModes, s) {
		d.errAt(v, p, "unknown pin mode %q (want %s)", s, orList(PinModes))
		return true
	}
	sec.Pin = s
	return true
}
