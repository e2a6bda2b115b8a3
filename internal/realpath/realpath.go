// Package realpath finds where a path really is on this machine: symlinks
// followed on the part that exists, each existing part named as its
// directory lists it (on a file system that folds case, src/GLINK is the
// link src/glink and .GIT is .git), the rest (not there yet, so holding no
// links) kept as written. askops' own agent confines its tools with it,
// the command hook resolves an agent's paths with it before the gateway
// judges them, and the policy follows a redirection's links with it, so
// all of them judge a file where it lies and by its real name, not where
// its name points or how it was spelled.
package realpath

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"unicode"
)

// maxLinks bounds the links one resolution follows (Linux's own limit is
// 40; a loop reaches any bound).
const maxLinks = 255

// Existing evaluates symlinks on the longest existing prefix of abs (an
// absolute, cleaned path) and appends the rest unchanged. A prefix that
// exists but does not resolve (a dangling link, a loop, no permission) is
// an error: where it points cannot be proved.
//
// Where a directory folds case (macOS and Windows by default, an ext4
// casefold directory, vfat), the name as typed and the name on disk are
// one file but not one text: rules and grants match text, so every
// existing part is named as the directory lists it. Whether a directory
// folds is asked of it, per name (see canonicalName).
func Existing(abs string) (string, error) {
	return existing(osFS{}, abs)
}

// fileSystem is what a resolution reads of the file system; the tests
// give it one that folds case.
type fileSystem interface {
	Lstat(name string) (fs.FileInfo, error)
	Readlink(name string) (string, error)
	ReadDirNames(dir string) ([]string, error)
	SameFile(a, b fs.FileInfo) bool
}

type osFS struct{}

func (osFS) Lstat(name string) (fs.FileInfo, error) { return os.Lstat(name) }
func (osFS) Readlink(name string) (string, error)   { return os.Readlink(name) }
func (osFS) SameFile(a, b fs.FileInfo) bool         { return os.SameFile(a, b) }
func (osFS) ReadDirNames(dir string) ([]string, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.Readdirnames(-1)
}

// existing walks abs a part at a time from its root: each existing part is
// named as its directory lists it and, when it is a link, replaced by the
// link's target (whose parts are walked in turn); the first part that does
// not exist ends the walk, and the rest is appended as written. A part of
// a link's target that does not exist is a dangling link: an error.
func existing(f fileSystem, abs string) (string, error) {
	if !filepath.IsAbs(abs) {
		return "", fmt.Errorf("cannot resolve %s: not an absolute path", abs)
	}
	root := filepath.VolumeName(abs) + string(filepath.Separator)
	cur := root
	todo := parts(abs[len(root):])
	fromLink := 0 // how many of todo's first parts came from a link's target
	links := 0
	for len(todo) > 0 {
		name := todo[0]
		todo = todo[1:]
		inLink := fromLink > 0
		if inLink {
			fromLink--
		}
		switch name {
		case ".":
			continue
		case "..":
			cur = filepath.Dir(cur)
			continue
		}
		next := filepath.Join(cur, name)
		fi, err := f.Lstat(next)
		if err != nil {
			if absent(err) && !inLink {
				return filepath.Join(append([]string{next}, todo...)...), nil
			}
			return "", fmt.Errorf("cannot resolve %s: %v", next, err)
		}
		if name, err = canonicalName(f, cur, name, fi); err != nil {
			return "", fmt.Errorf("cannot resolve %s: %v", next, err)
		}
		next = filepath.Join(cur, name)
		if fi.Mode()&fs.ModeSymlink == 0 {
			cur = next
			continue
		}
		if links++; links > maxLinks {
			return "", fmt.Errorf("cannot resolve %s: too many links (a loop)", abs)
		}
		target, err := f.Readlink(next)
		if err != nil {
			return "", fmt.Errorf("cannot resolve %s: %v", next, err)
		}
		if filepath.IsAbs(target) {
			root = filepath.VolumeName(target) + string(filepath.Separator)
			cur, target = root, target[len(root):]
		}
		tparts := parts(target)
		todo = append(tparts, todo...)
		fromLink += len(tparts)
	}
	return cur, nil
}

// parts are the names of p between separators.
func parts(p string) []string {
	var out []string
	for _, s := range strings.Split(filepath.ToSlash(p), "/") {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

// absent reports whether err says a path is not there: it does not
// exist, or a part of it is a file, not a directory.
func absent(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)
}

// canonicalName is name (an entry of dir that exists, fi) as dir lists it.
// A directory that tells names apart by case answers "no such file" for
// name with its case swapped (or names another file); one that folds case
// answers with the same file, and then the listing says how the name is
// really spelled. A name with no letter to swap is spelled as it is.
func canonicalName(f fileSystem, dir, name string, fi fs.FileInfo) (string, error) {
	swapped := swapCase(name)
	if swapped == name {
		return name, nil
	}
	other, err := f.Lstat(filepath.Join(dir, swapped))
	if err != nil || !f.SameFile(fi, other) {
		return name, nil
	}
	names, err := f.ReadDirNames(dir)
	if err != nil {
		return "", err
	}
	var folded []string
	for _, n := range names {
		if n == name {
			return name, nil
		}
		if strings.EqualFold(n, name) {
			folded = append(folded, n)
		}
	}
	// Unicode folds more than strings.EqualFold does (macOS also folds
	// NFC to NFD): then any entry that is the same file is its name.
	if len(folded) == 0 {
		folded = names
	}
	for _, n := range folded {
		if e, err := f.Lstat(filepath.Join(dir, n)); err == nil && f.SameFile(fi, e) {
			return n, nil
		}
	}
	return "", fmt.Errorf("%s folds case, and no entry of it is %s", dir, name)
}

// swapCase turns every upper-case letter of s lower and every lower-case
// one upper.
func swapCase(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case unicode.IsUpper(r):
			b.WriteRune(unicode.ToLower(r))
		case unicode.IsLower(r):
			b.WriteRune(unicode.ToUpper(r))
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}
