package mcpregistry

// What a registry entry may not write into agent-tools.yaml unasked: the
// arguments of the runtime that fetches and starts the package (npx, uvx,
// docker, dnx; node for a bundle), the environment names that load code
// into a process, and remotes over plain HTTP or at link-local and cloud
// metadata addresses (docs/registry.md, "What an entry may not do").
//
// A package's own arguments (after the package, the image or dnx's --)
// go to the server, not to the runtime: they cannot change what is
// fetched or run, and are not checked here. The runtime's arguments are
// checked against RuntimeArgRules: an option on it as harmless passes;
// one on it as refused, or not on it at all, or a bare value (npx, uvx,
// docker and dnx would run it in the package's place), is refused unless
// the person names it exactly with --allow-args.

import (
	"fmt"
	"net/netip"
	"net/url"
	"path"
	"slices"
	"strconv"
	"strings"
)

// ArgRule is one row of RuntimeArgRules: options of one runtime.
type ArgRule struct {
	// Runtime is the command's base name: npx, uvx, docker, dnx, node.
	Runtime string
	// Names are the option's spellings ("--call", "-c").
	Names []string
	// Value: the option takes a value (--name=V, or --name V).
	Value bool
	// Refused says which values are refused: nil refuses every use, and a
	// harmless option has refusedNever.
	Refused func(v string) bool
	// Why is the reason a refusal gives.
	Why string
}

func refusedNever(string) bool { return false }

// harmless are options that change nothing of what is fetched or run.
func harmless(rt string, value bool, names ...string) ArgRule {
	return ArgRule{Runtime: rt, Names: names, Value: value, Refused: refusedNever}
}

func refuse(rt string, value bool, why string, names ...string) ArgRule {
	return ArgRule{Runtime: rt, Names: names, Value: value, Why: why}
}

func refuseIf(rt string, bad func(string) bool, why string, names ...string) ArgRule {
	return ArgRule{Runtime: rt, Names: names, Value: true, Refused: bad, Why: why}
}

// hostNamespace is a docker namespace value that shares the host's (or
// another container's).
func hostNamespace(v string) bool {
	v = strings.ToLower(strings.TrimSpace(v))
	return v == "host" || strings.HasPrefix(v, "container:")
}

// rootUser is a docker --user that is root.
func rootUser(v string) bool {
	u, _, _ := strings.Cut(strings.TrimSpace(v), ":")
	return u == "" || u == "0" || strings.EqualFold(u, "root")
}

const (
	whyFetch   = "it changes where the package is fetched from, or which package runs"
	whyExec    = "it runs a command or code other than the package"
	whyLoad    = "it loads code into the runtime before the package runs"
	whyConfig  = "it reads another configuration, which can change what is fetched or run"
	whyHost    = "it gives the container the host's files, devices, namespaces or privileges"
	whyEntry   = "it replaces the image's own entrypoint with another command"
	whyPython  = "it picks the interpreter that runs the package (a path runs any program)"
	whyRootUsr = "it runs the container as root"
)

