package config

// Starter returns the commented agent-tools.yaml that `agent-tools init`
// writes. It parses as is (giving the zero-config defaults plus comments);
// its examples are lines starting with "#" directly followed by YAML (no
// space, or two or more spaces) and parse too once uncommented, given the
// environment variables they reference.
func Starter() string { return starter }

const starter = `# agent-tools.yaml: what agent-tools serves to your coding agents.
# Values may use the host environment: ${VAR}, ${VAR:-default}; $$ is a
# literal $. A secret need not be exported into your shell: store it with
# agent-tools secrets set github/token (a prompt, no echo) and write
# ${keyring:github/token}; also ${pass:PATH}, ${file:PATH}, ${age:FILE#KEY},
# ${cmd:NAME} (docs/secrets.md). Durations use Go syntax: 30s, 1m30s. Relative paths are relative
# to this file. Check it with: agent-tools config validate

# How tools are shown to the agent: progressive (a few tools per provider),
# search (a constant handful), flat (every tool), code (one JavaScript tool
# that finds and calls tools) or text (one exec tool).
mode: progressive

# The repository's own scripts: executable files whose leading comment
# declares @description and @param lines. Provider id "local"; their tools
# keep their bare names.
local:
  dir: .agents/tools
  requireConfirm: true   # scripts without @readonly need confirm: true
  timeout: 60s

# Tool names keep the server's spelling (A-Z a-z 0-9 _ -; other characters
# become _). lossless is a reversible z<hex>z encoding (docs/modes.md).
#naming: readable
#flat:
#  maxNameLength: 64     # longest name flat mode publishes (clients cap at 64)

# Other tool sources. Each id (lowercase letters and digits) prefixes its
# tools' names: ev_echo, ev_get-sum, gh_list_repos...
providers:
#  - id: ev                        # an MCP server run over stdio
#    kind: mcp
#    description: Reference server
#    discoverHint: echo and arithmetic
#    command: node
#    args: [server.js]
#    env:
#      API_KEY: ${EV_KEY}          # read from your environment, never stored
#    readonly: [echo, get-sum]     # these never need confirmation; every other
#                                  # tool is "not known to be read-only"
#    trustAnnotations: true        # or believe the server's own readOnlyHint
#    rename: {get-annotated-message: annotated}   # an operator's name for a tool
#    timeout: 30s
#
#  - id: remote                    # an MCP server over Streamable HTTP
#    kind: mcp
#    url: http://127.0.0.1:9000/mcp
#    headers:
#      Authorization: Bearer ${REMOTE_TOKEN}   # or ${keyring:remote/token}
#
#  - id: ops                       # skills: JavaScript recipes in the sandbox
#    kind: mcp
#    command: ops-mcp-server
#    skills: skills/ops            # *.js files exporting meta and run(tools, args)
#
#  - id: tasks                     # a REST API from its OpenAPI document
#    kind: openapi                 # (examples/tasks.yaml, examples/github.yaml)
#    spec: ./tasks.openapi.yaml    # a file or an https:// URL
#    baseURL: http://127.0.0.1:8080/api
#    auth:
#      header: { X-Api-Key: "${TASKS_API_KEY}" }
#    exclude: ["*_delete_*"]       # operations left out
#
#  - id: git                       # command-line tools, run without a shell
#    kind: cli                     # (examples/git.yaml, examples/gh-cli.yaml)
#    allow: [git]                  # the only programs its tools may run
#    tools:
#      - name: log
#        description: The last commits, one line each.
#        argv: [git, log, --oneline, "-n", "{limit}"]
#        params:
#          limit: { type: integer, description: How many, default: 20 }
#        readonly: true
#
#  - id: codex                     # delegate a task to a coding-agent CLI you
#    kind: workers                 # are logged into: codex, claude, gemini, agy
#    preset: codex
#    timeout: 30m

# Markdown prompts (front matter: name, description, arguments) served as
# MCP prompts.
prompts:
  dir: .agents/prompts

policy:
  confirm: agent        # agent (confirm: true), token or human (asked by the client)
  deny: []              # canonical-name globs never callable, e.g. "*_delete_*"
#  allow: ["ev_*"]      # when set, only these are callable

#server:
#  http:
#    addr: 127.0.0.1:8321
#    tokens: ["${AGENT_TOOLS_TOKEN}"]   # bearer tokens accepted over HTTP
#    oidc:                               # and/or JWTs from an OpenID Connect issuer
#      issuer: https://accounts.example.com
#      audience: agent-tools
#    allowedOrigins: ["https://console.example.com"]   # browsers besides localhost
#    rateLimit: { perSecond: 50, burst: 100 }            # per token

audit:
  path: ""              # "" = stderr, "off" = no audit log, else a file

limits:
  maxResultChars: 30000
  loopGuard: { repeatAfter: 3, refuseAfter: 6, coolDown: 60s }
`
