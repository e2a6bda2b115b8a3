package agent

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/askops/askops/internal/realpath"
	"github.com/askops/askops/policy"
)

// openWorkspace checks that dir exists and is a directory and returns its
// absolute path with symlinks resolved, so later containment checks compare
// real paths with real paths.
func openWorkspace(dir string) (string, error) {
	if strings.TrimSpace(dir) == "" {
		return "", errors.New("agent: workspace: no directory given")
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("agent: workspace %q: %w", dir, err)
	}
	fi, err := os.Stat(abs)
	if errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("agent: workspace %q does not exist", dir)
	}
	if err != nil {
		return "", fmt.Errorf("agent: workspace %q: %w", dir, err)
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("agent: workspace %q is not a directory", dir)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", fmt.Errorf("agent: workspace %q: %w", dir, err)
	}
	return real, nil
}

// PathError is a path refused because it leaves the workspace. Its message is
// what the model is told.
type PathError struct {
	Path   string
	Reason string
}

func (e *PathError) Error() string { return fmt.Sprintf("path %q refused: %s", e.Path, e.Reason) }

// confine resolves p (relative to cwd, or absolute) to a real path inside the
// workspace root, following every symlink on the part of the path that
// exists. The returned path is what the tool must operate on: it is the
// checked one, so `link/..` tricks cannot differ between check and use.
func confine(root, cwd, p string) (string, error) {
	if p == "" {
		return "", &PathError{Path: p, Reason: "empty path"}
	}
	if strings.ContainsRune(p, 0) {
		return "", &PathError{Path: p, Reason: "path contains a NUL byte"}
	}
	abs := p
	if !filepath.IsAbs(abs) {
		abs = filepath.Join(cwd, p)
	}
	abs = filepath.Clean(abs)
	if _, ok := policy.Within(root, abs); !ok {
		if filepath.IsAbs(p) {
			return "", &PathError{Path: p, Reason: fmt.Sprintf("absolute path outside the workspace %s", root)}
		}
		return "", &PathError{Path: p, Reason: fmt.Sprintf("it leaves the workspace %s (via ..)", root)}
	}
	real, err := resolveExisting(abs)
	if err != nil {
		return "", &PathError{Path: p, Reason: err.Error()}
	}
	if _, ok := policy.Within(root, real); !ok {
		return "", &PathError{Path: p, Reason: fmt.Sprintf("a symlink leads outside the workspace %s (to %s)", root, real)}
	}
	return real, nil
}

// resolveExisting is realpath.Existing: the one resolution the agent's
// tools and the command hook share.
func resolveExisting(abs string) (string, error) { return realpath.Existing(abs) }

// relToRoot is p relative to the workspace, for messages.
func relToRoot(root, p string) string {
	rel, err := filepath.Rel(root, p)
	if err != nil {
		return p
	}
	return rel
}
