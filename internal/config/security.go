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
	// Scan is what the definition scanner does with a suspicious
	// definition: "off", "warn" (default: shown and audited) or
	// "quarantine" (held back until a person approves it).
	Scan string `json:"scan,omitempty" yaml:"scan,omitempty"`
}

// PinModes are the values of security.pin.
var PinModes = []string{"warn", "quarantine"}

// ScanModes are the values of security.scan.
var ScanModes = []string{"off", "warn", "quarantine"}

func (sec *Security) decodeField(d *Decoder, key string, v *yaml.Node, p string) bool {
	modes, dst, what := PinModes, &sec.Pin, "pin"
	switch key {
	case "pin":
	case "scan":
		modes, dst, what = ScanModes, &sec.Scan, "scan"
	default:
		return false
	}
	s, ok := d.str(v, p, false)
	if !ok {
		return true
	}
	if s != "" && !slices.Contains(modes, s) {
		d.errAt(v, p, "unknown %s mode %q (want %s)", what, s, orList(modes))
		return true
	}
	*dst = s
	return true
}
