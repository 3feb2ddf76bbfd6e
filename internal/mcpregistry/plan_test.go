package mcpregistry

import (
	"reflect"
	"strings"
	"testing"
)

func TestPlanFor(t *testing.T) {
	env := map[string]string{"SET_ME": "x"}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	for _, tc := range []struct {
		name    string
		doc     string
		choice  Choice
		command string
		args    []string
		url     string
		env     []Var
		headers []Var
		needs   []string
		err     string
	}{
		{name: "npm", doc: everything, command: "npx", args: []string{"-y", "@modelcontextprotocol/server-everything@2026.8.31"}},
		{name: "pypi with args", choice: Choice{AllowArgs: []string{"--python=3.12"}},
			doc: `{"name":"a.b/c","description":"d","version":"1.0.6","packages":[{"registryType":"pypi","identifier":"time-mcp-pypi","version":"1.0.6","transport":{"type":"stdio"},
				"runtimeArguments":[{"type":"named","name":"--python","value":"3.12"}],"packageArguments":[{"type":"positional","valueHint":"root_dir"},{"type":"named","name":"--verbose"}]}]}`,
			command: "uvx", args: []string{"--python=3.12", "time-mcp-pypi==1.0.6", "${ROOT_DIR}"}, needs: []string{"ROOT_DIR"}},
		{name: "pypi --python refused unless allowed",
			doc: `{"name":"a.b/c","description":"d","version":"1.0.6","packages":[{"registryType":"pypi","identifier":"time-mcp-pypi","version":"1.0.6","transport":{"type":"stdio"},
				"runtimeArguments":[{"type":"named","name":"--python","value":"3.12"}]}]}`,
			err: `runtimeArguments "--python=3.12" for uvx: refused: it picks the interpreter that runs the package (a path runs any program); if you trust it, add again with --allow-args=--python=3.12`},
		{name: "npm harmless runtime option", doc: `{"name":"a.b/c","description":"d","version":"1","packages":[{"registryType":"npm","identifier":"p","version":"1","transport":{"type":"stdio"},
				"runtimeArguments":[{"type":"positional","value":"--prefer-offline"}]}]}`,
			command: "npx", args: []string{"-y", "--prefer-offline", "p@1"}},
		{name: "oci with env",
			doc: `{"name":"a.b/c","description":"d","version":"1.7.2","packages":[{"registryType":"oci","identifier":"docker.io/x/y:1.7.2","transport":{"type":"stdio"},
				"environmentVariables":[{"name":"API_KEY","isSecret":true,"isRequired":true},{"name":"LEVEL","default":"info"},{"name":"SET_ME","isRequired":true},{"name":"OPT"}]}]}`,
			command: "docker", args: []string{"run", "-i", "--rm", "-e", "API_KEY", "-e", "LEVEL", "-e", "SET_ME", "docker.io/x/y:1.7.2"},
			env: []Var{{Key: "API_KEY", Value: "${API_KEY}", Secret: true, Comment: "secret: set API_KEY in the environment; never written here"},
				{Key: "LEVEL", Value: "${LEVEL:-info}"}, {Key: "SET_ME", Value: "${SET_ME}", Comment: "required"}},
			needs: []string{"API_KEY"}},
		{name: "oci tag from version", doc: `{"name":"a.b/c","description":"d","version":"2","packages":[{"registryType":"oci","identifier":"ghcr.io/x/y","version":"2.0.1","transport":{"type":"stdio"}}]}`,
			command: "docker", args: []string{"run", "-i", "--rm", "ghcr.io/x/y:2.0.1"}},
		{name: "oci latest refused", doc: `{"name":"a.b/c","description":"d","version":"2","packages":[{"registryType":"oci","identifier":"ghcr.io/x/y:latest","transport":{"type":"stdio"}}]}`,
			err: "tag is latest"},
		{name: "oci untagged refused", doc: `{"name":"a.b/c","description":"d","version":"2","packages":[{"registryType":"oci","identifier":"ghcr.io/x/y","transport":{"type":"stdio"}}]}`,
			err: "no tag or digest"},
		{name: "nuget", doc: `{"name":"a.b/c","description":"d","version":"1.0.8","packages":[{"registryType":"nuget","identifier":"TimeMcpServer","version":"1.0.8","transport":{"type":"stdio"},"packageArguments":[{"type":"positional","value":"--utc"}]}]}`,
			command: "dnx", args: []string{"TimeMcpServer@1.0.8", "--yes", "--", "--utc"}},
		{name: "npm without version refused", doc: `{"name":"a.b/c","description":"d","version":"1","packages":[{"registryType":"npm","identifier":"p","transport":{"type":"stdio"}}]}`,
			err: "has no version"},
		{name: "npm option as identifier refused", doc: `{"name":"a.b/c","description":"d","version":"1","packages":[{"registryType":"npm","identifier":"--call=rm","version":"1","transport":{"type":"stdio"}}]}`,
			err: "not an npm package name"},

		{name: "nothing runnable", doc: `{"name":"a.b/c","description":"d","version":"1","packages":[{"registryType":"cargo","identifier":"x","version":"1","transport":{"type":"stdio"}}]}`,
			err: "nothing this runtime can run"},
		{name: "remote with headers",
			doc: `{"name":"a.b/c","description":"d","version":"1.0.0","remotes":[{"type":"streamable-http","url":"https://{tenant}.example.com/mcp",
				"variables":{"tenant":{"default":"acme"}},
				"headers":[{"name":"Authorization","value":"Bearer {token}","isSecret":true,"variables":{"token":{"isSecret":true}}},
				           {"name":"X-Region","default":"eu"},{"name":"X-Fixed","value":"v$1"}]}]}`,
			url: "https://${TENANT:-acme}.example.com/mcp",
			headers: []Var{{Key: "Authorization", Value: "Bearer ${TOKEN}", Secret: true, Comment: "secret: set TOKEN in the environment; never written here"},
				{Key: "X-Region", Value: "${X_REGION:-eu}"}, {Key: "X-Fixed", Value: "v$$1"}},
			needs: []string{"TOKEN"}},
		{name: "remote asked for, none", doc: everything, choice: Choice{Remote: true}, err: "has no remote"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := DecodeServer([]byte(tc.doc))
			if err != nil {
				t.Fatal(err)
			}
			p, err := PlanFor(s, tc.choice, lookup)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if p.Command != tc.command || !reflect.DeepEqual(p.Args, tc.args) || p.URL != tc.url {
				t.Errorf("command %q %q url %q, want %q %q %q", p.Command, p.Args, p.URL, tc.command, tc.args, tc.url)
			}
			if !reflect.DeepEqual(p.Env, tc.env) || !reflect.DeepEqual(p.Headers, tc.headers) {
				t.Errorf("env %+v headers %+v\nwant %+v %+v", p.Env, p.Headers, tc.env, tc.headers)
			}
			if !reflect.DeepEqual(p.Needs, tc.needs) {
				t.Errorf("needs %v, want %v", p.Needs, tc.needs)
			}
		})
	}
}

