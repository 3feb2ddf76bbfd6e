//go:build unix

package local

import (
	"io/fs"
	"syscall"
)

// fileKey identifies a file version without reading it: a change of any field
// means the file must be re-parsed. The inode catches editors that save by
// rename, the size catches most in-place edits, and entries younger than
// racyWindow are re-read anyway, so mtime granularity does not matter.
type fileKey struct {
	dev, ino uint64
	size     int64
	mode     fs.FileMode
	mtime    int64
}

func keyOf(fi fs.FileInfo) fileKey {
	k := fileKey{size: fi.Size(), mode: fi.Mode(), mtime: fi.ModTime().UnixNano()}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		k.dev, k.ino = uint64(st.Dev), uint64(st.Ino)
	}
	return k
}
