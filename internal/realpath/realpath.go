// Package realpath finds where a path really is on this machine: symlinks
// followed on the part that exists, the rest (not there yet, so holding no
// links) kept as written. askops' own agent confines its tools with it, and
// the command hook resolves an agent's paths with it before the gateway
// judges them, so both judge a file where it lies, not where its name
// points.
package realpath

import (
	"fmt"
	"os"
	"path/filepath"
)

// Existing evaluates symlinks on the longest existing prefix of abs (an
// absolute, cleaned path) and appends the rest unchanged. A prefix that
// exists but does not resolve (a dangling link, a loop, no permission) is
// an error: where it points cannot be proved.
func Existing(abs string) (string, error) {
	rest := ""
	cur := abs
	for {
		real, err := filepath.EvalSymlinks(cur)
		if err == nil {
			return filepath.Join(real, rest), nil
		}
		if _, lerr := os.Lstat(cur); lerr == nil {
			return "", fmt.Errorf("cannot resolve %s: %v", cur, err)
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return "", fmt.Errorf("cannot resolve %s", abs)
		}
		rest = filepath.Join(filepath.Base(cur), rest)
		cur = parent
	}
}
