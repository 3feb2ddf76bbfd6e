package pins

import (
	"os"
	"syscall"
)

// fileIdentity is fi's device, inode and change time (ns). The change time
// is set by the kernel on every write, rename and chmod, and a process
// cannot set it back: a file put back with its old size and modification
// time still has another.
func fileIdentity(fi os.FileInfo) (dev, ino uint64, ctime int64) {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Dev), st.Ino, st.Ctim.Nano() // Dev is uint32 on some architectures
	}
	return 0, 0, 0
}