// RuntimeArgRules are the runtime options a registry entry's
// runtimeArguments may hold (harmless) or may not (refused, with why).
// An option of a runtime that no row names is refused too.
var RuntimeArgRules = []ArgRule{
	// npx (npm exec): options before the package are npm's.
	harmless("npx", false, "-y", "--yes", "-q", "--quiet", "--silent", "--prefer-offline", "--prefer-online", "--no-fund", "--no-audit", "--no-update-notifier"),
	harmless("npx", true, "--loglevel"),
	refuse("npx", true, whyExec, "--call", "-c"),
	refuse("npx", true, whyFetch, "--registry", "--package", "-p", "--prefix", "--workspace", "-w", "--cache", "--offline"),
	refuse("npx", true, whyConfig, "--userconfig", "--globalconfig", "--script-shell", "--node-options", "--scope"),
	refuse("npx", false, whyFetch, "--workspaces", "--include-workspace-root", "--dangerously-allow-all-scripts"),
	// uvx (uv tool run): options before the package are uv's.
	harmless("uvx", false, "-q", "--quiet", "--offline", "--no-progress", "--native-tls", "--isolated", "--no-cache", "--refresh", "--no-config"),
	refuse("uvx", true, whyFetch, "--index-url", "-i", "--extra-index-url", "--index", "--default-index", "--from", "--with",
		"--with-editable", "--with-requirements", "--find-links", "-f", "--refresh-package", "--reinstall-package", "--prerelease", "--index-strategy"),
	refuse("uvx", true, whyPython, "--python", "-p", "--python-preference"),
	refuse("uvx", true, whyConfig, "--config-file", "--directory", "--project", "--env-file", "--cache-dir"),
	// docker run: options before the image are docker's.
	harmless("docker", false, "-i", "--interactive", "--rm", "--init", "--read-only", "--no-healthcheck"),
	harmless("docker", true, "-e", "--env", "--name", "--memory", "-m", "--cpus", "--pids-limit", "--workdir", "-w", "--label", "-l",
		"--stop-timeout", "--platform", "--pull", "--tmpfs", "--cap-drop", "--hostname", "-h"),
	refuse("docker", false, whyHost, "--privileged"),
	refuse("docker", true, whyHost, "-v", "--volume", "--mount", "--volumes-from", "--device", "--device-cgroup-rule", "--cap-add",
		"--security-opt", "--cgroup-parent", "--cgroupns", "--gpus"),
	refuseIf("docker", hostNamespace, whyHost, "--network", "--net", "--uts", "--userns"),
	refuse("docker", true, whyHost, "--pid", "--ipc"),
	refuseIf("docker", rootUser, whyRootUsr, "--user", "-u"),
	refuse("docker", true, whyEntry, "--entrypoint"),
	refuse("docker", true, "it reads a file of the host into the container's environment", "--env-file", "--label-file"),
	// dnx: options before the package are dotnet's.
	harmless("dnx", false, "--yes", "-y"),
	refuse("dnx", true, whyFetch, "--source", "--add-source", "--version", "--prerelease"),
	refuse("dnx", true, whyConfig, "--configfile"),
	// node, as a bundle's manifest runs it: options before the script.
	harmless("node", false, "--enable-source-maps", "--no-warnings", "--no-deprecation"),
	harmless("node", true, "--max-old-space-size", "--stack-size"),
	refuse("node", true, whyExec, "--eval", "-e", "--print", "-p"),
	refuse("node", true, whyLoad, "--require", "-r", "--import", "--loader", "--experimental-loader", "--env-file", "--inspect", "--inspect-brk"),
}

