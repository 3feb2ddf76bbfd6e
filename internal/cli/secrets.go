package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"

	"golang.org/x/term"

	"github.com/agent-tools/agent-tools/internal/app"
	"github.com/agent-tools/agent-tools/internal/secrets"
)

const secretsUsage = "secrets set|get [--reveal]|list|rm SERVICE/ACCOUNT [--config FILE] [--json]"

// indexAccount is the keyring item listing the items `secrets set` stored
// (the OS keyrings cannot be enumerated portably).
const indexAccount = "index"

// runSecrets manages secrets in the OS keyring, for ${keyring:SERVICE/ACCOUNT}
// references: a value is read from a prompt that does not echo, or from
// stdin, so it never touches the shell's history.
func runSecrets(ctx context.Context, env *Env, args []string) int {
	f := newFlags(env, "secrets", secretsUsage).withJSON()
	reveal := f.Bool("reveal", false, "get: print the value itself")
	pos, ok := f.parse(args)
	if !ok {
		return ExitUsage
	}
	if len(pos) == 0 {
		f.Usage()
		return ExitUsage
	}
	verb := pos[0]
	if verb == "list" && len(pos) == 1 {
		return listSecrets(ctx, env, f)
	}
	if len(pos) != 2 || !slices.Contains([]string{"set", "get", "rm"}, verb) {
		f.Usage()
		return ExitUsage
	}
	key := strings.TrimSuffix(strings.TrimPrefix(strings.TrimPrefix(pos[1], "${"), "keyring:"), "}")
	service, account, err := secrets.SplitKeyring(key)
	if err != nil {
		fmt.Fprintf(env.Stderr, "agent-tools: %q: %v (as in ${keyring:SERVICE/ACCOUNT})\n", pos[1], err)
		return ExitUsage
	}
	if err := secrets.KeyringAvailable(); err != nil {
		fmt.Fprintf(env.Stderr, "agent-tools: %v\n", err)
		return ExitFailed
	}
	kr := secrets.OS()
	switch verb {
	case "set":
		v, err := readSecret(env, key)
		if err != nil {
			fmt.Fprintln(env.Stderr, "agent-tools:", err)
			return ExitUsage
		}
		if err := kr.Set(service, account, v); err != nil {
			fmt.Fprintf(env.Stderr, "agent-tools: storing %s in %s: %v\n", key, secrets.KeyringName(), err)
			return ExitFailed
		}
		indexUpdate(kr, key, true)
		fmt.Fprintf(env.Stdout, "stored %s in %s; use it in agent-tools.yaml as ${keyring:%s}\n", key, secrets.KeyringName(), key)
	case "get":
		v, err := kr.Get(service, account)
		if errors.Is(err, secrets.ErrNotFound) {
			fmt.Fprintf(env.Stderr, "agent-tools: no secret %s in %s (store one with: agent-tools secrets set %s)\n", key, secrets.KeyringName(), key)
			return ExitFailed
		}
		if err != nil {
			fmt.Fprintf(env.Stderr, "agent-tools: reading %s: %v\n", key, err)
			return ExitFailed
		}
		switch {
		case *reveal:
			fmt.Fprintln(env.Stdout, v)
		case f.json:
			return writeJSON(env.Stdout, map[string]any{"key": key, "set": true, "length": len(v)})
		default:
			fmt.Fprintf(env.Stdout, "%s is set (%d characters); add --reveal to print it\n", key, len(v))
		}
	case "rm":
		err := kr.Delete(service, account)
		if errors.Is(err, secrets.ErrNotFound) {
			indexUpdate(kr, key, false)
			fmt.Fprintf(env.Stderr, "agent-tools: no secret %s in %s\n", key, secrets.KeyringName())
			return ExitFailed
		}
		if err != nil {
			fmt.Fprintf(env.Stderr, "agent-tools: removing %s: %v\n", key, err)
			return ExitFailed
		}
		indexUpdate(kr, key, false)
		fmt.Fprintf(env.Stdout, "removed %s\n", key)
	}
	return ExitOK
}

