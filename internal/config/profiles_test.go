package config_test

import (
	"slices"
	"testing"
)

func TestProfilesAndRules(t *testing.T) {
	src := `providers:
  - id: gh
    kind: mcp
    command: x
profiles:
  ops:
    providers: [gh]
    tools: {allow: ["gh.*"], deny: ["gh.delete_*"]}
    mode: flat
policy:
  rules:
    - identities: ["token:*"]
      profiles: [ops, default]
      deny: ["local.*"]
      confirm: human
`
	c, err := parse(t, src)
	if err != nil {
		t.Fatal(err)
	}
	p := c.Profiles["ops"]
	if p.Mode != "flat" || !slices.Equal(p.Providers, []string{"gh"}) || !slices.Equal(p.Tools.Deny, []string{"gh.delete_*"}) {
		t.Fatalf("profile = %+v", p)
	}
	if len(c.Policy.Rules) != 1 || c.Policy.Rules[0].Confirm != "human" || !slices.Equal(c.Policy.Rules[0].Profiles, []string{"ops", "default"}) {
		t.Fatalf("rules = %+v", c.Policy.Rules)
	}
	if got := c.ProfileNames(); !slices.Equal(got, []string{"ops"}) {
		t.Fatalf("names = %v", got)
	}
}

func TestProfilesAndRulesErrors(t *testing.T) {
	tests := []struct{ name, src, want string }{
		{"bad slug", "profiles:\n  Ops!: {}\n", `agent-tools.yaml:2:3: profiles: profile name "Ops!": want lower-case letters, digits, - and _ (and not "default")`},
		{"default slug", "profiles:\n  default: {}\n", `agent-tools.yaml:2:3: profiles: profile name "default": want lower-case letters, digits, - and _ (and not "default")`},
		{"unknown profile key", "profiles:\n  ops:\n    mdoe: flat\n", `agent-tools.yaml:3:5: profiles.ops: unknown key "mdoe"; did you mean "mode"?`},
		{"bad mode", "profiles:\n  ops:\n    mode: flatt\n", `agent-tools.yaml:3:11: profiles.ops.mode: unknown mode "flatt" (want progressive, search, flat, text or code)`},
		{"unknown provider", "profiles:\n  ops:\n    providers: [gh]\n", `agent-tools.yaml:3:17: profiles.ops.providers[0]: unknown provider "gh" (configured: builtin or local)`},
		{"bad tool glob", "profiles:\n  ops:\n    tools: {deny: [\"[\"]}\n", `agent-tools.yaml:3:20: profiles.ops.tools.deny[0]: pattern "[" is not a valid glob (syntax: * ? [a-z] \x)`},
		{"rule unknown profile", "policy:\n  rules:\n    - profiles: [opz]\n", `agent-tools.yaml:3:18: policy.rules[0].profiles[0]: unknown profile "opz" (want default)`},
		{"rule bad identity", "policy:\n  rules:\n    - identities: [\"[\"]\n", `agent-tools.yaml:3:20: policy.rules[0].identities[0]: identity pattern "[" is not a valid glob (syntax: * ? [a-z] \x)`},
		{"rule bad deny", "policy:\n  rules:\n    - deny: [\"\"]\n", `agent-tools.yaml:3:14: policy.rules[0].deny[0]: pattern "" is empty`},
		{"rule bad confirm", "policy:\n  rules:\n    - confirm: maybe\n", `agent-tools.yaml:3:16: policy.rules[0].confirm: unknown confirm policy "maybe" (want agent, token or human)`},
		{"rule unknown key", "policy:\n  rules:\n    - alow: [x]\n", `agent-tools.yaml:3:7: policy.rules[0]: unknown key "alow"; did you mean "allow"?`},
		{"rules not a list", "policy:\n  rules: {a: b}\n", `agent-tools.yaml:2:10: policy.rules: want a list, got a mapping`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parse(t, tt.src)
			got := errorsOf(t, err)
			if !slices.Contains(got, tt.want) {
				t.Errorf("errors:\n%v\nwant %s", got, tt.want)
			}
		})
	}
}
