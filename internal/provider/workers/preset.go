package workers

import (
	"fmt"
	"strings"
	"time"
)

// invocation is what one job asks of a worker CLI.
type invocation struct {
	Mode, Model, Effort string
	Project             string // the directory the worker works in
	Prompt              string
	PromptFile          string // set when the prompt travels in a file
	OutputFile          string // a temp file the worker may write its final answer to
	Timeout             time.Duration
	Extra               []string // the config's args, before the prompt
}

func (inv invocation) writes() bool { return inv.Mode == "implement" }

// worker is one CLI protocol: a preset or a custom declaration.
type worker struct {
	Name string
	// Bin is the default executable.
	Bin string
	// Argv builds the arguments after argv[0].
	Argv func(inv invocation) []string
	// Transport is how the prompt travels: stdin, argument or file.
	Transport string
	// ArgMax is the longest prompt passed as an argument before a temp file
	// is used instead (0 = never switch).
	ArgMax int
	// Output is the parser: jsonl, json or text.
	Output string
	// Answer extracts the final answer from parsed output.
	Answer answerRule
	// Efforts are the effort names the CLI accepts; nil means the CLI has
	// no effort setting at all (an effort is then invalid_effort), and
	// EffortsUnverified means it has one whose values we cannot list.
	Efforts           []string
	EffortsUnverified bool
	// EffortsPerModel: efforts come from the model catalogue (codex).
	EffortsPerModel bool
	// Catalogue names where model availability comes from.
	Catalogue string
	// ReadOnly says what analyze/review enforce with this CLI.
	ReadOnly string
	// Flags are every flag Argv can emit and HelpArgs print them; a test
	// checks them against the installed CLI (agy: not on npm → unverified).
	Flags        []string
	HelpArgs     [][]string
	FlagsChecked bool
	// VersionArgs prints the version; AuthArgs probes login state (exit 0 =
	// logged in) without inference; nil = no cheap probe (unverified).
	VersionArgs []string
	AuthArgs    []string
}

// agyArgMax keeps an argument prompt far below Windows' 32,767-character
// command line; longer prompts go through a temp file.
const agyArgMax = 24000

// presets are the built-in worker protocols. Their flags are those of the
// CLIs pinned in interop/package-lock.json (checked by TestPresetFlagsExist).
var presets = map[string]*worker{
	"codex": {
		Name: "codex", Bin: "codex", Transport: "stdin", Output: "jsonl",
		Answer: answerRule{OutputFile: true, Path: "item.text", Where: [2]string{"item.type", "agent_message"}},
		Argv: func(inv invocation) []string {
			a := []string{"exec", "--json", "--skip-git-repo-check"}
			if inv.Model != "" {
				a = append(a, "-m", inv.Model)
			}
			if inv.Effort != "" {
				a = append(a, "-c", fmt.Sprintf("model_reasoning_effort=%q", inv.Effort))
			}
			sandbox := "read-only"
			if inv.writes() {
				sandbox = "workspace-write"
			}
			a = append(a, "-s", sandbox, "-C", inv.Project, "-o", inv.OutputFile, "--color", "never")
			return append(append(a, inv.Extra...), "-") // "-": the prompt is on stdin
		},
		EffortsPerModel: true,
		Catalogue:       "models_cache.json in CODEX_HOME",
		ReadOnly:        "enforced: codex's own read-only sandbox (-s read-only); implement runs with -s workspace-write",
		Flags:           []string{"--json", "--skip-git-repo-check", "-m", "-c", "-s", "-C", "-o", "--color"},
		HelpArgs:        [][]string{{"exec", "--help"}},
		FlagsChecked:    true,
		VersionArgs:     []string{"--version"}, AuthArgs: []string{"login", "status"},
	},
	"claude": {
		Name: "claude", Bin: "claude", Transport: "stdin", Output: "json",
		Answer: answerRule{Path: "result", ErrorFlag: "is_error"},
		Argv: func(inv invocation) []string {
			a := []string{"-p", "--output-format", "json"}
			if inv.Model != "" {
				a = append(a, "--model", inv.Model)
			}
			if inv.Effort != "" {
				a = append(a, "--effort", inv.Effort)
			}
			mode := "plan"
			if inv.writes() {
				mode = "acceptEdits"
			}
			return append(append(a, "--permission-mode", mode), inv.Extra...)
		},
		Efforts:      []string{"low", "medium", "high", "xhigh", "max"},
		Catalogue:    "none: claude has no offline model list (unverified)",
		ReadOnly:     "enforced by claude's permission mode (--permission-mode plan: no edit or shell tools run); no OS sandbox",
		Flags:        []string{"-p", "--output-format", "--model", "--effort", "--permission-mode"},
		HelpArgs:     [][]string{{"--help"}},
		FlagsChecked: true,
		VersionArgs:  []string{"--version"},
	},
	"gemini": {
		Name: "gemini", Bin: "gemini", Transport: "stdin", Output: "json",
		Answer: answerRule{Path: "response", ErrorPath: "error.message"},
		Argv: func(inv invocation) []string {
			// -p makes the run headless; gemini appends it to the prompt read
			// from stdin, so the whole task travels on stdin.
			a := []string{"-p", geminiTail, "--output-format", "json"}
			if inv.Model != "" {
				a = append(a, "-m", inv.Model)
			}
			mode := "plan"
			if inv.writes() {
				mode = "auto_edit"
			}
			return append(append(a, "--approval-mode", mode), inv.Extra...)
		},
		Catalogue:    "none: gemini has no offline model list (unverified)",
		ReadOnly:     "enforced by gemini's approval mode (--approval-mode plan, its read-only mode); no OS sandbox unless the user enables one",
		Flags:        []string{"-p", "--output-format", "-m", "--approval-mode"},
		HelpArgs:     [][]string{{"--help"}},
		FlagsChecked: true,
		VersionArgs:  []string{"--version"},
	},
	"agy": {
		Name: "agy", Bin: "agy", Transport: "argument", ArgMax: agyArgMax, Output: "json",
		Answer: answerRule{Path: "result", Alternatives: []string{"response", "text"}},
		Argv: func(inv invocation) []string {
			prompt := inv.Prompt
			if inv.PromptFile != "" {
				prompt = "Read the full task in the file " + inv.PromptFile + " and carry it out."
			}
			a := []string{"--print", prompt}
			if inv.Model != "" {
				a = append(a, "--model", inv.Model)
			}
			mode := "plan"
			if inv.writes() {
				mode = "accept-edits"
			}
			a = append(a, "--output-format", "json", "--mode", mode, "--add-dir", inv.Project,
				"--dangerously-skip-permissions", "--print-timeout", fmt.Sprintf("%ds", int(inv.Timeout.Seconds())))
			if inv.writes() {
				// agy ignores --mode plan when slash commands are disabled
				// (analyze and review must not write): only implement runs may disable them.
				a = append(a, "--disable-slash-commands")
			}
			return append(a, inv.Extra...)
		},
		Catalogue:    "`agy models` (live list)",
		ReadOnly:     "asked only: agy's --mode plan (no sandbox); git attribution reports any write",
		Flags:        []string{"--print", "--model", "--output-format", "--mode", "--add-dir", "--dangerously-skip-permissions", "--print-timeout", "--disable-slash-commands"},
		FlagsChecked: false, // agy is not on npm: flags from its vendor's documentation, unverified
		VersionArgs:  []string{"--version"},
	},
}

