package facade_test

import (
	"context"
	"encoding/json"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"strings"
	"testing"
	"time"

	"github.com/agent-tools/agent-tools/internal/catalog"
	"github.com/agent-tools/agent-tools/internal/facade"
	"github.com/agent-tools/agent-tools/internal/pipeline"
	"github.com/agent-tools/agent-tools/internal/policy"
	"github.com/agent-tools/agent-tools/internal/provider"
	"github.com/agent-tools/agent-tools/internal/registry"
	"github.com/agent-tools/agent-tools/internal/tests/providertest"
	"github.com/agent-tools/agent-tools/internal/toolerr"
)

// longTool is an aggregated upstream's name: fine everywhere but flat mode.
var longTool = "Hacker_News_MCP_Server_With_A_Long_Name__getCommentTreeForStory"

const echoSchema = `{"type":"object","properties":{"message":{"type":"string"}},"required":["message"]}`

// multi is a facade over several providers, as a new user's config has.
type multi struct {
	t   *testing.T
	reg *registry.Registry
	cs  *sdk.ClientSession
}

func newMulti(t *testing.T, mode facade.Mode, guard *policy.LoopGuard) *multi {
	t.Helper()
	echo := func(ctx context.Context, tool catalog.Tool, args json.RawMessage) (*provider.Result, error) {
		return &provider.Result{Text: tool.Provider + ":" + tool.Name + " " + string(args)}, nil
	}
	fs := providertest.New(catalog.ProviderInfo{ID: "fs", Description: "Files"},
		providertest.Tool("list_directory_with_sizes", "List a directory with file sizes.", `{"type":"object","properties":{"path":{"type":"string"}}}`, true))
	ev := providertest.New(catalog.ProviderInfo{ID: "ev", Description: "Everything"},
		providertest.Tool("echo", "Echo a message back.", echoSchema, true),
		providertest.Tool("get-sum", "Add two numbers.", `{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"}}}`, true))
	ev.SetSkills(catalog.Skill{Name: "greet", Description: "Say hello to someone by echoing a greeting", Args: `{"who":"string"}`})
	hub := providertest.New(catalog.ProviderInfo{ID: "hub", Description: "Aggregated servers"},
		providertest.Tool(longTool, "Get the comment tree of a Hacker News story.", `{"type":"object"}`, true))
	dead := providertest.New(catalog.ProviderInfo{ID: "dead", Description: "An upstream that never starts"})
	dead.SetError(toolerr.New(toolerr.ProviderUnavailable, "It is restarted automatically; retry in 2s.", `provider "dead" is unavailable: exec: "/does/not/exist": no such file`))
	for _, p := range []*providertest.Fake{fs, ev, hub} {
		p.Func = echo
	}
	reg := registry.New(nil)
	for _, p := range []*providertest.Fake{fs, ev, hub, dead} {
		if err := reg.Add(p); err != nil {
			t.Fatal(err)
		}
	}
	if guard == nil {
		guard = policy.NewLoopGuard()
	}
	run := pipeline.New(pipeline.Options{Catalog: reg, Guard: guard, Execute: pipeline.ExecuteOptions{DefaultTimeout: 5 * time.Second, MaxResultChars: 1000}})
	fac := facade.New(reg, run, facade.Options{Mode: mode, Version: "test"})
	reg.OnChange(fac.Sync)
	reg.Refresh(context.Background())
	fac.Sync()
	ct, st := sdk.NewInMemoryTransports()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	ss, err := fac.Server().Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "newcomer", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return &multi{t: t, reg: reg, cs: cs}
}

// call returns the result text and whether it is an error.
func (m *multi) call(name string, args any) (string, bool) {
	m.t.Helper()
	res, err := m.cs.CallTool(context.Background(), &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		m.t.Fatalf("call %s: protocol error %v", name, err)
	}
	return res.Content[0].(*sdk.TextContent).Text, res.IsError
}

func (m *multi) names() map[string]bool {
	m.t.Helper()
	res, err := m.cs.ListTools(context.Background(), nil)
	if err != nil {
		m.t.Fatal(err)
	}
	out := map[string]bool{}
	for _, t := range res.Tools {
		out[t.Name] = true
	}
	return out
}

