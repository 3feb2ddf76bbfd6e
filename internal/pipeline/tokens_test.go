package pipeline

import (
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agent-tools/agent-tools/internal/provider"
	"github.com/agent-tools/agent-tools/internal/toolerr"
)

// ModelText is what the facade hands the model: the error's envelope, the
// blocks' text or the result's text, and structured content unless the
// text already is its JSON.
func TestModelText(t *testing.T) {
	e := toolerr.New(toolerr.Timeout, "hint", "slow")
	for _, c := range []struct {
		name string
		resp *Response
		want string
	}{
		{"nil", nil, ""},
		{"error", &Response{Err: e}, e.JSON()},
		{"text", &Response{Result: &provider.Result{Text: "hi"}}, "hi"},
		{"blocks", &Response{Result: &provider.Result{Text: "rendered", Content: []sdk.Content{
			&sdk.TextContent{Text: "a"}, &sdk.ImageContent{MIMEType: "image/png"},
			&sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: "x:1", Text: "b"}}}}}, "ab"},
		{"structured repeated", &Response{Result: &provider.Result{Text: "{\n  \"n\": 1\n}", Structured: map[string]any{"n": 1}}}, "{\n  \"n\": 1\n}"},
		{"structured besides", &Response{Result: &provider.Result{Text: "one", Structured: map[string]any{"n": 1}}}, "one\n{\"n\":1}"},
	} {
		if got := ModelText(c.resp); got != c.want {
			t.Errorf("%s: ModelText = %q, want %q", c.name, got, c.want)
		}
	}
}
