package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"golang.org/x/term"

	"github.com/agent-tools/agent-tools/internal/app"
	"github.com/agent-tools/agent-tools/internal/config"
	"github.com/agent-tools/agent-tools/internal/mcpregistry"
	"github.com/agent-tools/agent-tools/internal/secrets"
	"github.com/agent-tools/agent-tools/internal/state"
)

// runRegistry finds MCP servers in the official registry (or the
// registries registry.url lists, a private one first) and adds them as
// pinned, quarantined providers (docs/registry.md).
func runRegistry(ctx context.Context, env *Env, args []string) int {
	const use = "registry search QUERY | show NAME[@VERSION] | add NAME[@VERSION] [--id ID] [--package TYPE|--remote] [--allow-args ARG]... [--yes] | approve ID | outdated | upgrade ID [--to VERSION] [--allow-args ARG]... [--yes]"
	f := newFlags(env, "registry", use).withJSON()
	var r regCmd
	f.StringVar(&r.id, "id", "", "add: the provider id (default: from the server's name)")
	f.StringVar(&r.pkg, "package", "", "add: the package type to run (npm, pypi, oci, nuget; default: the first one that runs)")
	f.BoolVar(&r.remote, "remote", false, "add: use the server's remote (streamable-http or sse) instead of a package")
	f.BoolVar(&r.yes, "yes", false, "add, upgrade: write without asking")
	f.StringVar(&r.to, "to", "", "upgrade: the version to upgrade to (default: the latest)")
	f.StringVar(&r.secrets, "secrets", "auto", "add, upgrade: where secret values are referenced: keyring (${keyring:ID/NAME}), env (${NAME}) or auto (the keyring when there is one)")
	f.StringVar(&r.registry, "registry", "", "registry base URLs, comma-separated (default: registry.url, else the official registry)")
	f.IntVar(&r.limit, "limit", 50, "search: most servers to show")
	f.Var((*repeated)(&r.allowArgs), "allow-args", "add, upgrade, show: let one refused runtime argument through, named exactly as the refusal prints it (repeat for each)")
	pos, ok := f.parse(args)
	if !ok {
		return ExitUsage
	}
	if len(pos) == 0 {
		f.Usage()
		return ExitUsage
	}
	r.env, r.f = env, f
	if len(r.allowArgs) > 0 && pos[0] != "add" && pos[0] != "upgrade" && pos[0] != "show" {
		fmt.Fprintln(env.Stderr, "agent-tools: --allow-args applies to registry add, upgrade and show only")
		return ExitUsage
	}
	if _, err := mcpregistry.ParseAllowArgs(r.allowArgs); err != nil {
		fmt.Fprintln(env.Stderr, "agent-tools:", err)
		return ExitUsage
	}
	switch {
	case pos[0] == "search" && len(pos) <= 2:
		q := ""
		if len(pos) == 2 {
			q = pos[1]
		}
		return r.search(ctx, q)
	case pos[0] == "show" && len(pos) == 2:
		return r.show(ctx, pos[1])
	case pos[0] == "add" && len(pos) == 2:
		return r.add(ctx, pos[1])
	case pos[0] == "approve" && len(pos) == 2:
		return r.approve(ctx, pos[1])
	case pos[0] == "outdated" && len(pos) == 1:
		return r.outdated(ctx)
	case pos[0] == "upgrade" && len(pos) == 2:
		return r.upgrade(ctx, pos[1])
	}
	f.Usage()
	return ExitUsage
}

type regCmd struct {
	env                   *Env
	f                     *flags
	id, pkg, to, registry string
	secrets               string
	allowArgs             []string // --allow-args, one refused argument each
	remote, yes           bool
	limit                 int
	cfgPath, cacheDir     string
	client                *mcpregistry.Client
}

// setup finds the config file and the registries.
func (r *regCmd) setup() int {
	r.cfgPath = r.f.configPath(r.env)
	if r.cfgPath == "" {
		if p, ok := config.Find(r.env.Dir); ok {
			r.cfgPath = p
		}
	}
	var urls []string
	if r.registry != "" {
		for _, u := range strings.Split(r.registry, ",") {
			if u = strings.TrimRight(strings.TrimSpace(u), "/"); u != "" {
				urls = append(urls, u)
			}
		}
	} else if r.cfgPath != "" {
		data, err := os.ReadFile(r.cfgPath)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			fmt.Fprintln(r.env.Stderr, "agent-tools:", err)
			return ExitFailed
		}
		if err == nil {
			cfg, err := config.Parse(r.cfgPath, data, r.env.LookupEnv)
			if err != nil {
				fmt.Fprintln(r.env.Stderr, "agent-tools:", errorText(err))
				return ExitUsage
			}
			urls = cfg.Registry.URL
		}
	}
	r.cacheDir = mcpregistry.DefaultCacheDir(r.env.LookupEnv)
	cache := mcpregistry.NewCache(r.cacheDir)
	r.client = &mcpregistry.Client{Registries: urls, Cache: cache, HTTP: &http.Client{Timeout: 20 * time.Second},
		UserAgent: "agent-tools/" + app.Version() + " (registry)"}
	return ExitOK
}

