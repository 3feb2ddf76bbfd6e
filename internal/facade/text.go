package facade

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/kballard/go-shellquote"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agent-tools/agent-tools/internal/index"
	"github.com/agent-tools/agent-tools/internal/jsonscan"
	"github.com/agent-tools/agent-tools/internal/pipeline"
	"github.com/agent-tools/agent-tools/internal/toolerr"
)

// Text is the text layer: one tool taking one command line.
const Text Mode = "text"

const execTool = "agent_tools_exec"

const textUsage = `help | search <words> | <provider> discover [words] | <provider> call <tool> [key=value ...] [key:=<json>] [--confirm] | call <canonical-name> [key=value ...]`

func (f *Facade) textDef() toolDef {
	var ids []string
	for _, p := range f.visibleProviders() {
		ids = append(ids, p.Info.ID)
	}
	desc := "Run one agent-tools command line (shell-like quoting; never run by a shell): " + textUsage +
		". Example: `gh call get_repo owner=withastro repo=astro`. Values are typed by the tool's schema; key:=<json> passes JSON (arrays, objects). Providers: " +
		strings.Join(ids, ", ") + "."
	return toolDef{
		tool: &sdk.Tool{
			Name: execTool, Description: desc,
			InputSchema: objectSchema(map[string]any{"command": prop("string", "The command line, e.g. `help` or `<provider> discover <words>`.")}, []string{"command"}),
			Annotations: &sdk.ToolAnnotations{Title: "Run an agent-tools command", OpenWorldHint: boolPtr(true)},
		},
		handler: func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			m, e := decodeArgs(req.Params.Arguments, execTool, "command")
			var line string
			if e == nil {
				e = field(m, "command", execTool, &line)
			}
			if e != nil {
				return errorResult(e), nil
			}
			return f.exec(ctx, req, line), nil
		},
	}
}

// Command is one parsed text-mode command line.
type Command struct {
	Verb     string // help | search | discover | call
	Provider string
	Tool     string
	Query    string
	Confirm  bool
	// ConfirmToken is --confirm=<token> (token confirmation mode).
	ConfirmToken string
	// Pairs are key=value (raw string) and key:=json arguments, in order.
	Pairs []Pair
}

// Pair is one argument of a call.
type Pair struct {
	Key   string
	Value string
	JSON  bool // key:=value: Value is JSON
}

// ParseCommand splits and parses a command line. It never runs anything.
func ParseCommand(line string) (*Command, error) {
	if !utf8.ValidString(line) {
		return nil, fmt.Errorf("the command line is not valid UTF-8")
	}
	words, err := shellquote.Split(line)
	if err != nil {
		return nil, fmt.Errorf("cannot split the command line: %v", err)
	}
	if len(words) == 0 {
		return nil, fmt.Errorf("empty command")
	}
	switch words[0] {
	case "help":
		if len(words) > 1 {
			return nil, fmt.Errorf("help takes no arguments")
		}
		return &Command{Verb: "help"}, nil
	case "search":
		if len(words) < 2 {
			return nil, fmt.Errorf("search needs words to search for")
		}
		return &Command{Verb: "search", Query: strings.Join(words[1:], " ")}, nil
	case "call": // call <canonical-name> key=value: no provider word
		if len(words) < 2 || strings.ContainsAny(words[1], "=") || strings.HasPrefix(words[1], "-") {
			return nil, fmt.Errorf("call needs a tool name: call <canonical-name> key=value, or <provider> call <tool> key=value")
		}
		c := &Command{Verb: "call", Tool: words[1]}
		return c, c.parseArgs(words[2:])
	}
	if len(words) < 2 {
		return nil, fmt.Errorf("%q needs a verb: discover or call", words[0])
	}
	c := &Command{Provider: words[0], Verb: words[1]}
	switch c.Verb {
	case "discover":
		c.Query = strings.Join(words[2:], " ")
		return c, nil
	case "call":
		if len(words) < 3 || strings.ContainsAny(words[2], "=") || strings.HasPrefix(words[2], "-") {
			return nil, fmt.Errorf("call needs a tool name: %s call <tool> key=value", c.Provider)
		}
		c.Tool = words[2]
		return c, c.parseArgs(words[3:])
	case "search", "find", "list":
		return nil, fmt.Errorf("unknown verb %q: to search one provider, write `%s discover %s`", c.Verb, c.Provider, strings.Join(words[2:], " "))
	}
	return nil, fmt.Errorf("unknown verb %q (want discover or call)", c.Verb)
}

// parseArgs reads a call's key=value, key:=json and --confirm words.
func (c *Command) parseArgs(words []string) error {
	seen := map[string]bool{}
	for _, w := range words {
		if w == "--confirm" {
			c.Confirm = true
			continue
		}
		if tok, ok := strings.CutPrefix(w, "--confirm="); ok && tok != "" {
			c.ConfirmToken = tok
			continue
		}
		p, err := parsePair(w)
		if err != nil {
			return err
		}
		if seen[p.Key] {
			return fmt.Errorf("argument %q given twice", p.Key)
		}
		seen[p.Key] = true
		c.Pairs = append(c.Pairs, p)
	}
	return nil
}

func parsePair(w string) (Pair, error) {
	k, v, ok := strings.Cut(w, "=")
	if !ok || k == "" || k == ":" {
		return Pair{}, fmt.Errorf("argument %q is not key=value", w)
	}
	if strings.HasSuffix(k, ":") {
		k = strings.TrimSuffix(k, ":")
		if !json.Valid([]byte(v)) {
			return Pair{}, fmt.Errorf("argument %q: the value after := is not JSON", k)
		}
		return Pair{Key: k, Value: v, JSON: true}, nil
	}
	return Pair{Key: k, Value: v}, nil
}

