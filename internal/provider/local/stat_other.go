//go:build !unix

package local

import "io/fs"

type fileKey struct {
	size  int64
	mode  fs.FileMode
	mtime int64
}

func keyOf(fi fs.FileInfo) fileKey {
	return fileKey{size: fi.Size(), mode: fi.Mode(), mtime: fi.ModTime().UnixNano()}
}
