package secrets

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/agent-tools/agent-tools/internal/proc"
	"github.com/agent-tools/agent-tools/internal/redact"
	"github.com/agent-tools/agent-tools/internal/text"
)

// Store is one kind of secret store: the one table ([Stores]) is what the
// config's syntax check, doctor, the docs and the resolver read.
type Store struct {
	// Name is the store as written before the colon.
	Name string
	// Syntax is the key's shape, for messages: SERVICE/ACCOUNT.
	Syntax string
	// Example is one reference, for messages and docs.
	Example string
	// Check validates a key's syntax without touching the store.
	Check func(key string) error
	// Resolve reads the value. Its errors name the store, the key and what
	// to run; they never contain the value.
	Resolve func(ctx context.Context, r *Resolver, key string) (string, error)
}

// Stores is the one table of stores, in the order messages list them.
var Stores = []*Store{
	{Name: "keyring", Syntax: "SERVICE/ACCOUNT", Example: "${keyring:github/token}", Check: checkKeyring, Resolve: resolveKeyring},
	{Name: "pass", Syntax: "PATH", Example: "${pass:team/github-token}", Check: checkPass, Resolve: resolvePass},
	{Name: "file", Syntax: "PATH", Example: "${file:/run/secrets/github-token}", Check: checkNonEmpty, Resolve: resolveFile},
	{Name: "age", Syntax: "FILE#KEY", Example: "${age:secrets.enc.yaml#github.token}", Check: checkAge, Resolve: resolveAge},
	{Name: "cmd", Syntax: "NAME", Example: "${cmd:vault-github}", Check: checkCmdName, Resolve: resolveCmd},
}

// Lookup returns the store named name, nil when there is none.
func Lookup(name string) *Store {
	for _, s := range Stores {
		if s.Name == name {
			return s
		}
	}
	return nil
}

// Names lists the stores' names.
func Names() []string {
	out := make([]string, len(Stores))
	for i, s := range Stores {
		out[i] = s.Name
	}
	return out
}

func checkNonEmpty(key string) error {
	if strings.TrimSpace(key) != key {
		return errors.New("the key has leading or trailing spaces")
	}
	return nil
}

// SplitKeyring splits SERVICE/ACCOUNT at the last slash (a service may be
// written as a path, an account may not hold a slash).
func SplitKeyring(key string) (service, account string, err error) {
	i := strings.LastIndexByte(key, '/')
	if i <= 0 || i == len(key)-1 {
		return "", "", errors.New("the key must be SERVICE/ACCOUNT, both non-empty")
	}
	return key[:i], key[i+1:], nil
}

func checkKeyring(key string) error {
	if err := checkNonEmpty(key); err != nil {
		return err
	}
	_, _, err := SplitKeyring(key)
	return err
}

func checkPass(key string) error {
	if err := checkNonEmpty(key); err != nil {
		return err
	}
	if strings.HasPrefix(key, "/") || strings.HasPrefix(key, "-") {
		return errors.New("a pass path is relative to the password store and may not start with / or -")
	}
	for _, p := range strings.Split(key, "/") {
		if p == "" || p == "." || p == ".." {
			return errors.New("a pass path may not have empty, . or .. components")
		}
	}
	return nil
}

func checkAge(key string) error {
	file, k, ok := strings.Cut(key, "#")
	if !ok || file == "" || k == "" {
		return errors.New("the key must be FILE#KEY, both non-empty")
	}
	return checkNonEmpty(key)
}

func checkCmdName(key string) error {
	for i := 0; i < len(key); i++ {
		c := key[i]
		if !(c == '_' || c == '-' || c == '.' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9') {
			return fmt.Errorf("a command name is letters, digits, '-', '_' and '.', not %q", string(c))
		}
	}
	return nil
}

// trimNewline drops one trailing newline (\n or \r\n): what echo, editors
// and Kubernetes secret files add.
func trimNewline(s string) string {
	s = strings.TrimSuffix(s, "\n")
	return strings.TrimSuffix(s, "\r")
}

// maxValue bounds a value read from a file or a command.
const maxValue = 1 << 20

