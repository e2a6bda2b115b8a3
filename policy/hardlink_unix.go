//go:build unix

package policy

import (
	"os"
	"syscall"
)

// hardLinked reports whether p is an existing file that has more than one
// name (a hard link): a write to it also changes the file under its other
// names.
func hardLinked(p string) bool {
	fi, err := os.Lstat(p)
	if err != nil || fi.IsDir() {
		return false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && st.Nlink > 1
}