// A newcomer's natural guesses land on the right tool, or on an error whose
// correct_shape is the exact call that reaches it in this mode.
func TestMissesTeachAcrossProvidersAndModes(t *testing.T) {
	tests := []struct {
		name  string
		mode  facade.Mode
		tool  string
		args  any
		want  []string // substrings of the result
		isErr bool
	}{
		// The readable canonical name is what the server spells.
		{"flat natural name", facade.Flat, "fs_list_directory_with_sizes", map[string]any{}, []string{"fs:list_directory_with_sizes"}, false},
		{"flat lossless name", facade.Flat, "fs_list_directory_with_siz7azes", map[string]any{},
			[]string{`"UNKNOWN_TOOL"`, `"did_you_mean":["fs_list_directory_with_sizes"]`, `"correct_shape":{"arguments":{},"tool":"fs_list_directory_with_sizes"}`}, true},
		{"flat own name", facade.Flat, "get-sum", map[string]any{"a": 1},
			[]string{`"did_you_mean":["ev_get-sum"]`, `"correct_shape":{"arguments":{"a":1},"tool":"ev_get-sum"}`}, true},
		{"flat too long", facade.Flat, "hub_" + longTool, map[string]any{},
			[]string{`its name is 67 characters, over this server's flat.maxNameLength 64`, "agent-tools call hub_" + longTool, "rename:"}, true},
		{"progressive wrong provider", facade.Progressive, "agent_tools_ev_call", map[string]any{"toolName": "list_directory_with_sizes"},
			[]string{`no tool named \"list_directory_with_sizes\" in provider \"ev\"; provider \"fs\" has it`,
				`"correct_shape":{"arguments":{"arguments":{},"toolName":"list_directory_with_sizes"},"tool":"agent_tools_fs_call"}`}, true},
		{"progressive typo of another provider's tool", facade.Progressive, "agent_tools_ev_call", map[string]any{"toolName": "list_directory_with_size"},
			[]string{`"did_you_mean":["fs: list_directory_with_sizes"]`, `"tool":"agent_tools_fs_call"`}, true},
		{"progressive typo of its own tool", facade.Progressive, "agent_tools_ev_call", map[string]any{"toolName": "ecko", "arguments": map[string]any{"message": "x"}},
			[]string{`"did_you_mean":["echo"]`}, true},
		{"progressive canonical name", facade.Progressive, "agent_tools_fs_call", map[string]any{"toolName": "fs_list_directory_with_sizes"},
			[]string{"fs:list_directory_with_sizes"}, false},
		{"progressive long name", facade.Progressive, "agent_tools_hub_call", map[string]any{"toolName": longTool}, []string{"hub:" + longTool}, false},
		{"progressive flat name as a tool", facade.Progressive, "ev_echo", map[string]any{"message": "x"},
			[]string{`"correct_shape":{"arguments":{"arguments":{"message":"x"},"toolName":"echo"},"tool":"agent_tools_ev_call"}`}, true},
		{"progressive skill through call", facade.Progressive, "agent_tools_ev_call", map[string]any{"toolName": "greet", "arguments": map[string]any{"who": "ann"}},
			[]string{`is a skill of provider \"ev\"`, `"correct_shape":{"arguments":{"arguments":{"who":"ann"},"skill":"greet"},"tool":"agent_tools_ev_run_skill"}`}, true},
		{"progressive dead upstream call", facade.Progressive, "agent_tools_dead_call", map[string]any{"toolName": "anything"},
			[]string{`"PROVIDER_UNAVAILABLE"`, "/does/not/exist", "retry in 2s"}, true},
		{"progressive dead upstream discover", facade.Progressive, "agent_tools_dead_discover", map[string]any{},
			[]string{`"PROVIDER_UNAVAILABLE"`, "/does/not/exist", "retry in 2s"}, true},
		{"search own name", facade.Search, "agent_tools_call", map[string]any{"tool": "list_directory_with_sizes"},
			[]string{`"correct_shape":{"arguments":{"arguments":{},"tool":"fs_list_directory_with_sizes"},"tool":"agent_tools_call"}`}, true},
		{"search long name", facade.Search, "agent_tools_call", map[string]any{"tool": "hub_" + longTool}, []string{"hub:" + longTool}, false},
		{"search progressive spelling", facade.Search, "agent_tools_call", map[string]any{"toolName": "ev_echo", "arguments": map[string]any{"message": "x"}},
			[]string{`ev:echo {"message":"x"}`}, false},
		{"search skill through call", facade.Search, "agent_tools_call", map[string]any{"tool": "ev:greet"},
			[]string{`"correct_shape":{"arguments":{"arguments":{},"skill":"ev:greet"},"tool":"agent_tools_run_skill"}`}, true},
		{"search limit over 50", facade.Search, "agent_tools_search", map[string]any{"query": "echo", "limit": 100},
			[]string{"Use a limit between 1 and 50"}, true},
		{"search dead provider", facade.Search, "agent_tools_search", map[string]any{"query": "x", "provider": "dead"},
			[]string{`"PROVIDER_UNAVAILABLE"`}, true},
		{"text canonical call", facade.Text, "agent_tools_exec", map[string]any{"command": "call ev_echo message=hi"}, []string{`ev:echo {"message":"hi"}`}, false},
		{"text lossless name", facade.Text, "agent_tools_exec", map[string]any{"command": "call ev_getz2dzsum a=1"},
			[]string{`"command":"ev call get-sum a=1"`}, true},
		{"text help", facade.Text, "agent_tools_exec", map[string]any{"command": "help"}, []string{`call <canonical-name> key=value`, `"commands"`}, false},
		{"text provider search", facade.Text, "agent_tools_exec", map[string]any{"command": "ev search sum"}, []string{"ev discover sum"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := newMulti(t, tt.mode, nil)
			text, isErr := m.call(tt.tool, tt.args)
			if isErr != tt.isErr {
				t.Fatalf("isError = %v: %s", isErr, text)
			}
			for _, w := range tt.want {
				if !strings.Contains(text, w) {
					t.Errorf("result lacks %s:\n%s", w, text)
				}
			}
		})
	}
}

