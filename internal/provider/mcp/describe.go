package mcp

import (
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// describeUpstream is a provider's one line when the config gives none:
// what the upstream says about itself at initialize (serverInfo title or
// name, and the first sentence of its instructions), never "MCP server
// node". It returns "" when the upstream said nothing useful.
func describeUpstream(init *sdk.InitializeResult) string {
	if init == nil {
		return ""
	}
	var name string
	if si := init.ServerInfo; si != nil {
		name = strings.TrimSpace(si.Title)
		if name == "" {
			name = strings.TrimSpace(si.Name)
		}
	}
	about := firstSentence(init.Instructions, 160)
	switch {
	case name != "" && about != "":
		return name + ": " + about
	case about != "":
		return about
	}
	return name
}

// firstSentence is the first line of s up to its sentence end, at most n
// runes; "" when that line is a Markdown heading or list item (a manual's
// title is not a description).
func firstSentence(s string, n int) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexAny(s, "\r\n"); i >= 0 {
		s = s[:i]
	}
	if strings.HasPrefix(s, "#") || strings.HasPrefix(s, "- ") || strings.HasPrefix(s, "* ") {
		return ""
	}
	if i := strings.Index(s, ". "); i >= 0 {
		s = s[:i+1]
	}
	if r := []rune(s); len(r) > n {
		s = strings.TrimSpace(string(r[:n-1])) + "…"
	}
	return strings.TrimSpace(s)
}