// A refused environment name: exactly, or as a prefix (ending in _ or *).
var refusedEnv = []struct {
	names []string
	why   string
}{
	{[]string{"NODE_OPTIONS", "NODE_PATH", "NODE_REPL_EXTERNAL_MODULE", "LD_*", "DYLD_*", "PYTHONPATH", "PYTHONSTARTUP", "PYTHONHOME",
		"PYTHONUSERBASE", "PYTHONEXECUTABLE", "PERL5OPT", "PERL5LIB", "PERLLIB", "RUBYOPT", "RUBYLIB", "BASH_ENV", "ENV", "JAVA_TOOL_OPTIONS",
		"_JAVA_OPTIONS", "JDK_JAVA_OPTIONS", "CLASSPATH", "DOTNET_STARTUP_HOOKS", "DOTNET_ADDITIONAL_DEPS", "DOTNET_SHARED_STORE",
		"CORECLR_ENABLE_PROFILING", "CORECLR_PROFILER_PATH", "ELECTRON_RUN_AS_NODE"}, "it loads code into the process, or into its interpreter"},
	{[]string{"PATH", "GIT_SSH_COMMAND", "GIT_SSH", "GIT_EXEC_PATH", "GIT_CONFIG_*", "SHELL", "COMSPEC", "PATHEXT"}, "it changes which programs run"},
	{[]string{"NPM_CONFIG_*", "UV_*", "PIP_*", "DOCKER_*", "NUGET_*", "DOTNET_*", "HOME", "USERPROFILE", "XDG_CONFIG_HOME", "APPDATA"},
		"it changes the runtime's configuration: where the package is fetched from, which daemon or config is used"},
	{[]string{"HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY", "NODE_EXTRA_CA_CERTS", "NODE_TLS_REJECT_UNAUTHORIZED", "SSL_CERT_FILE",
		"SSL_CERT_DIR", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE"}, "it changes where the runtime's downloads go, or which certificates it trusts"},
}

// RefusedEnv says why an environment variable name may not be set by a
// registry entry ("" when it may). Names compare without case (npm reads
// npm_config_* as NPM_CONFIG_*, Windows ignores case).
func RefusedEnv(name string) string {
	up := strings.ToUpper(name)
	for _, g := range refusedEnv {
		for _, n := range g.names {
			if p, ok := strings.CutSuffix(n, "*"); ok && strings.HasPrefix(up, p) || up == n {
				return g.why
			}
		}
	}
	return ""
}

// RefusedArg is an argument, environment variable or URL a registry
// entry may not write unasked.
type RefusedArg struct {
	// Arg is the argument as it would run (an option and, when it is
	// written apart, its value, space-separated): what --allow-args names.
	Arg string
	// Runtime is the command it goes to; Where is runtimeArguments,
	// environmentVariables or a remote.
	Runtime, Where string
	Why            string
	// Allowable: --allow-args can let it through (arguments only).
	Allowable bool
}

func (r *RefusedArg) Error() string {
	if !r.Allowable {
		return fmt.Sprintf("%s %q: refused: %s", r.Where, r.Arg, r.Why)
	}
	return fmt.Sprintf("%s %q for %s: refused: %s; if you trust it, add again with %s",
		r.Where, r.Arg, r.Runtime, r.Why, AllowFlag(r.Arg))
}

// AllowFlag is the --allow-args flag that lets arg through, quoted for a
// POSIX shell when it needs it.
func AllowFlag(arg string) string { return shellQuote("--allow-args=" + arg) }

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && !strings.ContainsFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_=.,:/@+%", r))
	}) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func ruleFor(runtime, name string) *ArgRule {
	for i := range RuntimeArgRules {
		if r := &RuntimeArgRules[i]; r.Runtime == runtime && slices.Contains(r.Names, name) {
			return r
		}
	}
	return nil
}

// checkRuntimeArgs checks the arguments that go to runtime (its options
// before the package); where names them in messages. positional says what a bare value does there
// ("" : it is the start of the program's own arguments, and checking
// ends). Refusals that allow lets through are consumed from it.
func checkRuntimeArgs(runtime, where string, args []string, positional string, allow map[string]bool) error {
	known := slices.ContainsFunc(RuntimeArgRules, func(r ArgRule) bool { return r.Runtime == runtime })
	if !known {
		return nil
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "-") || a == "-" {
			if positional == "" {
				return nil // the script: what follows is the program's
			}
			if err := allowOr(allow, &RefusedArg{Arg: a, Runtime: runtime, Where: where, Why: positional, Allowable: true}); err != nil {
				return err
			}
			continue
		}
		if a == "--" {
			return allowOr(allow, &RefusedArg{Arg: a, Runtime: runtime, Where: where, Why: "it ends the runtime's options: what follows runs in the package's place", Allowable: true})
		}
		name, val, hasVal := strings.Cut(a, "=")
		r := ruleFor(runtime, name)
		unit := a
		if r != nil && r.Value && !hasVal && i+1 < len(args) {
			val = args[i+1]
			unit = a + " " + val
			i++
		}
		var why string
		switch {
		case r == nil:
			why = "it is not one of the " + runtime + " options known to be harmless (" + strings.Join(harmlessNames(runtime), ", ") + ")"
		case r.Refused == nil || r.Refused(val):
			why = r.Why
		default:
			continue
		}
		if err := allowOr(allow, &RefusedArg{Arg: unit, Runtime: runtime, Where: where, Why: why, Allowable: true}); err != nil {
			return err
		}
	}
	return nil
}

func harmlessNames(runtime string) []string {
	var out []string
	for _, r := range RuntimeArgRules {
		if r.Runtime == runtime && r.Why == "" {
			out = append(out, r.Names...)
		}
	}
	return out
}

// allowOr lets r through when allow names it (and marks it used), else
// returns it.
func allowOr(allow map[string]bool, r *RefusedArg) error {
	if _, ok := allow[r.Arg]; ok {
		allow[r.Arg] = true
		return nil
	}
	return r
}