func TestDefaultID(t *testing.T) {
	for in, want := range map[string]string{
		"io.github.modelcontextprotocol/server-everything": "everything",
		"io.github.domdomegg/airtable-mcp-server":          "airtable",
		"io.github.domdomegg/time-mcp-pypi":                "timemcppypi",
		"com.example/mcp-server-Git":                       "git",
		"a.b/---":                                          "server",
		"a.b/" + strings.Repeat("x", 40):                   strings.Repeat("x", 32),
	} {
		if got := DefaultID(in); got != want {
			t.Errorf("DefaultID(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestPlanForKeyring(t *testing.T) {
	s, err := DecodeServer([]byte(`{"name":"a.b/c","description":"d","version":"1.0.0","packages":[{"registryType":"npm","identifier":"p","version":"1.0.0","transport":{"type":"stdio"},
		"environmentVariables":[{"name":"API_KEY","isSecret":true,"isRequired":true},{"name":"AUTH","value":"Bearer {tok}","variables":{"tok":{"isSecret":true}}},{"name":"PLAIN","isRequired":true}]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	p, err := PlanFor(s, Choice{Keyring: "svc"}, func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	want := []Var{
		{Key: "API_KEY", Value: "${keyring:svc/API_KEY}", Secret: true, Comment: "secret, in the keyring (agent-tools secrets set svc/API_KEY); never written here"},
		{Key: "AUTH", Value: "Bearer ${keyring:svc/TOK}"},
		{Key: "PLAIN", Value: "${PLAIN}", Comment: "required"},
	}
	if !reflect.DeepEqual(p.Env, want) {
		t.Errorf("env %+v\nwant %+v", p.Env, want)
	}
	if !reflect.DeepEqual(p.Keyring, []string{"svc/API_KEY", "svc/TOK"}) || !reflect.DeepEqual(p.Needs, []string{"PLAIN"}) {
		t.Errorf("keyring %v needs %v", p.Keyring, p.Needs)
	}
}
