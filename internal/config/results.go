package config

import (
	"slices"

	"go.yaml.in/yaml/v3"
)

// Results is security.results: what the result guard (internal/resultguard,
// docs/result-guard.md) does with the text a tool returns, where indirect
// prompt injection enters.
type Results struct {
	// Scan is what a suspicious result gets: "off" (nothing is scanned),
	// "warn" (the default, when unset: the findings go to the audit and a
	// short notice is appended to the result for the model), "redact"
	// (each span a high finding matched is replaced by a marker) or
	// "block" (a result with a high finding is refused, RESULT_BLOCKED).
	// ScanMode is the mode in force.
	Scan string `json:"scan,omitempty" yaml:"scan,omitempty"`
	// Spotlight wraps each text block a tool returns in a random
	// per-call delimiter, with a line before it that says the text is
	// the tool's data, not instructions (off by default: it changes
	// every result's text, which a client or a test reading results
	// verbatim would notice).
	Spotlight bool `json:"spotlight,omitempty" yaml:"spotlight,omitempty"`
}

// ResultScanModes are the values of security.results.scan.
var ResultScanModes = []string{"off", "warn", "redact", "block"}

// DefaultResultScan is security.results.scan when it is not set.
const DefaultResultScan = "warn"

// ScanMode is security.results.scan in force (DefaultResultScan when unset).
func (r Results) ScanMode() string {
	if r.Scan == "" {
		return DefaultResultScan
	}
	return r.Scan
}

// decodeField decodes security.results.scan, one of ResultScanModes;
// spotlight decodes by type (a boolean).
func (r *Results) decodeField(d *Decoder, key string, v *yaml.Node, p string) bool {
	if key != "scan" {
		return false
	}
	s, ok := d.str(v, p, false)
	if !ok {
		return true
	}
	if s != "" && !slices.Contains(ResultScanModes, s) {
		d.errAt(v, p, "unknown result scan mode %q (want %s)", s, orList(ResultScanModes))
		return true
	}
	r.Scan = s
	return true
}

var _ fieldDecoder = (*Results)(nil)