// Every tool stays reachable; only flat mode leaves out names over its limit.
func TestFlatPublishesOnlyWhatFits(t *testing.T) {
	m := newMulti(t, facade.Flat, nil)
	names := m.names()
	if !names["fs_list_directory_with_sizes"] || !names["ev_get-sum"] || names["hub_"+longTool] {
		t.Fatalf("flat tools = %v", names)
	}
	if _, ok := m.reg.Lookup("hub_" + longTool); !ok {
		t.Fatal("the registry must keep the long name")
	}
}

// When a skill is the best match, next says run_skill; its args are an object.
func TestSkillHits(t *testing.T) {
	for _, mode := range []facade.Mode{facade.Progressive, facade.Search} {
		m := newMulti(t, mode, nil)
		tool, args := "agent_tools_ev_discover", map[string]any{"query": "greeting hello"}
		want := `agent_tools_ev_run_skill({skill: \"greet\"`
		if mode == facade.Search {
			tool, args["provider"] = "agent_tools_search", "ev"
			want = `agent_tools_run_skill({skill: \"ev:greet\"`
		}
		text, isErr := m.call(tool, args)
		if isErr || !strings.Contains(text, want) || !strings.Contains(text, `"args":{"who":"string"}`) {
			t.Fatalf("%s: %s", mode, text)
		}
	}
}

// Regression: different bad commands are different calls;
// only the same failing command repeated escalates.
func TestTextLoopGuardKeysOnTheCommand(t *testing.T) {
	guard := policy.NewLoopGuard()
	m := newMulti(t, facade.Text, guard)
	for i, cmd := range []string{"ev search sum", "ev frob x", "ev call echo oops", "fs frob", "ev call", "call", "ev discover x y z \""} {
		text, isErr := m.call("agent_tools_exec", map[string]any{"command": cmd})
		if !isErr || strings.Contains(text, "REPEATED_FAILURE") {
			t.Fatalf("command %d %q: %s", i, cmd, text)
		}
	}
	var last string
	for range guard.RepeatAfter {
		last, _ = m.call("agent_tools_exec", map[string]any{"command": "ev frob x"})
	}
	if !strings.Contains(last, "REPEATED_FAILURE") {
		t.Fatalf("the same bad command repeated did not escalate: %s", last)
	}
}

func TestVerbatimPassthroughNames(t *testing.T) {
	up := providertest.New(catalog.ProviderInfo{ID: "up", Kind: "mcp", HostLocal: true}, providertest.Tool("files.read", "Read", `{"type":"object"}`, true))
	reg := registry.New(nil)
	if err := reg.Add(up); err != nil {
		t.Fatal(err)
	}
	reg.Refresh(context.Background())
	if _, ok := reg.Lookup("files.read"); !ok {
		t.Fatalf("names = %v", reg.Names())
	}
}
