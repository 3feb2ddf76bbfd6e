// Package status holds what the runtime reports of itself (its providers'
// states) and the errors of switching and restarting providers: the values
// the app produces and its consumers (the console, the CLI, embedders) read,
// kept below both so that neither imports the other.
package status

import (
	"errors"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/agent-tools/agent-tools/internal/provider"
)

// HeldEntry is a provider added from a registry that waits for a person to
// approve what it runs (pin: quarantine): nothing of it was started.
type HeldEntry struct {
	Provider string `json:"provider"`
	Name     string `json:"name"`
	Version  string `json:"version"`
	Digest   string `json:"digest"`
	// Reason is doctor's: why it waits, and the command that approves it.
	Reason string `json:"reason"`
}

// Status is the runtime's state as runtime_status, doctor and a console
// show it: one value built from the live generation.
type Status struct {
	Version    string          `json:"version"`
	Mode       string          `json:"mode"`
	Config     string          `json:"config,omitempty"`     // its path: not in ForModel
	ProjectDir string          `json:"projectDir,omitempty"` // not in ForModel
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

// ForModel is s as the runtime_status tool reports it to a model, and to
// the scripts a model runs: without the config's path or the project's,
// and with the paths its messages name written relative to places the
// model needs no address for ("<config>", "<config dir>/…", "<project>/…",
// "~/…"). Where the user keeps their files is not the model's to know, nor
// a read-only script's to go looking in. home is the user's home directory
// ("" = none). Doctor, the CLI and the console read s itself.
func (s Status) ForModel(home string) Status {
	var places [][2]string // path, what stands for it
	add := func(path, name string) {
		if path == "" {
			return
		}
		path = filepath.Clean(path)
		if path == string(filepath.Separator) || path == "." {
			return // "/" is in every path: nothing to hide
		}
		places = append(places, [2]string{path, name})
	}
	add(s.Config, "<config>")
	add(s.ProjectDir, "<project>") // before the config's directory: usually the same one
	if s.Config != "" {
		add(filepath.Dir(s.Config), "<config dir>")
	}
	add(home, "~")
	sort.SliceStable(places, func(i, j int) bool { return len(places[i][0]) > len(places[j][0]) }) // the closest place first
	hide := func(text string) string { return hidePaths(text, places) }

	out := s
	out.Config, out.ProjectDir = "", ""
	out.Providers = make([]ProviderState, len(s.Providers))
	for i, p := range s.Providers {
		p.Error, p.Unavailable, p.Reason, p.LastError = hide(p.Error), hide(p.Unavailable), hide(p.Reason), hide(p.LastError)
		out.Providers[i] = p
	}
	if s.Problems != nil {
		out.Problems = make([]provider.Diagnostic, len(s.Problems))
		for i, d := range s.Problems {
			d.Item, d.Reason = hide(d.Item), hide(d.Reason)
			out.Problems[i] = d
		}
	}
	return out
}

// hidePaths writes each of places' paths in text as its name: where a path
// (or a path under it) begins, at a position that is not inside a longer
// name ("/home/u/proj" is not in "/home/u/project2").
func hidePaths(text string, places [][2]string) string {
	if text == "" {
		return text
	}
	var b strings.Builder
	for i := 0; i < len(text); {
		matched := false
		for _, pl := range places {
			if strings.HasPrefix(text[i:], pl[0]) && endsName(text, i+len(pl[0])) && (i == 0 || !nameByte(text[i-1])) {
				b.WriteString(pl[1])
				i += len(pl[0])
				matched = true
				break
			}
		}
		if !matched {
			b.WriteByte(text[i])
			i++
		}
	}
	return b.String()
}

// endsName reports whether a path ending at text[i] is whole there: the
// text ends, or a separator or a character no file name would end on follows.
func endsName(text string, i int) bool {
	return i >= len(text) || !nameByte(text[i]) || text[i] == '.' && (i+1 >= len(text) || !nameByte(text[i+1]))
}

// nameByte reports whether c may continue a file name (a path goes on).
func nameByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.' || c >= 0x80
}
