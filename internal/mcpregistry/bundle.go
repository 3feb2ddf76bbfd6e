package mcpregistry

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// MaxBundle bounds an mcpb download.
const MaxBundle = 256 << 20

// Bundle is an mcpb package to fetch: PlanFor leaves Command empty and
// Plan.Bundle set; FetchBundle fills the command in.
type Bundle struct {
	URL    string
	SHA256 string
}

// bundleManifest is the part of an MCPB manifest.json that says how to
// run the server.
type bundleManifest struct {
	Name   string `json:"name"`
	Server struct {
		Type      string `json:"type"`
		MCPConfig struct {
			Command string            `json:"command"`
			Args    []string          `json:"args"`
			Env     map[string]string `json:"env"`
		} `json:"mcp_config"`
	} `json:"server"`
	UserConfig map[string]struct {
		Title       string `json:"title"`
		Description string `json:"description"`
		Required    bool   `json:"required"`
		Sensitive   bool   `json:"sensitive"`
		Default     any    `json:"default"`
	} `json:"user_config"`
}

var bundleVar = regexp.MustCompile(`\$\{([^}]*)\}`)

// FetchBundle downloads the plan's bundle, refuses it unless its SHA-256
// is the one the server.json declares, unpacks it under dir/<sha256>/
// (once: an unpacked bundle is reused) and sets the plan's command, args
// and env from its manifest. hc nil: http.DefaultClient.
func (p *Plan) FetchBundle(ctx context.Context, hc *http.Client, dir string, lookupEnv func(string) (string, bool)) error {
	b := p.Bundle
	if b == nil {
		return nil
	}
	if dir == "" {
		return errors.New("mcpb: no state directory to unpack the bundle into ($XDG_STATE_HOME or $HOME)")
	}
	u, err := url.Parse(b.URL)
	if err != nil || !(u.Scheme == "https" || u.Scheme == "http" && loopback(u.Hostname())) {
		return fmt.Errorf("mcpb: %q is not an https URL: refused", clip(b.URL))
	}
	if err := CheckRemoteURL(b.URL); err != nil { // link-local and metadata hosts
		return fmt.Errorf("mcpb: %w", err)
	}
	dest := filepath.Join(dir, b.SHA256)
	if _, err := os.Stat(filepath.Join(dest, "manifest.json")); err != nil {
		data, err := download(ctx, hc, b.URL)
		if err != nil {
			return fmt.Errorf("mcpb %s: %w", clip(b.URL), err)
		}
		sum := sha256.Sum256(data)
		if got := hex.EncodeToString(sum[:]); got != b.SHA256 {
			return fmt.Errorf("mcpb %s: SHA-256 %s, but the server.json declares %s: refused", clip(b.URL), got, b.SHA256)
		}
		if err := unzip(data, dir, dest); err != nil {
			return fmt.Errorf("mcpb %s: %w", clip(b.URL), err)
		}
	}
	raw, err := os.ReadFile(filepath.Join(dest, "manifest.json"))
	if err != nil {
		return fmt.Errorf("mcpb: %w", err)
	}
	var m bundleManifest
	if err := json.Unmarshal(raw, &m); err != nil {
		return fmt.Errorf("mcpb: manifest.json: %w", err)
	}
	if m.Server.MCPConfig.Command == "" {
		return errors.New("mcpb: manifest.json has no server.mcp_config.command")
	}
	refs := map[string]bool{}
	var bad error
	var mapVar func(string) string
	sub := func(s string) string {
		// Literal text is escaped for the config's ${VAR} interpolation;
		// the manifest's own ${...} are mapped.
		var out strings.Builder
		last := 0
		for _, m := range bundleVar.FindAllStringIndex(s, -1) {
			out.WriteString(escape(s[last:m[0]]))
			out.WriteString(mapVar(s[m[0]:m[1]]))
			last = m[1]
		}
		out.WriteString(escape(s[last:]))
		return out.String()
	}
	mapVar = func(v string) string {
		name := v[2 : len(v)-1]
		switch {
		case name == "__dirname":
			return escape(dest)
		case name == "/" || name == "pathSeparator":
			return string(filepath.Separator)
		case name == "HOME":
			return "${HOME}"
		case strings.HasPrefix(name, "user_config."):
			key := strings.TrimPrefix(name, "user_config.")
			uc, ok := m.UserConfig[key]
			ref := envName(key)
			if ok && !uc.Sensitive && uc.Default != nil {
				if d, isStr := uc.Default.(string); isStr {
					return "${" + ref + ":-" + escapeDefault(d) + "}"
				}
				return "${" + ref + ":-" + escapeDefault(fmt.Sprint(uc.Default)) + "}"
			}
			refs[ref] = true
			return "${" + ref + "}"
		}
		bad = fmt.Errorf("mcpb: manifest.json uses ${%s}, which is not supported", clip(name))
		return v
	}
	p.Command = sub(m.Server.MCPConfig.Command)
	p.Args = nil
	for _, a := range m.Server.MCPConfig.Args {
		p.Args = append(p.Args, sub(a))
	}
	keys := make([]string, 0, len(m.Server.MCPConfig.Env))
	for k := range m.Server.MCPConfig.Env {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if slices.ContainsFunc(p.Env, func(v Var) bool { return v.Key == k }) {
			continue // the server.json declares it: its reference stands
		}
		v := Var{Key: k, Value: sub(m.Server.MCPConfig.Env[k])}
		for _, r := range refNames(v.Value) {
			for key, uc := range m.UserConfig {
				if envName(key) == r && uc.Sensitive {
					v.Secret = true
					v.Comment = "secret: set " + r + " in the environment; never written here"
				}
			}
		}
		p.Env = append(p.Env, v)
	}
	if bad != nil {
		return bad
	}
	// What the manifest runs is checked as a package's runtime is: node's
	// options before the script, the environment's names (refuse.go).
	err = checkRuntimeArgs(runtimeOf(p.Command), "mcp_config.args", p.Args, "", p.allow)
	if err == nil {
		err = p.checkEnv()
	}
	if err != nil {
		p.Command, p.Args = "", nil
		return fmt.Errorf("mcpb: manifest.json: %w", err)
	}
	if err := unusedAllow(p.allow, append([]string{p.Command}, p.Args...)); err != nil {
		p.Command, p.Args = "", nil
		return err
	}
	for _, r := range sortedKeys(refs) {
		if _, ok := lookupEnv(r); !ok && !slices.Contains(p.Needs, r) {
			p.Needs = append(p.Needs, r)
		}
	}
	p.Notes = append(p.Notes, "bundle unpacked in "+dest+" (its SHA-256 checked)")
	return nil
}

