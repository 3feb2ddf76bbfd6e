package mcpregistry

import (
	"errors"
	"strings"
	"testing"
)

const everything = `{
  "$schema": "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json",
  "name": "io.github.modelcontextprotocol/server-everything",
  "description": "Exercises every feature of the MCP protocol.",
  "version": "2026.8.31",
  "repository": {"url": "https://github.com/modelcontextprotocol/servers", "source": "github", "subfolder": "src/everything"},
  "packages": [{"registryType": "npm", "identifier": "@modelcontextprotocol/server-everything", "version": "2026.8.31",
    "runtimeHint": "npx", "transport": {"type": "stdio"}}]
}`

func TestDecodeServer(t *testing.T) {
	for _, tc := range []struct {
		name, doc, err string
	}{
		{"valid", everything, ""},
		{"not json", `{"name":`, "malformed server.json: unexpected EOF"},
		{"trailing", everything + `{}`, "trailing data"},
		{"array", `[]`, "cannot unmarshal array"},
		{"no name", `{"description":"d","version":"1.0.0"}`, "name is missing"},
		{"bad name", `{"name":"noslash","description":"d","version":"1.0.0"}`, `name "noslash" is not reverse-DNS`},
		{"no description", `{"name":"a.b/c","version":"1.0.0"}`, "description is missing"},
		{"no version", `{"name":"a.b/c","description":"d"}`, "version: missing"},
		{"latest", `{"name":"a.b/c","description":"d","version":"latest"}`, `"latest" is not a version`},
		{"range", `{"name":"a.b/c","description":"d","version":"^1.2.3"}`, "is a range"},
		{"x range", `{"name":"a.b/c","description":"d","version":"1.x"}`, "is a range"},
		{"package latest", `{"name":"a.b/c","description":"d","version":"1.0.0","packages":[{"registryType":"npm","identifier":"p","version":"latest","transport":{"type":"stdio"}}]}`,
			`packages[0].version: "latest"`},
		{"package no transport", `{"name":"a.b/c","description":"d","version":"1.0.0","packages":[{"registryType":"npm","identifier":"p","version":"1.0.0"}]}`,
			"packages[0].transport.type is missing"},
		{"mcpb without hash", `{"name":"a.b/c","description":"d","version":"1.0.0","packages":[{"registryType":"mcpb","identifier":"https://x/y.mcpb","transport":{"type":"stdio"}}]}`,
			"mcpb package needs fileSha256"},
		{"bad hash", `{"name":"a.b/c","description":"d","version":"1.0.0","packages":[{"registryType":"mcpb","identifier":"https://x/y.mcpb","fileSha256":"ABC","transport":{"type":"stdio"}}]}`,
			"fileSha256 is not 64"},
		{"bad remote", `{"name":"a.b/c","description":"d","version":"1.0.0","remotes":[{"type":"websocket","url":"ftp://x"}]}`,
			`remotes[0].type "websocket"`},
		{"remote url", `{"name":"a.b/c","description":"d","version":"1.0.0","remotes":[{"type":"sse","url":"ftp://x"}]}`,
			`remotes[0].url "ftp://x"`},
		{"named arg without name", `{"name":"a.b/c","description":"d","version":"1.0.0","packages":[{"registryType":"npm","identifier":"p","version":"1.0.0","transport":{"type":"stdio"},"packageArguments":[{"type":"named"}]}]}`,
			"a named argument needs a name"},
		{"remote ok", `{"name":"a.b/c","description":"d","version":"1.0.0","remotes":[{"type":"streamable-http","url":"https://x/mcp","headers":[{"name":"Authorization","isSecret":true}]}]}`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := DecodeServer([]byte(tc.doc))
			if tc.err == "" {
				if err != nil {
					t.Fatal(err)
				}
				if s.Name == "" || s.Version == "" {
					t.Fatalf("decoded %+v", s)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.err) || !errors.Is(err, ErrMalformed) {
				t.Fatalf("err = %v, want ErrMalformed containing %q", err, tc.err)
			}
		})
	}
}

func TestDecodeListDropsBadEntries(t *testing.T) {
	l, bad, err := DecodeList([]byte(`{"servers":[{"server":` + everything + `},{"server":{"name":"x"}}],"metadata":{"nextCursor":"c1","count":2}}`))
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Servers) != 1 || len(bad) != 1 || l.Metadata.NextCursor != "c1" || !strings.Contains(bad[0].Error(), "servers[1]") {
		t.Fatalf("list %+v bad %v", l, bad)
	}
	for _, doc := range []string{`{}`, `[]`, `{"servers":{}}`, `nope`} {
		if _, _, err := DecodeList([]byte(doc)); !errors.Is(err, ErrMalformed) {
			t.Errorf("%s: err = %v, want ErrMalformed", doc, err)
		}
	}
}

// FuzzDecodeServer: whatever a registry sends, decoding returns a checked
// server or an ErrMalformed, never panics, and a server it accepts can be
// planned or refused with an error (never panics either).
func FuzzDecodeServer(f *testing.F) {
	f.Add([]byte(everything))
	f.Add([]byte(`{"name":"a.b/c","description":"d","version":"1.0.0","remotes":[{"type":"streamable-http","url":"https://{host}/mcp","variables":{"host":{"default":"x"}},"headers":[{"name":"X-Key","value":"Bearer {k}","variables":{"k":{"isSecret":true}}}]}]}`))
	f.Add([]byte(`{"name":"a.b/c","description":"d","version":"1.0.0","packages":[{"registryType":"oci","identifier":"docker.io/a/b","version":"1","transport":{"type":"stdio"},"runtimeArguments":[{"type":"named","name":"-v","value":"{d}:/d","variables":{"d":{}}}],"environmentVariables":[{"name":"A","isRequired":true}]}]}`))
	f.Add([]byte(`{"name":"a.b/c","description":"d","version":"1.0.0","packages":[{"registryType":"pypi","identifier":"p","version":"1","transport":{"type":"stdio"},"packageArguments":[{"type":"positional","valueHint":"dir"}]}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := DecodeServer(data)
		if err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("error not ErrMalformed: %v", err)
			}
			return
		}
		for _, ch := range []Choice{{}, {Remote: true}, {Package: "oci"}, {Package: "npm"}, {Package: "pypi"}, {Package: "nuget"}} {
			p, err := PlanFor(s, ch, func(string) (string, bool) { return "", false })
			if err != nil {
				continue
			}
			if p.Command == "" && p.URL == "" && p.Bundle == nil {
				t.Fatalf("plan without command or url: %+v", p)
			}
			for _, a := range p.Args {
				if strings.ContainsAny(a, "\n\r") {
					t.Fatalf("argument with a line break: %q", a)
				}
			}
		}
	})
}