// arguments builds the JSON arguments object, typing key=value strings by the
// tool's schema (integer, number, boolean; anything else stays a string).
func (c *Command) arguments(schema json.RawMessage) (json.RawMessage, error) {
	_, types := schemaSummary(schema)
	obj := make(map[string]json.RawMessage, len(c.Pairs))
	for _, p := range c.Pairs {
		if p.JSON {
			obj[p.Key] = json.RawMessage(p.Value)
			continue
		}
		switch types[p.Key] {
		case "integer", "number":
			if _, err := strconv.ParseFloat(p.Value, 64); err != nil {
				return nil, fmt.Errorf("argument %q must be a number, got %q", p.Key, p.Value)
			}
			obj[p.Key] = json.RawMessage(p.Value)
		case "boolean":
			b, err := strconv.ParseBool(p.Value)
			if err != nil {
				return nil, fmt.Errorf("argument %q must be true or false, got %q", p.Key, p.Value)
			}
			obj[p.Key] = json.RawMessage(strconv.FormatBool(b))
		default:
			s, _ := jsonscan.Marshal(p.Value)
			obj[p.Key] = s
		}
	}
	return jsonscan.Marshal(obj)
}

func (f *Facade) exec(ctx context.Context, mreq *sdk.CallToolRequest, line string) *sdk.CallToolResult {
	c, err := ParseCommand(line)
	if err != nil {
		// Keyed on the exact text: different bad commands are different
		// calls for the loop guard (only the same one repeated escalates).
		text, _ := jsonscan.Marshal(map[string]string{"command": line})
		req := &pipeline.Request{Via: execTool, Args: text, Shape: textShape{},
			Malformed: toolerr.New(toolerr.InvalidArguments, "Commands look like: "+textUsage, "%v", err)}
		return f.call(ctx, mreq, req) // audited and loop-guarded like any call
	}
	f.cat.Refresh(ctx)
	switch c.Verb {
	case "help":
		return jsonResult(f.help(f.grantOf(mreq.Extra)))
	case "search":
		return jsonResult(f.rank(f.grantOf(mreq.Extra), discoverArgs{Query: c.Query}, index.Options{}, execTool+" (`<provider> call <name> key=value`)"))
	}
	if c.Provider == "" { // call <canonical-name>
		req := &pipeline.Request{Via: execTool, Tool: c.Tool, Confirm: c.Confirm, ConfirmToken: c.ConfirmToken, Shape: textShape{canonical: true}}
		var schema json.RawMessage
		if t, ok := f.cat.Lookup(c.Tool); ok {
			schema = t.InputSchema
		}
		return f.textCall(ctx, mreq, req, c, schema)
	}
	if _, _, ok := f.cat.Provider(c.Provider); !ok {
		return errorResult(toolerr.New(toolerr.ProviderUnavailable, "Run `help` for the loaded providers.", "no provider %q", c.Provider))
	}
	if c.Verb == "discover" {
		if e := f.unavailable(c.Provider); e != nil {
			return errorResult(e)
		}
		if c.Query == "" {
			return f.listPage(f.grantOf(mreq.Extra), c.Provider, execTool, discoverArgs{})
		}
		return jsonResult(f.rank(f.grantOf(mreq.Extra), discoverArgs{Query: c.Query}, index.Options{Provider: c.Provider}, execTool+" (`"+c.Provider+" call <name> key=value`)"))
	}
	req := &pipeline.Request{Via: execTool, Provider: c.Provider, Tool: c.Tool, Confirm: c.Confirm, ConfirmToken: c.ConfirmToken, Shape: textShape{provider: c.Provider}}
	var schema json.RawMessage
	if t, ok := f.cat.Find(c.Provider, c.Tool); ok {
		schema = t.InputSchema
	}
	return f.textCall(ctx, mreq, req, c, schema)
}

// textCall types a command's arguments by the tool's schema and runs it.
func (f *Facade) textCall(ctx context.Context, mreq *sdk.CallToolRequest, req *pipeline.Request, c *Command, schema json.RawMessage) *sdk.CallToolResult {
	args, err := c.arguments(schema)
	if err != nil {
		req.Malformed = toolerr.New(toolerr.InvalidArguments, "Pass key=value pairs typed as the tool's schema says; key:=<json> for arrays and objects.", "%v", err)
		args = json.RawMessage(`{}`)
	}
	req.Args = args
	return f.call(ctx, mreq, req)
}

// textShape renders a call as the command line to send: `<provider> call
// <tool>`, or `call <canonical-name>` when canonical.
type textShape struct {
	provider  string
	canonical bool
}

func (s textShape) Call(tool string, args json.RawMessage, confirm any) map[string]any {
	if s.provider == "" && !s.canonical {
		return map[string]any{"tool": execTool, "arguments": map[string]any{"command": textUsage}}
	}
	var obj map[string]json.RawMessage
	_ = json.Unmarshal(rawOrEmpty(args), &obj)
	words := []string{s.provider, "call", tool}
	if s.canonical {
		words = []string{"call", tool}
	}
	for _, k := range sortedKeys(obj) {
		v := obj[k]
		var str string
		if json.Unmarshal(v, &str) == nil {
			words = append(words, k+"="+str)
		} else {
			words = append(words, k+":="+string(v))
		}
	}
	switch c := confirm.(type) {
	case string:
		words = append(words, "--confirm="+c)
	case bool:
		words = append(words, "--confirm")
	}
	return map[string]any{"tool": execTool, "arguments": map[string]any{"command": shellquote.Join(words...)}}
}

func sortedKeys(m map[string]json.RawMessage) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
