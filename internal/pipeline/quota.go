package pipeline

// QuotaRefusal says which quota refused a call (internal/quota): the
// limit ("rate", "concurrent" or "tokens"), the quota's index in quotas:
// and its tool globs, and when to come back. It is audited as quota and
// counted by metrics (quota_refusals_total).
type QuotaRefusal struct {
	Limit        string   `json:"limit"`
	Index        int      `json:"index"`
	Tools        []string `json:"tools,omitempty"`
	RetryAfterMS int64    `json:"retry_after_ms"`
	// EstTokensUsed is, for a tokens limit, the result tokens counted in
	// this window: Response.ResultTokens of each call (o200k_base, or
	// characters/4 where that says estimated). The name is kept from when
	// every count was characters/4.
	EstTokensUsed int64 `json:"est_tokens_used,omitempty"`
}
