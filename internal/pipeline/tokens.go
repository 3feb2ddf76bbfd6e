package pipeline

import (
	"bytes"
	"encoding/json"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agent-tools/agent-tools/internal/jsonscan"
	"github.com/agent-tools/agent-tools/internal/tokens"
)

// resultTokens is a Response's token count, made once (Response.ResultTokens).
type resultTokens struct {
	done      bool
	n         int
	estimated bool
}

// ResultTokens is the o200k_base token count of what the model receives
// for this response (internal/tokens.Count over ModelText): the audit's
// result_tokens, the metrics' agent_tools_result_tokens and the quotas'
// token windows all read it. It is counted once, by the first stage that
// asks (the quota stage, else metrics, else the audit), and kept; estimated
// reports a text over tokens.MaxExact bytes, or a tokenizer not yet
// loaded, counted as characters/4 instead.
func (r *Response) ResultTokens() (n int, estimated bool) {
	if !r.tokens.done {
		r.tokens.n, r.tokens.estimated = tokens.Count(ModelText(r))
		r.tokens.done = true
	}
	return r.tokens.n, r.tokens.estimated
}

// ModelText is the text a client hands the model for resp, as the facade
// renders it: an error's envelope (its structuredContent is the same
// JSON); else the content blocks' text (text blocks, embedded resources'
// text; images, audio and links carry no text) or, without blocks, the
// result's text; and the structured content's JSON when it is not that
// text already (a tool that returns both usually puts the same JSON in
// its text).
func ModelText(resp *Response) string {
	if resp == nil {
		return ""
	}
	if resp.Err != nil {
		return resp.Err.JSON()
	}
	res := resp.Result
	if res == nil {
		return ""
	}
	text := res.Text
	if res.Content != nil {
		var b strings.Builder
		for _, c := range res.Content {
			switch x := c.(type) {
			case *sdk.TextContent:
				b.WriteString(x.Text)
			case *sdk.EmbeddedResource:
				if x.Resource != nil {
					b.WriteString(x.Resource.Text)
				}
			}
		}
		text = b.String()
	}
	if res.Structured == nil {
		return text
	}
	j, err := jsonscan.Marshal(res.Structured)
	if err != nil || sameJSON(j, text) {
		return text
	}
	if text == "" {
		return string(j)
	}
	return text + "\n" + string(j)
}

// sameJSON reports whether text is j, compact or indented.
func sameJSON(j []byte, text string) bool {
	t := strings.TrimSpace(text)
	if t == string(j) {
		return true
	}
	if t == "" || (t[0] != '{' && t[0] != '[') {
		return false
	}
	var c bytes.Buffer
	return json.Compact(&c, []byte(t)) == nil && bytes.Equal(c.Bytes(), j)
}
