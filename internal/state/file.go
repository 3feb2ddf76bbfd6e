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
// the same directory, renamed over it): a reader sees the old content or
// the new, never a mix, and a crash leaves the old file.
func WriteFile(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer os.Remove(tmp) // a no-op once renamed
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
