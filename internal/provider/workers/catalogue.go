package workers

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/agent-tools/agent-tools/internal/proc"
	"github.com/agent-tools/agent-tools/internal/toolerr"
)

// catalogue is what a CLI itself says it offers, read without inference.
type catalogue struct {
	// Source says where it came from (a file and its age, a command).
	Source string `json:"source"`
	// Models maps each offered model to its efforts (nil: unknown).
	Models map[string][]string `json:"models,omitempty"`
	// Err is why nothing could be read ("" when readable).
	Err string `json:"error,omitempty"`
}

func (c *catalogue) readable() bool { return c != nil && c.Err == "" && c.Models != nil }

func (c *catalogue) names() []string {
	out := make([]string, 0, len(c.Models))
	for m := range c.Models {
		out = append(out, m)
	}
	slices.Sort(out)
	return out
}

// codexCatalogue reads models_cache.json in CODEX_HOME (default ~/.codex).
func codexCatalogue(env func(string) (string, bool)) *catalogue {
	home, ok := env("CODEX_HOME")
	if !ok || home == "" {
		h, ok := env("HOME")
		if !ok || h == "" {
			return &catalogue{Source: "models_cache.json", Err: "neither CODEX_HOME nor HOME is set"}
		}
		home = filepath.Join(h, ".codex")
	}
	path := filepath.Join(home, "models_cache.json")
	c := &catalogue{Source: path}
	b, err := os.ReadFile(path)
	if err != nil {
		c.Err = "unreadable: " + errText(err)
		return c
	}
	var doc struct {
		FetchedAt string `json:"fetched_at"`
		Models    []struct {
			Slug   string `json:"slug"`
			Levels []struct {
				Effort string `json:"effort"`
			} `json:"supported_reasoning_levels"`
		} `json:"models"`
	}
	if err := json.Unmarshal(b, &doc); err != nil || len(doc.Models) == 0 {
		c.Err = "not a codex model cache"
		return c
	}
	c.Models = map[string][]string{}
	for _, m := range doc.Models {
		var efforts []string
		for _, l := range m.Levels {
			efforts = append(efforts, l.Effort)
		}
		c.Models[m.Slug] = efforts
	}
	if doc.FetchedAt != "" {
		c.Source += " (fetched " + doc.FetchedAt + ")"
	} else if fi, err := os.Stat(path); err == nil {
		c.Source += " (written " + fi.ModTime().UTC().Format(time.RFC3339) + ")"
	}
	return c
}

// agyCatalogue runs `agy models`: a local listing, one model id per line.
func agyCatalogue(ctx context.Context, bin string, env []string, dir string) *catalogue {
	c := &catalogue{Source: "`agy models`"}
	res, err := proc.Run(ctx, proc.Spec{Path: bin, Args: []string{"models"}, Env: env, Dir: dir, Timeout: 15 * time.Second, MaxOutput: 1 << 20})
	if err != nil {
		c.Err = errText(err)
		return c
	}
	if res.ExitCode != 0 || res.TimedOut {
		c.Err = "`agy models` failed: " + strings.TrimSpace(proc.Tail(proc.Text(res.Stderr), 200))
		return c
	}
	c.Models = map[string][]string{}
	for _, l := range strings.Split(proc.Text(res.Stdout), "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			c.Models[strings.Fields(l)[0]] = nil
		}
	}
	return c
}

func errText(err error) string {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err.Error()
	}
	return err.Error()
}

// checkModel decides whether a job may run with model and effort. It never
// substitutes: an unknown model or effort is an error carrying the options;
// an unreadable catalogue is a warning ("unverified").
func (p *Provider) checkModel(ctx context.Context, model, effort string) (warnings []string, te *toolerr.Error) {
	if te := p.checkModelStatic(model, effort); te != nil {
		return nil, te
	}
	w := p.worker
	if effort != "" && !w.EffortsPerModel && w.EffortsUnverified {
		warnings = append(warnings, "effort unverified: "+w.Name+" has no effort list to check against")
	}
	if model == "" {
		if effort != "" && w.EffortsPerModel {
			warnings = append(warnings, "effort unverified: no model named, and "+w.Name+"'s efforts depend on the model")
		}
		return warnings, nil
	}
	cat := p.catalogue(ctx)
	if !cat.readable() {
		why := "no readable catalogue"
		if cat != nil && cat.Err != "" {
			why = cat.Source + ": " + cat.Err
		}
		return append(warnings, "model availability unverified ("+why+")"), nil
	}
	efforts, ok := cat.Models[model]
	if !ok {
		return nil, failure("requested_model_unavailable",
			"Pick one of available_models; nothing was substituted.",
			"%s does not offer model %q", w.Name, model).
			With("available_models", cat.names()).With("source", cat.Source)
	}
	if effort != "" && efforts != nil && !slices.Contains(efforts, effort) {
		return nil, failure("invalid_effort", "Pick one of supported_efforts for this model.",
			"model %q does not accept effort %q", model, effort).
			With("supported_efforts", efforts).With("source", cat.Source)
	}
	return warnings, nil
}

// checkModelStatic is what checkModel can decide from the config and the
// preset alone (no catalogue, no process): a model not routed here, an
// effort the CLI has no setting for or does not list.
func (p *Provider) checkModelStatic(model, effort string) *toolerr.Error {
	if model != "" && len(p.models) > 0 && !slices.Contains(p.models, model) {
		return failure("requested_model_unavailable",
			"Pick one of available_models (the provider's models: list), or ask the user to add the model to the config.",
			"model %q is not routed to provider %q", model, p.ID).
			With("available_models", p.models).With("source", "config (models:)")
	}
	w := p.worker
	if effort == "" || w.EffortsPerModel {
		return nil
	}
	switch {
	case w.Efforts == nil && !w.EffortsUnverified:
		hint := "Call again without effort."
		if w.Name == "agy" {
			hint = "agy encodes the reasoning level in the model id: pick a model id for the level and call again without effort."
		}
		return failure("invalid_effort", hint, "%s has no effort setting; effort %q cannot be honoured", w.Name, effort).
			With("supported_efforts", []string{})
	case w.Efforts != nil && !slices.Contains(w.Efforts, effort):
		return failure("invalid_effort", "Pick one of supported_efforts.",
			"%s does not accept effort %q", w.Name, effort).With("supported_efforts", w.Efforts)
	}
	return nil
}

// catalogue reads the CLI's own model list (nil when it has none).
func (p *Provider) catalogue(ctx context.Context) *catalogue {
	switch p.worker.Name {
	case "codex":
		return codexCatalogue(p.lookupEnv)
	case "agy":
		bin, err := p.executable()
		if err != nil {
			return &catalogue{Source: "`agy models`", Err: "agy is not installed"}
		}
		return agyCatalogue(ctx, bin, p.env(), p.root)
	}
	return nil
}