func resolveFile(_ context.Context, r *Resolver, key string) (string, error) {
	path := r.path(key)
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("file store: cannot read %s: %v", path, errText(err))
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxValue+1))
	if err != nil {
		return "", fmt.Errorf("file store: reading %s: %v", path, errText(err))
	}
	if len(b) > maxValue {
		return "", fmt.Errorf("file store: %s is larger than 1 MiB; a secret file holds one value", path)
	}
	return trimNewline(string(b)), nil
}

// errText is an error without the *PathError's repetition of the path.
func errText(err error) string {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// run runs argv without a shell, with the runtime's environment (the
// tools' own variables: VAULT_ADDR, GNUPGHOME, AWS_PROFILE, ...).
func (r *Resolver) run(ctx context.Context, argv []string, stdin []byte) (*proc.Result, error) {
	timeout := r.CommandTimeout
	if timeout <= 0 {
		timeout = DefaultCommandTimeout
	}
	return proc.Run(ctx, proc.Spec{
		Path: argv[0], Args: argv[1:], Dir: r.dir(), Env: r.environ(),
		Stdin: stdin, Timeout: timeout, MaxOutput: maxValue,
	})
}

// DefaultCommandTimeout bounds pass and ${cmd:…} runs.
const DefaultCommandTimeout = 30 * time.Second

// failure describes a run that did not give a value, in words: exit
// status and the first line of stderr (scrubbed), and the command to
// try by hand.
func failure(store, key string, argv []string, res *proc.Result, err error) error {
	cmd := strings.Join(argv, " ")
	switch {
	case err != nil:
		return fmt.Errorf("%s store: cannot run %q for %s: %v", store, cmd, key, err)
	case res.TimedOut:
		return fmt.Errorf("%s store: %q for %s did not finish in time (run it by hand to see why)", store, cmd, key)
	case res.Cancelled:
		return fmt.Errorf("%s store: %q for %s was cancelled", store, cmd, key)
	}
	why := text.FirstLine(redact.String(strings.TrimSpace(proc.Text(res.Stderr))))
	if why == "" {
		why = "no message on stderr"
	}
	return fmt.Errorf("%s store: %q exited with status %d for %s: %s (run it by hand to see why)", store, cmd, res.ExitCode, key, text.Clip(why, 200))
}

func resolvePass(ctx context.Context, r *Resolver, key string) (string, error) {
	argv := []string{"pass", "show", key}
	if _, err := proc.LookPath("pass", r.environ()); err != nil {
		return "", fmt.Errorf("pass store: the pass program is not on PATH (install pass, the standard Unix password manager) to read %s", key)
	}
	res, err := r.run(ctx, argv, nil)
	if err != nil || res.ExitCode != 0 || res.TimedOut || res.Cancelled {
		return "", failure("pass", key, argv, res, err)
	}
	// pass's convention: the first line is the password, the rest notes.
	out := proc.Text(res.Stdout)
	line, _, _ := strings.Cut(out, "\n")
	return strings.TrimSuffix(line, "\r"), nil
}

func resolveCmd(ctx context.Context, r *Resolver, name string) (string, error) {
	argv, names := r.command(name)
	if len(argv) == 0 {
		msg := fmt.Sprintf("cmd store: no command %q under secrets.commands", name)
		if s := text.Suggest(name, names); s != "" {
			msg += fmt.Sprintf("; did you mean %q?", s)
		}
		return "", errors.New(msg + ` (declare it as secrets: {commands: {` + name + `: [program, arg, ...]}})`)
	}
	res, err := r.run(ctx, argv, nil)
	if err != nil || res.ExitCode != 0 || res.TimedOut || res.Cancelled {
		return "", failure("cmd", "${cmd:"+name+"}", argv, res, err)
	}
	if res.StdoutTruncated > 0 {
		return "", fmt.Errorf("cmd store: %q printed more than 1 MiB for ${cmd:%s}; a secret command prints one value", strings.Join(argv, " "), name)
	}
	return trimNewline(proc.Text(res.Stdout)), nil
}

// path makes a store path absolute against the resolver's directory.
func (r *Resolver) path(p string) string {
	if strings.HasPrefix(p, "~/") {
		if h, err := os.UserHomeDir(); err == nil {
			return filepath.Join(h, p[2:])
		}
	}
	dir := r.dir()
	if filepath.IsAbs(p) || dir == "" {
		return p
	}
	return filepath.Join(dir, p)
}
