package workers

import (
	"encoding/json"
	"os"
	"sync"
	"time"
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
