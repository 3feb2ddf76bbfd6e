package cli

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/agent-tools/agent-tools/internal/proc"
	"github.com/agent-tools/agent-tools/internal/provider"
	"github.com/agent-tools/agent-tools/internal/text"
)

// Diagnostics reports, for doctor, each allowed program and nothing else:
// where it is, or that it is not found (a lookup, no run), and the first
// line of its version output only when the config marks the arguments that
// print it (`version: {git: [--version]}`; run under a short deadline). An
// allowlisted program is never run with arguments nobody declared: for some
// `--version` is not harmless.
func (p *Provider) Diagnostics() []provider.Diagnostic {
	names := p.opts.Spec.Programs()
	out := make([]provider.Diagnostic, len(names))
	var wg sync.WaitGroup
	for i, name := range names {
		wg.Go(func() { out[i] = p.probe(name) })
	}
	wg.Wait()
	return out
}

func (p *Provider) probe(name string) provider.Diagnostic {
	d := provider.Diagnostic{Provider: p.opts.ID, Item: name}
	pr := p.lookup(name)
	p.mu.Lock()
	p.programs[name] = pr
	p.mu.Unlock()
	if pr.err != nil {
		d.Status, d.Reason = "failed", pr.err.Error()
		return d
	}
	args := p.opts.Spec.Version[name]
	if len(args) == 0 {
		d.Status, d.Reason = "ok", pr.path+" (version not probed: no version arguments in the config)"
		return d
	}
	flag := strings.Join(args, " ")
	dir := ""
	if wd, err := p.workDir(firstNonEmpty(p.opts.Spec.Cwd, p.root)); err == nil {
		dir = wd
	}
	res, err := proc.Run(context.Background(), proc.Spec{
		Path: pr.path, Args: args, Dir: dir, Env: p.env,
		Timeout: p.opts.ProbeTimeout, Grace: -1, MaxOutput: 64 << 10,
	})
	switch {
	case err != nil:
		d.Status, d.Reason = "failed", fmt.Sprintf("%s: cannot run: %v", pr.path, err)
	case res.TimedOut:
		d.Status, d.Reason = "warning", fmt.Sprintf("%s: version unknown (%s did not answer within %s)", pr.path, flag, proc.FormatDuration(p.opts.ProbeTimeout))
	case res.ExitCode != 0:
		d.Status, d.Reason = "warning", fmt.Sprintf("%s: version unknown (%s exited with status %d)", pr.path, flag, res.ExitCode)
	default:
		v := versionLine(proc.Text(res.Stdout))
		if v == "" {
			v = versionLine(proc.Text(res.Stderr))
		}
		if v == "" {
			v = "(" + flag + " printed nothing)"
		}
		d.Status, d.Reason = "ok", pr.path+": "+v
	}
	return d
}

// versionLine is the first non-blank line of a version's output, clipped
// to 200 characters.
func versionLine(s string) string { return text.Clip(text.FirstLine(s), 200) }
