package proc

import (
	"context"
	"errors"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agent-tools/agent-tools/internal/toolerr"
)

func TestShape(t *testing.T) {
	subj := Subject{What: `cli tool "x"`, Timeout: 2 * time.Second}
	tests := []struct {
		name     string
		res      Result
		wantCode toolerr.Code // "" = a result, no error
		wantErr  bool         // IsError result
		wantText string
	}{
		{"ok", Result{Stdout: []byte("hi\n")}, "", false, "hi\n"},
		{"stderr appended", Result{Stdout: []byte("a"), Stderr: []byte("w")}, "", false, "a\n[stderr]\nw"},
		{"truncated", Result{Stdout: []byte("a"), StdoutTruncated: 5}, "", false, "a\n[stdout truncated: 5 bytes dropped]"},
		{"exit 3", Result{ExitCode: 3, Stderr: []byte("bad")}, "", true, "[stderr]\nbad"},
		{"exit no output", Result{ExitCode: 2}, "", true, "(no output; exit status 2)"},
		{"signal", Result{ExitCode: -1, Signal: syscall.SIGKILL}, "", true, "(no output; killed by signal: killed)"},
		{"timeout", Result{TimedOut: true, Stdout: []byte("partial")}, toolerr.Timeout, false, ""},
		{"cancelled", Result{Cancelled: true}, toolerr.Cancelled, false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := Shape(context.Background(), &tt.res, subj)
			if tt.wantCode != "" {
				var te *toolerr.Error
				if !errors.As(err, &te) || te.Code != tt.wantCode {
					t.Fatalf("err = %v, want code %s", err, tt.wantCode)
				}
				if tt.wantCode == toolerr.Timeout {
					if te.Details["timeout_ms"] != int64(2000) || te.Details["stdout_tail"] != "partial" {
						t.Errorf("details = %v", te.Details)
					}
					if !strings.Contains(te.Message, `cli tool "x" timed out after 2s`) {
						t.Errorf("message = %q", te.Message)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if out.IsError != tt.wantErr || out.Text != tt.wantText {
				t.Errorf("got IsError=%v text=%q, want %v %q", out.IsError, out.Text, tt.wantErr, tt.wantText)
			}
			if tt.wantErr && out.Details["exit_code"] != tt.res.ExitCode {
				t.Errorf("details = %v", out.Details)
			}
		})
	}
}

func TestShapeContextDeadline(t *testing.T) {
	tests := []struct {
		name     string
		ran      time.Duration
		timeout  time.Duration
		wantMS   int64
		wantText string
	}{
		{"no timeout known: what it ran", 1500 * time.Millisecond, 0, 1500, "after 1.5s"},
		// The pipeline's deadline is the tool's timeout, set a moment
		// before the process started: 299ms of run is the 300ms timeout.
		{"a hair under the tool's timeout", 299 * time.Millisecond, 300 * time.Millisecond, 300, "after 300ms"},
		// A shorter deadline (the client's) is not the tool's timeout.
		{"well under the timeout: what it ran", 100 * time.Millisecond, 300 * time.Millisecond, 100, "after 100ms"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
			defer cancel()
			_, err := Shape(ctx, &Result{Cancelled: true, Duration: tc.ran}, Subject{What: "w", Timeout: tc.timeout})
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("err = %v, want it to wrap the context deadline", err)
			}
			var te *toolerr.Error
			if !errors.As(err, &te) || te.Code != toolerr.Timeout || te.Details["timeout_ms"] != tc.wantMS || !strings.Contains(te.Message, tc.wantText) {
				t.Fatalf("err = %#v", err)
			}
		})
	}
}

func TestHelpers(t *testing.T) {
	if got := Tail("abcdé", 2); got != "dé" {
		t.Errorf("Tail = %q", got)
	}
	for d, want := range map[time.Duration]string{time.Minute: "1m", 61 * time.Minute: "1h1m", 90 * time.Second: "1m30s", 2 * time.Hour: "2h", 300 * time.Millisecond: "300ms", 30 * time.Second: "30s"} {
		if got := FormatDuration(d); got != want {
			t.Errorf("FormatDuration(%v) = %q", d, got)
		}
	}
}