// plan maps a server.json to the entry for provider id: secrets in the
// keyring (service id) or the environment, as --secrets says; the bundle
// of an mcpb package fetched; keyring items asked for on a terminal.
func (r *regCmd) plan(ctx context.Context, s *mcpregistry.Server, ch mcpregistry.Choice, id string) (*mcpregistry.Plan, error) {
	useKeyring, err := r.keyringMode()
	if err != nil {
		return nil, err
	}
	if useKeyring {
		ch.Keyring = id
	}
	plan, err := mcpregistry.PlanFor(s, ch, r.env.LookupEnv)
	if err == nil {
		err = r.fetchBundle(ctx, plan)
	}
	if err != nil {
		return nil, err
	}
	if len(plan.Keyring) > 0 {
		r.keyringItems(plan)
	}
	return plan, nil
}

// keyringMode reads --secrets: keyring, env, or auto (the keyring when
// one is available).
func (r *regCmd) keyringMode() (bool, error) {
	switch r.secrets {
	case "env":
		return false, nil
	case "keyring":
		if err := secrets.KeyringAvailable(); err != nil {
			return false, fmt.Errorf("--secrets keyring: %v", err)
		}
		return true, nil
	case "", "auto":
		return secrets.KeyringAvailable() == nil, nil
	}
	return false, fmt.Errorf("--secrets %q: want keyring, env or auto", r.secrets)
}

// keyringItems asks for each keyring item the entry needs that is not
// stored yet, when stdin is a terminal and --yes was not given (a prompt
// without echo; empty skips it); the ones still missing disable the entry.
func (r *regCmd) keyringItems(plan *mcpregistry.Plan) {
	kr := secrets.OS()
	f, isFile := r.env.Stdin.(*os.File)
	ask := !r.yes && isFile && term.IsTerminal(int(f.Fd()))
	for _, key := range plan.Keyring {
		i := strings.LastIndex(key, "/")
		service, account := key[:i], key[i+1:]
		if _, err := kr.Get(service, account); err == nil {
			continue
		}
		if ask {
			fmt.Fprintf(r.env.Stderr, "%s is a secret, kept in %s as %s (empty: later, with agent-tools secrets set %s)\nValue (not shown): ",
				account, secrets.KeyringName(), key, key)
			b, err := term.ReadPassword(int(f.Fd()))
			fmt.Fprintln(r.env.Stderr)
			if err == nil && len(b) > 0 {
				if err := kr.Set(service, account, string(b)); err == nil {
					indexUpdate(kr, key, true)
					continue
				}
			}
		}
		plan.MissingKeyring = append(plan.MissingKeyring, key)
	}
}

// fetchBundle downloads, checks and unpacks an mcpb plan's bundle.
func (r *regCmd) fetchBundle(ctx context.Context, plan *mcpregistry.Plan) error {
	if plan.Bundle == nil {
		return nil
	}
	fmt.Fprintf(r.env.Stderr, "fetching %s (SHA-256 %s)\n", plan.Bundle.URL, plan.Bundle.SHA256)
	return plan.FetchBundle(ctx, r.client.HTTP, mcpregistry.BundleDir(r.cacheDir), r.env.LookupEnv)
}

func (r *regCmd) notices(ns []mcpregistry.Notice) {
	for _, n := range ns {
		fmt.Fprintln(r.env.Stderr, "note:", n)
	}
}

func (r *regCmd) fail(err error) int {
	fmt.Fprintln(r.env.Stderr, "agent-tools:", err)
	return ExitFailed
}

