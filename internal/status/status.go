// Package status holds what the runtime reports of itself (its providers'
// states) and the errors of switching and restarting providers: the values
// the app produces and its consumers (the console, the CLI, embedders) read,
// kept below both so that neither imports the other.
package status

import (
	"errors"
	"time"

	"github.com/agent-tools/agent-tools/internal/provider"
)

// Status is the runtime's state as runtime_status, doctor and a console
// show it: one value built from the live generation.
type Status struct {
	Version    string          `json:"version"`
	Mode       string          `json:"mode"`
	Config     string          `json:"config"`
	ProjectDir string          `json:"projectDir"`
	Providers  []ProviderState `json:"providers"`
	// Problems are the doctor lines that are not "ok".
	Problems []provider.Diagnostic `json:"problems"`
	// Embeddings is the search index's semantic stage (nil: none configured).
	Embeddings *Embeddings `json:"embeddings,omitempty"`
}

// Embeddings is the semantic stage's state: how many tools have vectors,
// the weight its ranking is fused at and where that weight comes from
// (index.semantic.weight, the self-check, or "self-check pending", when
// searches are lexical), and the self-check's figures.
type Embeddings struct {
	Tools        int        `json:"tools"`
	Embedded     int        `json:"embedded"`
	Degraded     bool       `json:"degraded,omitempty"`
	FusionWeight float64    `json:"fusionWeight"`
	WeightFrom   string     `json:"weightFrom"`
	SelfCheck    *SelfCheck `json:"selfCheck,omitempty"`
}

// SelfCheck is the held-out self-retrieval check of the model on the
// catalog: the lexical ranking, the model alone, and the fusion at each
// weight tried, by R@1, R@5 and MRR.
type SelfCheck struct {
	Tools   int             `json:"tools"`
	Queries int             `json:"queries"`
	Lexical Figures         `json:"lexical"`
	Model   Figures         `json:"model"`
	Fused   []WeightFigures `json:"fused"`
	Summary string          `json:"summary"`
}

// Figures are one ranking's scores on the self-check.
type Figures struct {
	R1  float64 `json:"r1"`
	R5  float64 `json:"r5"`
	MRR float64 `json:"mrr"`
}

// WeightFigures are the fused ranking's scores at one weight.
type WeightFigures struct {
	Weight float64 `json:"weight"`
	Figures
}

// Provider states (ProviderState.State).
const (
	// StateReady: enabled, and its tools are listed (from a live upstream,
	// or from the cache of one that starts on its first call).
	StateReady = "ready"
	// StateStarting: enabled, and its first start (or a restart) is still
	// in flight: a slow upstream, not a broken one.
	StateStarting = "starting"
	// StateFailed: enabled but not working; Reason says why.
	StateFailed = "failed"
	// StateNeedsLogin: an HTTP upstream waits for a person's login; Reason
	// names the command (agent-tools auth login <id>).
	StateNeedsLogin = "needs_login"
	// StateDisabled: switched off (by the config or at run time), or not
	// wanted and unbuildable.
	StateDisabled = "disabled"
)

// ProviderState is one provider's line of Status.
type ProviderState struct {
	ID      string `json:"id"`
	Kind    string `json:"kind"`
	Enabled bool   `json:"enabled"`
	Tools   int    `json:"tools"`
	Skills  int    `json:"skills"`
	// Error is the last tool listing's error (kept for scripts that read it;
	// State and Reason are the summary).
	Error string `json:"error,omitempty"`
	// Unavailable says why a declared provider could not be built (and so
	// cannot be enabled); it is then listed disabled, with no tools.
	Unavailable string `json:"unavailable,omitempty"`
	// State is ready, starting, failed or disabled (the State* constants);
	// Reason says why it failed (or why a disabled one cannot be enabled).
	State  string `json:"state"`
	Reason string `json:"reason,omitempty"`
	// LastError is the most recent failure, kept after a recovery, and
	// LastErrorAt when it happened (when the provider knows).
	LastError   string     `json:"lastError,omitempty"`
	LastErrorAt *time.Time `json:"lastErrorAt,omitempty"`
	// Restarts counts restarts, the operator's and the automatic ones (an
	// upstream recycled after a crash or a hung call); Restartable says
	// the app can restart it.
	Restarts    int  `json:"restarts"`
	Restartable bool `json:"restartable"`
}

// Errors of switching and restarting providers, for callers to branch on
// (errors.Is).
var (
	// ErrUnknownProvider: no source declares the id.
	ErrUnknownProvider = errors.New("unknown provider")
	// ErrUnavailable: the provider was declared but could not be built, so
	// it cannot be enabled; the app's UnavailableError matches it.
	ErrUnavailable = errors.New("provider cannot be enabled")
	// ErrNotRestartable: the provider has no process or session to restart
	// (in-process tools, scripts run per call), or it could not be built.
	ErrNotRestartable = errors.New("provider cannot be restarted")
	// ErrDisabled: the provider is switched off; enable it first (enabling
	// starts it).
	ErrDisabled = errors.New("provider is disabled")
)
