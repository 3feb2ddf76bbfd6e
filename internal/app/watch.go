package app

// Live catalog: the config file and the local scripts directory are watched
// (fsnotify, debounced).
//
//   - A change under the scripts directory calls Registry.Refresh: the local
//     provider re-reads the directory, and when its tools changed the
//     registry's change listener re-syncs the facade, whose MCP server
//     notifies every session (notifications/tools/list_changed).
//   - A change of the config file rebuilds the runtime with New, exactly as
//     at start. If that fails (a broken config), the last good runtime keeps
//     serving and the error, with its positions, is logged. Otherwise the new
//     registry and pipeline are swapped in under the one facade (it reads
//     them through liveCatalog and dispatch), the facade re-syncs, and
//     sessions get list_changed if the tool set changed. The old generation's
//     providers are closed once the calls running on them have returned.
//
// Design choice: a reload rebuilds every provider (upstream servers are
// restarted) rather than diffing them, because the registry has no way to
// replace a provider and the rebuild path is the start-up path, tested by
// everything else. Settings fixed at start are not changed by a reload: the
// exposure mode and server.http; a change to them is logged as needing a
// restart. Policy rules apply at once, to listings and calls.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/agent-tools/agent-tools/internal/catalog"
	"github.com/agent-tools/agent-tools/internal/config"
	"github.com/agent-tools/agent-tools/internal/index"
	"github.com/agent-tools/agent-tools/internal/naming"
	"github.com/agent-tools/agent-tools/internal/pipeline"
	"github.com/agent-tools/agent-tools/internal/provider"
	"github.com/agent-tools/agent-tools/internal/registry"
	"github.com/agent-tools/agent-tools/internal/toolerr"
)

// DefaultDebounce is how long the watcher waits for a burst of file events
// (an editor's write, rename and chmod) to settle.
const DefaultDebounce = 150 * time.Millisecond

func (a *App) current() *generation { return a.live.cur.Load() }

// Registry is the live registry (it changes when the config is reloaded).
func (a *App) Registry() *registry.Registry { return a.current().reg }

// Config is the live config.
func (a *App) Config() *config.Config { return a.current().cfg }

// Call runs a call on the live generation (the CLI and embedders call tools
// through it). The generation it starts on stays open until it returns.
func (a *App) Call(ctx context.Context, req *pipeline.Request) *pipeline.Response {
	return a.dispatch(ctx, req)
}

// dispatch runs a call on the live generation.
func (a *App) dispatch(ctx context.Context, req *pipeline.Request) *pipeline.Response {
	g := a.current()
	g.acquire()
	defer g.release()
	return g.call(ctx, req)
}

// liveCatalog is the facade's view of the live generation's catalog. The
// facade holds it for its lifetime while generations come and go, so every
// method must read the current one: the forwarding is the price of keeping
// the facade unaware of reloads.
type liveCatalog struct{ a *App }

func (c liveCatalog) reg() *registry.Registry          { return c.a.current().reg }
func (c liveCatalog) Refresh(ctx context.Context) bool { return c.reg().Refresh(ctx) }
func (c liveCatalog) Refreshed(ctx context.Context) context.Context {
	return c.reg().Refreshed(ctx)
}
func (c liveCatalog) Lookup(n string) (catalog.Tool, bool) { return c.reg().Lookup(n) }
func (c liveCatalog) Find(p, n string) (catalog.Tool, bool) {
	return c.reg().Find(p, n)
}
func (c liveCatalog) Provider(id string) (provider.Provider, catalog.ProviderInfo, bool) {
	return c.reg().Provider(id)
}
func (c liveCatalog) Tools(p string) []catalog.Tool                { return c.reg().Tools(p) }
func (c liveCatalog) Providers() []registry.ProviderStatus         { return c.reg().Providers() }
func (c liveCatalog) Search(q string, o index.Options) []index.Hit { return c.reg().Search(q, o) }
func (c liveCatalog) Skill(p, n string) (catalog.Skill, bool)      { return c.reg().Skill(p, n) }
func (c liveCatalog) FlatMaxNameLength() int                       { return c.reg().FlatMaxNameLength() }
func (c liveCatalog) ProgressiveGroupAbove() int                   { return c.a.current().cfg.Progressive.GroupAbove }
func (c liveCatalog) Conflicts() []registry.Conflict               { return c.reg().Conflicts() }
func (c liveCatalog) Scheme() naming.Scheme                        { return c.reg().Scheme() }