func (r *regCmd) search(ctx context.Context, q string) int {
	if c := r.setup(); c != ExitOK {
		return c
	}
	entries, notes, err := r.client.Search(ctx, mcpregistry.Query{Search: q, Version: "latest", Limit: 100}, r.limit)
	r.notices(notes)
	if err != nil {
		return r.fail(err)
	}
	if len(entries) > r.limit {
		entries = entries[:r.limit]
	}
	if r.f.json {
		out := make([]map[string]any, 0, len(entries))
		for _, e := range entries {
			out = append(out, map[string]any{"name": e.Server.Name, "version": e.Server.Version, "description": e.Server.Description,
				"status": e.Status(), "registry": e.Registry})
		}
		return writeJSON(r.env.Stdout, map[string]any{"servers": out})
	}
	if len(entries) == 0 {
		fmt.Fprintf(r.env.Stdout, "no server matches %q\n", q)
		return ExitOK
	}
	tw := tabwriter.NewWriter(r.env.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tVERSION\tSTATUS\tDESCRIPTION")
	for _, e := range entries {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", e.Server.Name, e.Server.Version, e.Status(), oneLineText(e.Server.Description, 70))
	}
	tw.Flush()
	fmt.Fprintln(r.env.Stdout, "\nshow one with: agent-tools registry show NAME; add it with: agent-tools registry add NAME")
	return ExitOK
}

func splitNameVersion(s string) (name, version string) {
	if i := strings.LastIndex(s, "@"); i > 0 {
		return s[:i], s[i+1:]
	}
	return s, ""
}

func (r *regCmd) show(ctx context.Context, arg string) int {
	if c := r.setup(); c != ExitOK {
		return c
	}
	name, ver := splitNameVersion(arg)
	e, notes, err := r.client.Get(ctx, name, ver)
	r.notices(notes)
	if err != nil {
		return r.fail(err)
	}
	if r.f.json {
		return writeJSON(r.env.Stdout, map[string]any{"server": e.Server, "status": e.Status(), "registry": e.Registry})
	}
	s := &e.Server
	w := r.env.Stdout
	fmt.Fprintf(w, "%s %s (%s) from %s\n", s.Name, s.Version, e.Status(), e.Registry)
	if s.Title != "" {
		fmt.Fprintln(w, "  title:      ", s.Title)
	}
	fmt.Fprintln(w, "  description:", oneLineText(s.Description, 200))
	if s.Repository != nil {
		fmt.Fprintln(w, "  repository: ", s.Repository.URL)
	}
	if s.WebsiteURL != "" {
		fmt.Fprintln(w, "  website:    ", s.WebsiteURL)
	}
	for _, p := range s.Packages {
		fmt.Fprintf(w, "  package:     %s %s %s (%s)\n", p.RegistryType, p.Identifier, p.Version, p.Transport.Type)
		for _, v := range p.Env {
			fmt.Fprintf(w, "    env %s%s\n", v.Name, inputFlags(v.Input))
		}
	}
	for _, t := range s.Remotes {
		fmt.Fprintf(w, "  remote:      %s %s\n", t.Type, t.URL)
		for _, h := range t.Headers {
			fmt.Fprintf(w, "    header %s%s\n", h.Name, inputFlags(h.Input))
		}
	}
	if vs, _, err := r.client.Versions(ctx, name); err == nil && len(vs) > 1 {
		var names []string
		for _, v := range vs {
			names = append(names, v.Server.Version)
		}
		fmt.Fprintln(w, "  versions:   ", strings.Join(names, ", "))
	}
	plan, err := mcpregistry.PlanFor(s, mcpregistry.Choice{Package: r.pkg, Remote: r.remote, AllowArgs: r.allowArgs}, r.env.LookupEnv)
	if err != nil {
		fmt.Fprintln(w, "\nadd: cannot install it:", err)
		return ExitOK
	}
	id := r.id
	if id == "" {
		id = mcpregistry.DefaultID(s.Name)
	}
	if plan.Bundle != nil {
		fmt.Fprintf(w, "\n`agent-tools registry add %s@%s` would download %s, check its SHA-256 (%s), unpack it and run what its manifest says\n",
			s.Name, s.Version, plan.Bundle.URL, plan.Bundle.SHA256)
		return ExitOK
	}
	text, err := entryYAML(plan, id, e.Registry)
	if err != nil {
		return r.fail(err)
	}
	fmt.Fprintf(w, "\n`agent-tools registry add %s@%s` would add:\n\n%s", s.Name, s.Version, text)
	return ExitOK
}

func inputFlags(in mcpregistry.Input) string {
	var fs []string
	if in.IsRequired {
		fs = append(fs, "required")
	}
	if in.IsSecret {
		fs = append(fs, "secret")
	}
	if in.Default != "" && !in.IsSecret {
		fs = append(fs, "default "+in.Default)
	}
	out := ""
	if len(fs) > 0 {
		out = " (" + strings.Join(fs, ", ") + ")"
	}
	if d := oneLineText(in.Description, 90); d != "" {
		out += ": " + d
	}
	return out
}

func oneLineText(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		s = string(r[:n-1]) + "…"
	}
	return s
}

