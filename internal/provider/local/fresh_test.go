package local

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"
)

const script = "#!/bin/sh\n# @description Say hi.\n# @readonly\necho hi\n"

// events makes the watcher signal every event it handled on the returned
// channel (buffered: the watcher never blocks on a slow test).
func events(f *fixture) <-chan struct{} {
	ch := make(chan struct{}, 64)
	f.p.fresh.onEvent = func() {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
	return ch
}

// waitEvent waits for the watcher to handle one more event.
func waitEvent(t *testing.T, ch <-chan struct{}) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(5 * time.Second):
		t.Fatal("no watcher event")
	}
}

// waitStale waits for events until the provider is no longer fresh.
func waitStale(t *testing.T, f *fixture, ch <-chan struct{}) {
	t.Helper()
	timeout := time.After(5 * time.Second)
	for f.p.Fresh() {
		select {
		case <-ch:
		case <-timeout:
			t.Fatal("no watcher event made the listing stale")
		}
	}
}

func TestFreshWatched(t *testing.T) {
	tests := []struct {
		name   string
		change func(t *testing.T, f *fixture)
	}{
		{"new script", func(t *testing.T, f *fixture) { f.write(t, "later", script, 0o755) }},
		{"edited in place", func(t *testing.T, f *fixture) { f.write(t, "hello", script+"# more\n", 0o755) }},
		{"chmod", func(t *testing.T, f *fixture) {
			if err := os.Chmod(filepath.Join(f.dir, "hello"), 0o644); err != nil {
				t.Fatal(err)
			}
		}},
		{"removed", func(t *testing.T, f *fixture) {
			if err := os.Remove(filepath.Join(f.dir, "hello")); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, nil)
			ch := events(f)
			f.write(t, "hello", script, 0o755)
			if f.p.Fresh() {
				t.Fatal("fresh before the first listing")
			}
			f.tools(t)
			if !f.p.fresh.watching.Load() {
				t.Skip("the scripts directory cannot be watched here")
			}
			if !f.p.Fresh() {
				t.Fatal("not fresh right after listing a watched directory")
			}
			tt.change(t, f)
			waitStale(t, f, ch)
			// One change may be several events (create, write, chmod): re-list
			// after each until none is left; a bounded number of rounds.
			for i := 0; ; i++ {
				f.tools(t)
				if f.p.Fresh() {
					break
				}
				if i == 10 {
					t.Fatal("not fresh again after re-listing")
				}
				waitEvent(t, ch)
			}
		})
	}
}

func TestFreshIgnoresBackups(t *testing.T) {
	f := newFixture(t, nil)
	ch := events(f)
	f.tools(t)
	if !f.p.fresh.watching.Load() {
		t.Skip("the scripts directory cannot be watched here")
	}
	f.write(t, ".hello.swp", "x", 0o644)
	<-ch
	if !f.p.Fresh() {
		t.Error("an editor swap file made the listing stale")
	}
}

// Where the directory is not watched (closed watcher, directory absent,
// symbolic links), the listing is fresh for RescanEvery after a scan.
func TestFreshUnwatched(t *testing.T) {
	tests := []struct {
		name  string
		setup func(t *testing.T, f *fixture)
	}{
		{"watcher closed", func(t *testing.T, f *fixture) { f.p.Close() }},
		{"directory absent", func(t *testing.T, f *fixture) {
			if err := os.RemoveAll(f.dir); err != nil {
				t.Fatal(err)
			}
			f.p.Close() // a watch on the parent would not matter: only the directory counts
		}},
		{"symbolic link", func(t *testing.T, f *fixture) {
			target := filepath.Join(f.project, "shared")
			if err := os.WriteFile(target, []byte(script), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(target, filepath.Join(f.dir, "linked")); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, nil)
			tt.setup(t, f)
			f.tools(t)
			if !f.p.Fresh() {
				t.Fatal("not fresh right after a scan")
			}
			f.p.fresh.lastScan.Store(time.Now().Add(-RescanEvery - time.Millisecond).UnixNano())
			if f.p.Fresh() {
				t.Error("still fresh after RescanEvery without a watch")
			}
		})
	}
}

// A call stats its own script: an edit is run at once, and the changed
// header makes the listing stale so the catalog re-reads it.
func TestCallSeesEditBeforeWatcher(t *testing.T) {
	f := newFixture(t, nil)
	f.write(t, "hello", script, 0o755)
	tool := f.tools(t)["hello"]
	f.p.Close() // no watcher: only the call's own stat can notice
	f.write(t, "hello", "#!/bin/sh\n# @description Say bye.\necho bye\n", 0o755)
	f.p.fresh.lastScan.Store(time.Now().UnixNano())
	if !f.p.Fresh() {
		t.Fatal("not fresh within the rescan interval")
	}
	res, err := f.p.Call(context.Background(), tool, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != "bye\n" {
		t.Errorf("ran %q, want the saved script's output", res.Text)
	}
	if f.p.Fresh() {
		t.Error("a changed script did not make the listing stale")
	}
	if got := f.tools(t)["hello"].Description; got != "Say bye." {
		t.Errorf("description after re-listing = %q", got)
	}
}