// readSecret reads a value: from a prompt without echo when stdin is a
// terminal, else all of stdin (one trailing newline dropped). Empty is an
// error: nothing empty is ever stored.
func readSecret(env *Env, key string) (string, error) {
	var v string
	if f, ok := env.Stdin.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		fmt.Fprintf(env.Stderr, "Value for %s (not shown): ", key)
		b, err := term.ReadPassword(int(f.Fd()))
		fmt.Fprintln(env.Stderr)
		if err != nil {
			return "", fmt.Errorf("reading the value: %v", err)
		}
		v = string(b)
	} else {
		b, err := io.ReadAll(io.LimitReader(env.Stdin, 1<<20))
		if err != nil {
			return "", fmt.Errorf("reading the value from stdin: %v", err)
		}
		v = strings.TrimSuffix(strings.TrimSuffix(string(b), "\n"), "\r")
	}
	if v == "" {
		return "", fmt.Errorf("no value for %s: type it at the prompt, or pipe it in (agent-tools secrets set %s < file)", key, key)
	}
	return v, nil
}

func indexRead(kr secrets.Keyring) []string {
	raw, err := kr.Get(secrets.KeyringService, indexAccount)
	var keys []string
	if err == nil {
		_ = json.Unmarshal([]byte(raw), &keys)
	}
	return keys
}

func indexUpdate(kr secrets.Keyring, key string, add bool) {
	keys := indexRead(kr)
	i := slices.Index(keys, key)
	switch {
	case add && i < 0:
		keys = append(keys, key)
	case !add && i >= 0:
		keys = slices.Delete(keys, i, i+1)
	default:
		return
	}
	slices.Sort(keys)
	b, _ := json.Marshal(keys)
	_ = kr.Set(secrets.KeyringService, indexAccount, string(b))
}

type secretRow struct {
	Ref    string `json:"ref"`
	Store  string `json:"store"`
	Where  string `json:"where,omitempty"` // file:line of the config's use
	State  string `json:"state"`           // set | missing | unchecked | error
	Detail string `json:"detail,omitempty"`
}

// listSecrets lists the keyring items `secrets set` stored and every
// reference the config makes (any store), with whether each is there;
// never a value.
func listSecrets(_ context.Context, env *Env, f *flags) int {
	var rows []secretRow
	seen := map[string]bool{}
	kerr := secrets.KeyringAvailable()
	keyringState := func(key string) (string, string) {
		if kerr != nil {
			return "error", kerr.Error()
		}
		s, a, err := secrets.SplitKeyring(key)
		if err != nil {
			return "error", err.Error()
		}
		if _, err := secrets.OS().Get(s, a); err != nil {
			if errors.Is(err, secrets.ErrNotFound) {
				return "missing", "agent-tools secrets set " + key
			}
			return "error", err.Error()
		}
		return "set", ""
	}
	if cfg, err := app.LoadConfig(app.Options{ConfigPath: f.configPath(env), ProjectDir: env.Dir, Env: env.LookupEnv}); err == nil {
		for _, u := range cfg.SecretRefs() {
			ref := u.Ref.String()
			where := fmt.Sprintf("%s:%d", relTo(env.Dir, cfg.Path), u.Pos.Line)
			if seen[ref] {
				continue
			}
			seen[ref] = true
			row := secretRow{Ref: ref, Store: u.Ref.Store, Where: where, State: "unchecked", Detail: "agent-tools doctor resolves it"}
			if u.Ref.Store == "keyring" {
				row.State, row.Detail = keyringState(u.Ref.Key)
			}
			rows = append(rows, row)
		}
	}
	if kerr == nil {
		for _, key := range indexRead(secrets.OS()) {
			ref := "${keyring:" + key + "}"
			if seen[ref] {
				continue
			}
			seen[ref] = true
			st, d := keyringState(key)
			rows = append(rows, secretRow{Ref: ref, Store: "keyring", State: st, Detail: d})
		}
	}
	if f.json {
		if rows == nil {
			rows = []secretRow{}
		}
		return writeJSON(env.Stdout, map[string]any{"keyring": keyringStatus(kerr), "secrets": rows})
	}
	fmt.Fprintf(env.Stdout, "keyring: %s\n", keyringStatus(kerr))
	if len(rows) == 0 {
		fmt.Fprintln(env.Stdout, "no secret references in the config and none stored with agent-tools secrets set")
		return ExitOK
	}
	tw := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "REFERENCE\tSTORE\tUSED AT\tSTATE")
	for _, r := range rows {
		state := r.State
		if r.Detail != "" {
			state += " (" + r.Detail + ")"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r.Ref, r.Store, orNone(r.Where), state)
	}
	tw.Flush()
	return ExitOK
}

func keyringStatus(err error) string {
	if err != nil {
		return "unavailable: " + err.Error()
	}
	return secrets.KeyringName()
}

// relTo shows p relative to dir when it is inside it.
func relTo(dir, p string) string {
	if r, err := filepath.Rel(dir, p); err == nil && !strings.HasPrefix(r, "..") {
		return r
	}
	return p
}
