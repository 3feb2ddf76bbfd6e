package pipeline

// ResultFinding is one rule the result guard (Options.ResultGuard,
// internal/resultguard) found in the text a tool returned: the audit
// record lists them as result_findings.
type ResultFinding struct {
	Rule     string `json:"rule"`
	Severity string `json:"severity"`
	// Where is the place in the result: "content[0]", "text",
	// "structuredContent.items[2].body", "output" (a tool's own error).
	Where string `json:"where"`
	// Action is what the guard did: warned, redacted or blocked.
	Action string `json:"action"`
}
