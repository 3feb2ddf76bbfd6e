package local

import (
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/agent-tools/agent-tools/internal/provider"
)

// RescanEvery bounds how stale the listing may be where the directory
// cannot be watched (no inotify, the directory absent, scripts that are
// symbolic links to files elsewhere): at most one directory scan per
// interval on the call path.
const RescanEvery = time.Second

var (
	_ provider.Fresher = (*Provider)(nil)
	_ provider.Closer  = (*Provider)(nil)
)

// freshness tracks whether the last scan still describes the directory. A
// file watcher on the directory clears clean on any event; Tools sets it
// before scanning (so an event during the scan is not lost). A call stats
// only its own script (resolve), so edit, save, call runs the saved file
// with no delay even before the event arrives.
type freshness struct {
	clean    atomic.Bool
	watching atomic.Bool  // the directory itself is watched
	links    atomic.Bool  // a script is a symbolic link: its target is not watched
	lastScan atomic.Int64 // unix nanoseconds of the last successful scan

	mu     sync.Mutex // guards w, closed
	w      *fsnotify.Watcher
	done   chan struct{}
	closed bool

	onEvent func() // tests: called after the watcher handled an event
}

// Fresh reports that Tools would return what it returned last: nothing
// moved in the watched directory since, or (unwatched) the last scan is
// younger than RescanEvery.
func (p *Provider) Fresh() bool {
	f := &p.fresh
	if !f.clean.Load() {
		return false
	}
	if f.watching.Load() && !f.links.Load() {
		return true
	}
	return time.Since(time.Unix(0, f.lastScan.Load())) < RescanEvery
}

// markStale makes the next refresh rescan the directory.
func (p *Provider) markStale() { p.fresh.clean.Store(false) }

// beginScan is called with p.mu held before a directory scan: it makes
// sure the directory is watched (creating the watcher on first use and
// re-adding the directory once it exists), then marks the listing clean;
// events from now on mark it stale again.
func (p *Provider) beginScan() {
	f := &p.fresh
	f.mu.Lock()
	if !f.closed && p.opts.Dir != "" && !f.watching.Load() {
		if f.w == nil {
			if w, err := fsnotify.NewWatcher(); err == nil {
				f.w, f.done = w, make(chan struct{})
				go p.watch(w, f.done)
			} else {
				p.log.Debug("cannot watch the scripts directory; rescanning at most once per interval", "err", err, "interval", RescanEvery)
			}
		}
		if f.w != nil && f.w.Add(p.opts.Dir) == nil {
			f.watching.Store(true)
		}
	}
	f.mu.Unlock()
	f.clean.Store(true)
}

// endScan records a finished scan: whether it succeeded and whether any
// entry is a symbolic link.
func (p *Provider) endScan(ok, links bool) {
	p.fresh.links.Store(links)
	if !ok {
		p.markStale()
		return
	}
	p.fresh.lastScan.Store(time.Now().UnixNano())
}

// watch marks the listing stale on every event for a candidate file or the
// directory itself, until the watcher is closed.
func (p *Provider) watch(w *fsnotify.Watcher, done chan struct{}) {
	defer close(done)
	dir := filepath.Clean(p.opts.Dir)
	for {
		select {
		case ev, ok := <-w.Events:
			if !ok {
				return
			}
			name := filepath.Clean(ev.Name)
			if name == dir {
				if ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename) {
					p.fresh.watching.Store(false) // the kernel dropped the watch
				}
				p.markStale()
				continue
			}
			if !ignored(filepath.Base(name)) {
				p.markStale()
			}
			if f := p.fresh.onEvent; f != nil {
				f()
			}
		case _, ok := <-w.Errors:
			if !ok {
				return
			}
			p.markStale() // an overflow lost events: rescan
		}
	}
}

// Close stops the directory watcher. The provider keeps working afterwards,
// rescanning at most once per RescanEvery.
func (p *Provider) Close() error {
	f := &p.fresh
	f.mu.Lock()
	w, done := f.w, f.done
	f.w, f.closed = nil, true
	f.watching.Store(false)
	f.mu.Unlock()
	if w == nil {
		return nil
	}
	err := w.Close()
	<-done
	return err
}
