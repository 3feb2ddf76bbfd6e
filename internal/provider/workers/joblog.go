package workers

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/agent-tools/agent-tools/internal/provider"
)

// jobRecord is one line of the JSONL job log: no secret, no environment, no
// prompt or output unless debug is on.
type jobRecord struct {
	Time       time.Time `json:"time"`
	Job        string    `json:"job"`
	Provider   string    `json:"provider"`
	Model      string    `json:"model,omitempty"`
	Effort     string    `json:"effort,omitempty"`
	Mode       string    `json:"mode"`
	Status     string    `json:"status"`
	DurationMS int64     `json:"duration_ms"`
	ExitCode   *int      `json:"exit_code,omitempty"`
	Category   string    `json:"error_category,omitempty"`
	Prompt     string    `json:"prompt,omitempty"` // debug only
	Output     string    `json:"output,omitempty"` // debug only
}

// jobLog appends records to a file opened per write (safe across reloads).
type jobLog struct {
	mu   sync.Mutex
	path string
}

func (l *jobLog) write(r jobRecord) error {
	if l == nil || l.path == "" {
		return nil
	}
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	// The folder is created on first use (the README's .agent-tools/ does
	// not exist in a fresh project); 0o700: the log names tasks and models.
	if err := os.MkdirAll(filepath.Dir(l.path), 0o700); err != nil {
		return fmt.Errorf("job log folder: %w", err)
	}
	f, err := os.OpenFile(l.path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(append(b, '\n'))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// diagnose says for doctor whether the job log can be written: its folder
// exists or can be created, and the file opens for append. It creates the
// folder (as the first job would) but writes no record. nil when no job log
// is configured.
func (l *jobLog) diagnose(id string) *provider.Diagnostic {
	if l == nil || l.path == "" {
		return nil
	}
	d := &provider.Diagnostic{Provider: id, Item: "jobLog", Status: "ok", Reason: l.path}
	l.mu.Lock()
	defer l.mu.Unlock()
	err := os.MkdirAll(filepath.Dir(l.path), 0o700)
	if err == nil {
		var f *os.File
		if f, err = os.OpenFile(l.path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600); err == nil {
			err = f.Close()
		}
	}
	if err != nil {
		d.Status, d.Reason = "warning", "job log "+l.path+" cannot be written: "+errText(err)
	}
	return d
}
