package mcp

import (
	"fmt"
	"strings"
	"unicode/utf8"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agent-tools/agent-tools/internal/provider"
	"github.com/agent-tools/agent-tools/internal/text"
)

// maxKeptBinary bounds the binary content (images, audio, blobs) kept in
// Structured when the upstream sent no structuredContent of its own.
const maxKeptBinary = 1 << 20

// toResult maps an upstream CallToolResult: its content blocks as they are
// (Content, unless they are one text or too large), a text rendering of them
// (text parts joined by newlines, capped at maxText bytes, non-text parts
// summarised in words) for the text mode and scripts, the upstream's
// structuredContent as Structured, isError as IsError.
func toResult(res *sdk.CallToolResult, maxText int) *provider.Result {
	out := &provider.Result{IsError: res.IsError, Structured: res.StructuredContent}
	var b strings.Builder
	binary, nonText := 0, false
	add := func(s string) {
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(s)
	}
	for _, c := range res.Content {
		switch c := c.(type) {
		case *sdk.TextContent:
			add(c.Text)
		case *sdk.ImageContent:
			nonText, binary = true, binary+len(c.Data)
			add(fmt.Sprintf("[%s, %d bytes]", mediaType(c.MIMEType, "image"), len(c.Data)))
		case *sdk.AudioContent:
			nonText, binary = true, binary+len(c.Data)
			add(fmt.Sprintf("[%s, %d bytes]", mediaType(c.MIMEType, "audio"), len(c.Data)))
		case *sdk.ResourceLink:
			nonText = true
			s := "[resource link " + c.URI
			if c.Name != "" && c.Name != c.URI {
				s += " (" + c.Name + ")"
			}
			if c.MIMEType != "" {
				s += ", " + c.MIMEType
			}
			add(s + "]")
		case *sdk.EmbeddedResource:
			nonText = true
			r := c.Resource
			switch {
			case r == nil:
				add("[embedded resource]")
			case r.Blob != nil:
				binary += len(r.Blob)
				add(fmt.Sprintf("[resource %s, %s, %d bytes]", r.URI, mediaType(r.MIMEType, "binary"), len(r.Blob)))
			default:
				add(fmt.Sprintf("[resource %s]\n%s", r.URI, r.Text))
			}
		case nil:
		default:
			nonText = true
			add(fmt.Sprintf("[%T content]", c))
		}
	}
	out.Text = capBytes(b.String(), maxText)
	if (nonText || len(res.Content) > 1) && binary <= maxKeptBinary {
		// The blocks themselves, typed, for the MCP answer (the text above
		// is their rendering for the text mode and scripts); an image is
		// an image to the model, not "[image/png, 1234 bytes]".
		out.Content = res.Content
	}
	return out
}

// mediaType is the content's MIME type, or what kind of content it is.
func mediaType(mime, kind string) string {
	if mime == "" {
		return kind
	}
	return text.Clip(mime, 100)
}

// capBytes keeps at most max bytes of s, cut on a character boundary, and
// says how much was left out.
func capBytes(s string, max int) string {
	if max <= 0 || len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + fmt.Sprintf("\n[upstream result truncated: %s of %s kept]", size(int64(cut)), size(int64(len(s))))
}