// Held and HeldError: a tool held back by its pin or the scanner answers
// DENIED with why and the approve command, not UNKNOWN_TOOL (registry/pins.go).
func (c liveCatalog) Held(n string) (string, bool)      { return c.reg().Held(n) }
func (c liveCatalog) HeldError(n string) *toolerr.Error { return c.reg().HeldError(n) }
func (c liveCatalog) Canonical(providerID, name string) string {
	return c.reg().Canonical(providerID, name)
}

type reloadState struct {
	mu   sync.Mutex // one reload at a time
	stop func()
}

// Reload rebuilds the runtime from the config file and swaps it in. On
// error (a broken config, an unreadable file) the running runtime is kept
// and the error is returned (and logged).
func (a *App) Reload(ctx context.Context) error {
	a.reload.mu.Lock()
	defer a.reload.mu.Unlock()
	// The same options as at start: without --config, LoadConfig finds an
	// agent-tools.yaml created since (or falls back to zero-config again).
	// Providers live as long as the app, not as the caller's ctx.
	if err := a.configGone(); err != nil {
		a.log.Error("config change not applied; the last good configuration keeps serving", "err", err)
		return err
	}
	g, err := a.build(a.ctx)
	if err != nil {
		a.log.Error("config change not applied; the last good configuration keeps serving", "err", errText(err))
		return err
	}
	old := a.current()
	a.warnFixed(old.cfg, g.cfg)
	g.reg.OnChange(a.changed)
	a.live.cur.Store(g)
	a.Facade.SetRules(g.rules) // re-syncs: sessions get list_changed if the tools changed
	a.setProfileRules(g.rules)
	a.enabled.notify() // in-process sessions re-list too
	a.live.retired.Add(1)
	old.retire(func() {
		defer a.live.retired.Done()
		if err := closeAll(old.closers); err != nil {
			a.log.Warn("closing the previous configuration's providers", "err", err)
		}
	})
	a.log.Info("configuration reloaded", "config", g.cfg.Path, "providers", len(g.reg.Providers()), "tools", len(g.reg.Tools("")))
	return nil
}

// configGone reports a config file that was serving and is no longer there
// (deleted, or renamed away). Falling back to zero-config would silently drop
// every provider and the policy (a denied tool would become callable), so a
// missing file is treated like a broken one: the last good one keeps serving
// until the file is back or the runtime is restarted.
func (a *App) configGone() error {
	path := a.current().cfg.Path
	if path == "" {
		return nil // zero-config: a file appearing is a normal reload
	}
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%s was deleted or renamed; put it back (or restart to serve without it)", path)
	}
	return nil
}

func errText(err error) string {
	if errs, ok := config.AsErrors(err); ok {
		return strings.TrimRight(errs.Error(), "\n")
	}
	return err.Error()
}

// warnFixed logs settings a reload cannot change.
func (a *App) warnFixed(old, cur *config.Config) {
	if cur.Server.Redis.URL != old.Server.Redis.URL || cur.Server.ClusterKey != old.Server.ClusterKey {
		a.log.Warn("server.redis or server.clusterKey changed in the config; restart to apply it")
	}
	if a.opts.Mode == "" && cur.Mode != old.Mode {
		a.log.Warn("the exposure mode changed in the config; restart to apply it", "running", old.Mode, "config", cur.Mode)
	}
	oh, _ := json.Marshal(old.Server.HTTP)
	nh, _ := json.Marshal(cur.Server.HTTP)
	if string(oh) != string(nh) {
		a.log.Warn("server.http changed in the config; restart to apply it")
	}
}

// Watch starts watching the config file and the scripts directory until
// ctx ends or Close is called. It reports an error only if no watcher can
// be created at all.
func (a *App) Watch(ctx context.Context, debounce time.Duration) error {
	if debounce <= 0 {
		debounce = DefaultDebounce
	}
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	a.reload.mu.Lock()
	a.reload.stop = func() { cancel(); <-done }
	a.reload.mu.Unlock()
	wt := &watcher{a: a, w: w, watched: map[string]bool{}}
	wt.ensure()
	go func() {
		defer close(done)
		defer w.Close()
		wt.loop(ctx, debounce)
	}()
	return nil
}

func (a *App) stopWatch() {
	a.reload.mu.Lock()
	stop := a.reload.stop
	a.reload.stop = nil
	a.reload.mu.Unlock()
	if stop != nil {
		stop()
	}
}