func loopback(host string) bool {
	ip := net.ParseIP(host)
	return host == "localhost" || ip != nil && ip.IsLoopback()
}

func download(ctx context.Context, hc *http.Client, u string) ([]byte, error) {
	if hc == nil {
		hc = http.DefaultClient
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, unwrapURL(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("HTTP %d", resp.StatusCode)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, MaxBundle+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxBundle {
		return nil, fmt.Errorf("larger than %d bytes", MaxBundle)
	}
	return data, nil
}

// unzip unpacks a bundle into a temporary directory beside dest and
// renames it into place: a half-unpacked bundle is never used. Entries
// that would leave the directory, links and special files are refused.
func unzip(data []byte, parent, dest string) error {
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return fmt.Errorf("not a zip archive: %w", err)
	}
	if err := os.MkdirAll(parent, 0o700); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(parent, ".unpack-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	var total int64
	for _, f := range zr.File {
		name := filepath.FromSlash(f.Name)
		if !filepath.IsLocal(name) {
			return fmt.Errorf("entry %q leaves the bundle: refused", clip(f.Name))
		}
		mode := f.Mode()
		target := filepath.Join(tmp, name)
		switch {
		case mode.IsDir():
			if err := os.MkdirAll(target, 0o755); err != nil {
				return err
			}
			continue
		case !mode.IsRegular():
			return fmt.Errorf("entry %q is not a regular file: refused", clip(f.Name))
		}
		total += int64(f.UncompressedSize64)
		if total > 4*MaxBundle {
			return errors.New("unpacks to too much data: refused")
		}
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return err
		}
		rc, err := f.Open()
		if err != nil {
			return err
		}
		perm := os.FileMode(0o644)
		if mode&0o111 != 0 {
			perm = 0o755
		}
		out, err := os.OpenFile(target, os.O_CREATE|os.O_EXCL|os.O_WRONLY, perm)
		if err != nil {
			rc.Close()
			return err
		}
		_, err = io.Copy(out, io.LimitReader(rc, int64(f.UncompressedSize64)+1))
		rc.Close()
		if cerr := out.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
	}
	if _, err := os.Stat(filepath.Join(tmp, "manifest.json")); err != nil {
		return errors.New("no manifest.json in the bundle")
	}
	if err := os.Rename(tmp, dest); err != nil && !errors.Is(err, os.ErrExist) {
		if _, serr := os.Stat(filepath.Join(dest, "manifest.json")); serr == nil {
			return nil // unpacked meanwhile by another add
		}
		return err
	}
	return nil
}

// BundleDir is where bundles are unpacked: beside the registry cache.
func BundleDir(cacheDir string) string {
	if cacheDir == "" {
		return ""
	}
	return filepath.Join(cacheDir, "bundles")
}