// geminiTail is the -p text gemini appends to the prompt read from stdin.
const geminiTail = "Carry out the task above."

// custom builds the protocol of a declared (preset-less) worker.
func custom(w *Spec) *worker {
	def := w.Worker
	if def == nil {
		def = &WorkerDef{}
	}
	wk := &worker{
		Name: "custom", Bin: w.Command, Transport: or(def.Prompt, "stdin"), Output: or(def.Output, "text"),
		Catalogue: "config (models:)", ReadOnly: "asked only: a custom worker's read-only mode is whatever its modeArgs do",
	}
	wk.Answer = answerRule{Path: def.Answer}
	if len(def.EffortArgs) > 0 {
		wk.Efforts = def.Efforts
		wk.EffortsUnverified = len(def.Efforts) == 0
	}
	promptArgs := def.PromptArgs
	if len(promptArgs) == 0 {
		switch wk.Transport {
		case "argument":
			promptArgs = []string{"{prompt}"}
		case "file":
			promptArgs = []string{"{prompt_file}"}
		}
	}
	template := w.Args
	wk.Answer.OutputFile = mentions(template, "{output_file}") || mentions(promptArgs, "{output_file}")
	wk.Argv = func(inv invocation) []string {
		vars := map[string]string{
			"prompt": inv.Prompt, "prompt_file": inv.PromptFile, "output_file": inv.OutputFile,
			"model": inv.Model, "effort": inv.Effort, "project": inv.Project, "mode": inv.Mode,
		}
		a := expand(template, vars)
		a = append(a, expand(def.ModeArgs[inv.Mode], vars)...)
		if inv.Model != "" {
			a = append(a, expand(def.ModelArgs, vars)...)
		}
		if inv.Effort != "" {
			a = append(a, expand(def.EffortArgs, vars)...)
		}
		if wk.Transport != "stdin" {
			a = append(a, expand(promptArgs, vars)...)
		}
		return a
	}
	return wk
}

func mentions(list []string, s string) bool {
	for _, a := range list {
		if strings.Contains(a, s) {
			return true
		}
	}
	return false
}

// expand replaces {name} placeholders; each element stays one argument.
func expand(template []string, vars map[string]string) []string {
	out := make([]string, 0, len(template))
	for _, t := range template {
		out = append(out, placeholderRE.ReplaceAllStringFunc(t, func(m string) string {
			if v, ok := vars[m[1:len(m)-1]]; ok {
				return v
			}
			return m
		}))
	}
	return out
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