type watcher struct {
	a       *App
	w       *fsnotify.Watcher
	watched map[string]bool
}

// targets are the config file and the scripts directory of the live config.
func (wt *watcher) targets() (configFile, scripts, project string) {
	cfg := wt.a.current().cfg
	project = cfg.Dir
	configFile = cfg.Path
	if configFile == "" && wt.a.opts.ConfigPath == "" {
		configFile = filepath.Join(project, config.FileName) // zero-config: watch for one to appear
	}
	if cfg.Local.Enabled {
		scripts = cfg.Local.Dir
	}
	return configFile, scripts, project
}

// ensure watches the config file's directory and every existing directory
// from the project down to the scripts directory (so that creating
// .agents/tools is seen). fsnotify watches are not recursive.
func (wt *watcher) ensure() {
	cf, scripts, project := wt.targets()
	want := map[string]bool{}
	if cf != "" {
		want[filepath.Dir(cf)] = true
	}
	if ep := wt.entries(); ep != "" { // registry approvals by another process (held.go)
		want[filepath.Dir(ep)] = true
	}
	if scripts != "" {
		want[scripts] = true
		if rel, err := filepath.Rel(project, scripts); err == nil && !strings.HasPrefix(rel, "..") {
			d := project
			for _, part := range strings.Split(rel, string(filepath.Separator)) {
				want[d] = true
				d = filepath.Join(d, part)
			}
		} else {
			want[filepath.Dir(scripts)] = true
		}
	}
	for d := range wt.watched {
		if !want[d] {
			_ = wt.w.Remove(d) // a directory already gone is no longer watched either
			delete(wt.watched, d)
		}
	}
	for d := range want {
		if wt.watched[d] {
			continue
		}
		if st, err := os.Stat(d); err != nil || !st.IsDir() {
			continue
		}
		if err := wt.w.Add(d); err != nil {
			wt.a.log.Warn("cannot watch directory; changes there need a restart", "dir", d, "err", err)
			continue
		}
		wt.watched[d] = true
	}
}

// entries is the registry approvals file while an entry waits for one
// ("" otherwise): an approval written there starts it (held.go).
func (wt *watcher) entries() string {
	if len(wt.a.current().held) == 0 {
		return ""
	}
	return wt.a.pins.entries.Path()
}

// classify says what an event calls for.
func (wt *watcher) classify(ev fsnotify.Event) (reload, refresh bool) {
	cf, scripts, _ := wt.targets()
	name := filepath.Clean(ev.Name)
	if cf != "" && name == filepath.Clean(cf) {
		return true, false
	}
	if ep := wt.entries(); ep != "" && name == filepath.Clean(ep) {
		return true, false
	}
	// Kubernetes mounts a ConfigMap through a "..data" symlink swapped on update.
	if cf != "" && filepath.Dir(name) == filepath.Dir(cf) && strings.HasPrefix(filepath.Base(name), "..") {
		return true, false
	}
	if scripts != "" {
		if name == scripts || strings.HasPrefix(name, scripts+string(filepath.Separator)) || strings.HasPrefix(scripts, name+string(filepath.Separator)) {
			return false, true
		}
	}
	return false, false
}

func (wt *watcher) loop(ctx context.Context, debounce time.Duration) {
	var timer *time.Timer
	var fire <-chan time.Time
	var reload, refresh bool
	for {
		select {
		case <-ctx.Done():
			if timer != nil {
				timer.Stop()
			}
			return
		case err, ok := <-wt.w.Errors:
			if !ok {
				return
			}
			wt.a.log.Warn("file watcher", "err", err)
		case ev, ok := <-wt.w.Events:
			if !ok {
				return
			}
			rl, rf := wt.classify(ev)
			if !rl && !rf {
				continue
			}
			reload, refresh = reload || rl, refresh || rf
			if timer == nil {
				timer = time.NewTimer(debounce)
			} else {
				timer.Reset(debounce)
			}
			fire = timer.C
		case <-fire:
			fire = nil
			if reload {
				_ = wt.a.Reload(ctx) // Reload logs its own failure; the last good config keeps serving
			} else if refresh {
				if wt.a.Registry().Refresh(provider.WithRescan(ctx)) { // something changed: providers' freshness must not skip it
					wt.a.log.Info("scripts changed; tool list updated")
				}
			}
			reload, refresh = false, false
			wt.ensure()
		}
	}
}
