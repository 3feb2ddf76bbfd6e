package state

import (
	"os"
	"path/filepath"
	"time"
)

// The stores kept in one JSON file when replicas do not share state (the
// decisions, the pins) read and write it the same way: re-read only when its
// stamp changed, replaced atomically.

// Stamp identifies a version of a file: another process's write changes it.
type Stamp struct {
	mod  time.Time
	size int64
}

// StampOf is the stamp of the file fi describes.
func StampOf(fi os.FileInfo) Stamp { return Stamp{fi.ModTime(), fi.Size()} }

// WriteFile replaces path with data atomically (a synced temporary file in
// the same directory, renamed over it, then the directory synced): a reader
// sees the old content or the new, never a mix, and a crash leaves the old
// file or the new one, never an empty one. The file is private (0600); its
// directory must exist (a wrong path is an error, not a new directory).
// It is the one atomic write of
// the module: pins, decisions, the upstream token store, the registry's
// config edits, the OpenAPI and MCP list caches.
func WriteFile(path string, data []byte) error { return WriteFilePerm(path, data, 0o600) }

// WriteFilePerm is WriteFile with the file's permissions (a config file a
// person edits keeps its mode).
func WriteFilePerm(path string, data []byte, perm os.FileMode) error {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer os.Remove(tmp) // a no-op once renamed
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if perm != 0o600 { // CreateTemp made it 0600
		if err := f.Chmod(perm); err != nil {
			f.Close()
			return err
		}
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	syncDir(dir)
	return nil
}

// syncDir makes a rename in dir durable. Best effort: a file system or an
// OS that cannot sync a directory still has the rename, which is atomic.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		d.Close()
	}
}