// add writes a new provider entry for a registry server.
func (r *regCmd) add(ctx context.Context, arg string) int {
	if c := r.setup(); c != ExitOK {
		return c
	}
	name, ver := splitNameVersion(arg)
	e, notes, err := r.client.Get(ctx, name, ver)
	r.notices(notes)
	if err != nil {
		return r.fail(err)
	}
	if st := e.Status(); st != "active" {
		fmt.Fprintf(r.env.Stderr, "note: %s@%s is %s in %s\n", e.Server.Name, e.Server.Version, st, e.Registry)
	}
	path := r.cfgPath
	if path == "" {
		path = filepath.Join(r.env.Dir, config.FileName)
	}
	old, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return r.fail(err)
	}
	doc, err := parseDoc(old)
	if err != nil {
		return r.fail(fmt.Errorf("%s: %w", path, err))
	}
	id := r.id
	if id == "" {
		id = mcpregistry.DefaultID(e.Server.Name)
		for i := 2; doc.hasID(id); i++ {
			id = fmt.Sprintf("%s%d", strings.TrimRight(mcpregistry.DefaultID(e.Server.Name), "0123456789"), i)
		}
	} else if doc.hasID(id) {
		return r.fail(fmt.Errorf("%s already has a provider %q: pick another with --id, or upgrade it with `agent-tools registry upgrade %s`", path, id, id))
	}
	plan, err := r.plan(ctx, &e.Server, mcpregistry.Choice{Package: r.pkg, Remote: r.remote, AllowArgs: r.allowArgs}, id)
	if err != nil {
		return r.fail(err)
	}
	node, err := entryNode(plan, id, e.Registry)
	if err != nil {
		return r.fail(err)
	}
	data, err := spliceAppend(old, doc, node)
	if err != nil {
		return r.fail(err)
	}
	code := r.write(path, old, data, fmt.Sprintf("added provider %q: %s (%s)", id, e.Server.Name+"@"+e.Server.Version, plan.Source))
	if code != ExitOK {
		return code
	}
	r.nextSteps(plan, id)
	return ExitOK
}

func (r *regCmd) nextSteps(plan *mcpregistry.Plan, id string) {
	w := r.env.Stdout
	if len(plan.Needs) > 0 {
		fmt.Fprintf(w, "it is disabled until %s %s set in the environment (then remove `enabled: false`)\n",
			strings.Join(plan.Needs, ", "), map[bool]string{true: "is", false: "are"}[len(plan.Needs) == 1])
	}
	for _, k := range plan.MissingKeyring {
		fmt.Fprintf(w, "it is disabled until %s is in the keyring: agent-tools secrets set %s (then remove `enabled: false`)\n", k, k)
	}
	fmt.Fprintf(w, "nothing of it runs until you approve it (pin: quarantine): read the entry above, then `%s`; its tools are then quarantined too: see them with `agent-tools pins list`, approve each with `agent-tools pins approve NAME` (or in the console)\n", app.ApproveCommand(id))
}

// write validates the new file, shows the diff, asks (unless --yes) and
// writes it atomically.
func (r *regCmd) write(path string, old, data []byte, done string) int {
	if _, err := config.Parse(path, data, r.env.LookupEnv); err != nil {
		fmt.Fprintln(r.env.Stderr, "agent-tools: the entry would not be valid; nothing written:")
		fmt.Fprintln(r.env.Stderr, errorText(err))
		return ExitFailed
	}
	fmt.Fprint(r.env.Stdout, unifiedDiff(path, string(old), string(data)))
	if !r.yes {
		fmt.Fprintf(r.env.Stdout, "write this to %s? [y/N] ", path)
		line, _ := bufio.NewReader(r.env.Stdin).ReadString('\n')
		if a := strings.ToLower(strings.TrimSpace(line)); a != "y" && a != "yes" {
			fmt.Fprintln(r.env.Stdout, "\nnothing written")
			return ExitFailed
		}
	}
	if err := writeConfigFile(path, data); err != nil {
		return r.fail(err)
	}
	fmt.Fprintf(r.env.Stdout, "%s in %s (a running serve picks it up)\n", done, path)
	return ExitOK
}

// writeConfigFile replaces the config atomically (state.WriteFilePerm),
// keeping the mode a person gave it.
func writeConfigFile(path string, data []byte) error {
	mode := os.FileMode(0o644)
	if fi, err := os.Stat(path); err == nil {
		mode = fi.Mode().Perm()
	}
	return state.WriteFilePerm(path, data, mode)
}

