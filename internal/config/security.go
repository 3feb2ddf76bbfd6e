package config

import (
	"slices"

	"go.yaml.in/yaml/v3"

	"github.com/agent-tools/agent-tools/internal/scan"
)

// Security is the security: section.
type Security struct {
	// Pin is what happens when an upstream changes a tool's pinned
	// definition: "warn" (default: log, audit, doctor, console) or
	// "quarantine" (the tool is held back until a person approves it).
	Pin string `json:"pin,omitempty" yaml:"pin,omitempty"`
	// Scan is what the definition scanner does with a suspicious
	// definition: "off", "warn" (shown and audited, never held),
	// "hold-high" (the default, when unset: a high finding holds the tool
	// back until a person approves it, medium and low ones warn) or
	// "quarantine" (a high or medium finding holds it back). ScanMode is
	// the mode in force.
	Scan string `json:"scan,omitempty" yaml:"scan,omitempty"`
	// Results is the result guard's section (results.go).
	Results Results `json:"results,omitzero" yaml:"results,omitempty"`
}

// ScanMode is security.scan in force: scan.Default (hold-high) when it is
// not set. What each mode holds back is scan.Mode.Holding's to decide.
func (sec Security) ScanMode() scan.Mode {
	m, err := scan.ParseMode(sec.Scan)
	if err != nil {
		return scan.Default // not reached: the decoder refuses other values
	}
	return m
}

// PinModes are the values of security.pin.
var PinModes = []string{"warn", "quarantine"}

// ScanModes are the values of security.scan (unset is hold-high).
var ScanModes = []string{string(scan.Off), string(scan.Warn), string(scan.HoldHigh), string(scan.Quarantine)}

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
