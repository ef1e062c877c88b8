//go:build !unix

package blob

import "os"

// inode returns 0 where inode numbers are not available; sidecars are then
// matched by size and modification time alone.
func inode(os.FileInfo) uint64 { return 0 }