// ParseAllowArgs checks the --allow-args values: each names one argument
// exactly as the refusal printed it.
func ParseAllowArgs(vals []string) (map[string]bool, error) {
	out := map[string]bool{}
	for _, v := range vals {
		switch {
		case v == "":
			return nil, fmt.Errorf("--allow-args: an empty value: name the argument exactly, as the refusal printed it (--allow-args=--registry=https://…)")
		case strings.TrimSpace(v) != v:
			return nil, fmt.Errorf("--allow-args %q: spaces around the argument: name it exactly, as the refusal printed it", v)
		case strings.ContainsFunc(v, func(r rune) bool { return r < ' ' || r == 0x7f }):
			return nil, fmt.Errorf("--allow-args %q: a control character or line break: refused", clip(v))
		case len(v) > 4096:
			return nil, fmt.Errorf("--allow-args: a value longer than 4096 bytes: refused")
		}
		out[v] = false
	}
	return out, nil
}

// unusedAllow is an error for --allow-args values that named nothing the
// entry has: a mistyped one must not pass silently.
func unusedAllow(allow map[string]bool, args []string) error {
	var unused []string
	for k, used := range allow {
		if !used {
			unused = append(unused, k)
		}
	}
	if len(unused) == 0 {
		return nil
	}
	slices.Sort(unused)
	return fmt.Errorf("--allow-args %s: the entry has no such refused argument (its command: %s); name each exactly as the refusal printed it",
		strings.Join(unused, ", "), strings.Join(args, " "))
}

// CheckRemoteURL refuses a remote (or download) URL that is not https
// (plain http only to this machine: 127.0.0.0/8, ::1, localhost), or
// whose host is link-local or a cloud metadata address.
func CheckRemoteURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return fmt.Errorf("%q is not an http(s) URL", clip(raw))
	}
	host := strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
	if why := metadataHost(host); why != "" {
		return fmt.Errorf("%q: refused: %s", clip(raw), why)
	}
	switch {
	case u.Scheme == "https":
	case u.Scheme == "http" && loopback(host):
	case u.Scheme == "http":
		return fmt.Errorf("%q: refused: plain http (only https, or http to this machine: 127.0.0.1, ::1, localhost)", clip(raw))
	default:
		return fmt.Errorf("%q: refused: the scheme %q is not https", clip(raw), u.Scheme)
	}
	return nil
}

var metadataNames = []string{"metadata.google.internal", "metadata.goog", "metadata", "instance-data", "instance-data.ec2.internal"}

var (
	linkLocal4  = netip.MustParsePrefix("169.254.0.0/16")
	linkLocal6  = netip.MustParsePrefix("fe80::/10")
	metadataIPs = []netip.Addr{netip.MustParseAddr("100.100.100.200"), netip.MustParseAddr("fd00:ec2::254"), netip.MustParseAddr("168.63.129.16")}
)

// metadataHost says why host is refused: link-local, a metadata service,
// or a number the resolver could read as an address in another form.
func metadataHost(host string) string {
	if slices.Contains(metadataNames, host) {
		return "a cloud metadata service"
	}
	if a, err := netip.ParseAddr(strings.Trim(host, "[]")); err == nil {
		a = a.Unmap()
		switch {
		case linkLocal4.Contains(a) || linkLocal6.Contains(a.WithZone("")):
			return "a link-local address (169.254.0.0/16, fe80::/10: cloud metadata services live there)"
		case slices.Contains(metadataIPs, a.WithZone("")):
			return "a cloud metadata service"
		}
		return ""
	}
	// 2852039166, 0xa9fea9fe, 0251.0376.0251.0376, 169.254.43518: the C
	// resolver reads them as addresses.
	labels := strings.Split(host, ".")
	numeric := len(labels) <= 4 && host != ""
	for _, l := range labels {
		if _, err := strconv.ParseUint(l, 0, 32); err != nil || strings.Contains(l, "_") {
			numeric = false
		}
	}
	if numeric {
		return "a numeric host that is not a plain address (it may name a link-local or metadata address)"
	}
	return ""
}

// runtimeOf is the base name a command's options are looked up by.
func runtimeOf(command string) string {
	b := path.Base(strings.ReplaceAll(command, `\`, "/"))
	return strings.TrimSuffix(strings.ToLower(b), ".exe")
}