type outdatedLine struct {
	ID      string `json:"id"`
	Name    string `json:"name"`
	Pinned  string `json:"pinned"`
	Latest  string `json:"latest,omitempty"`
	Status  string `json:"status"` // current | outdated | unknown
	Problem string `json:"problem,omitempty"`
}

// readDoc sets the command up and reads the config it works on: its bytes
// and its YAML document; none is the error when there is no config.
func (r *regCmd) readDoc(none string) ([]byte, *yamlDoc, int) {
	if c := r.setup(); c != ExitOK {
		return nil, nil, c
	}
	if r.cfgPath == "" {
		return nil, nil, r.fail(errors.New(none))
	}
	data, err := os.ReadFile(r.cfgPath)
	if err != nil {
		return nil, nil, r.fail(err)
	}
	doc, err := parseDoc(data)
	if err != nil {
		return nil, nil, r.fail(err)
	}
	return data, doc, ExitOK
}

func (r *regCmd) outdated(ctx context.Context) int {
	_, doc, c := r.readDoc("no agent-tools.yaml here: nothing was added from a registry")
	if c != ExitOK {
		return c
	}
	var lines []outdatedLine
	var notes []mcpregistry.Notice
	for _, m := range doc.marked() {
		l := outdatedLine{ID: m.id, Name: m.name, Pinned: m.version, Status: "unknown"}
		e, ns, err := r.client.Get(ctx, m.name, "latest")
		notes = append(notes, ns...)
		switch {
		case err != nil:
			l.Problem = err.Error()
		case e.Server.Version == m.version:
			l.Latest, l.Status = e.Server.Version, "current"
		default:
			l.Latest, l.Status = e.Server.Version, "outdated"
		}
		lines = append(lines, l)
	}
	r.notices(notes)
	if r.f.json {
		if lines == nil {
			lines = []outdatedLine{}
		}
		return writeJSON(r.env.Stdout, map[string]any{"providers": lines})
	}
	if len(lines) == 0 {
		fmt.Fprintln(r.env.Stdout, "no provider in", r.cfgPath, "was added from a registry")
		return ExitOK
	}
	tw := tabwriter.NewWriter(r.env.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tSERVER\tPINNED\tLATEST\tSTATUS")
	for _, l := range lines {
		st := l.Status
		if l.Problem != "" {
			st += ": " + l.Problem
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", l.ID, l.Name, l.Pinned, l.Latest, st)
	}
	tw.Flush()
	for _, l := range lines {
		if l.Status == "outdated" {
			fmt.Fprintf(r.env.Stdout, "upgrade with: agent-tools registry upgrade %s\n", l.ID)
		}
	}
	return ExitOK
}

func (r *regCmd) upgrade(ctx context.Context, id string) int {
	old, doc, c := r.readDoc("no agent-tools.yaml here")
	if c != ExitOK {
		return c
	}
	var m *marker
	for _, x := range doc.marked() {
		if x.id == id {
			m = &x
			break
		}
	}
	if m == nil {
		return r.fail(fmt.Errorf("%s has no provider %q added from a registry (agent-tools registry outdated lists them)", r.cfgPath, id))
	}
	e, notes, err := r.client.Get(ctx, m.name, r.to)
	r.notices(notes)
	if err != nil {
		return r.fail(err)
	}
	if e.Server.Version == m.version {
		fmt.Fprintf(r.env.Stdout, "%s is at %s@%s already\n", id, m.name, m.version)
		return ExitOK
	}
	ch := mcpregistry.Choice{Remote: m.source == "remote", AllowArgs: r.allowArgs}
	if !ch.Remote {
		ch.Package = m.source
	}
	plan, err := r.plan(ctx, &e.Server, ch, id)
	if err != nil {
		return r.fail(err)
	}
	fresh, err := entryNode(plan, id, e.Registry)
	if err != nil {
		return r.fail(err)
	}
	data, err := spliceReplace(old, doc, m.node, fresh)
	if err != nil {
		return r.fail(err)
	}
	code := r.write(r.cfgPath, old, data, fmt.Sprintf("upgraded %q: %s@%s → %s (%s)", id, m.name, m.version, e.Server.Version, plan.Source))
	if code != ExitOK {
		return code
	}
	fmt.Fprintf(r.env.Stdout, "it does not run again until you approve the new entry: `%s`; its tools are re-pinned when it starts: a changed definition waits for `agent-tools pins approve` (pin: quarantine)\n", app.ApproveCommand(id))
	return ExitOK
}
