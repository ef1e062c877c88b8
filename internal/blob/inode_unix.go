//go:build unix

package blob

import (
	"os"
	"syscall"
)

// inode returns the file's inode number. Each Put writes a new file, so the
// number tells versions apart even when size and time match.
func inode(st os.FileInfo) uint64 {
	if s, ok := st.Sys().(*syscall.Stat_t); ok {
		return uint64(s.Ino)
	}
	return 0
}
