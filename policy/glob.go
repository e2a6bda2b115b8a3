package policy

import (
	"errors"
	"fmt"
	"path"
	"strings"
)

// compileGlob validates a path rule: path.Match syntax per segment, plus
// "**" as a whole segment for any number of directories. Relative globs are
// relative to the workspace root and may not climb out of it.
func compileGlob(g string) (string, error) {
	if strings.TrimSpace(g) != g {
		return "", fmt.Errorf("glob %q has surrounding spaces", g)
	}
	if strings.ContainsRune(g, 0) {
		return "", errors.New("glob contains a NUL byte")
	}
	clean := path.Clean(g)
	if strings.HasSuffix(g, "/") && clean != "/" {
		clean += "/**" // "src/" means everything under src
	}
	if clean == ".." || strings.HasPrefix(clean, "../") {
		return "", fmt.Errorf("glob %q climbs out of the workspace; use an absolute path", g)
	}
	for strings.Contains(clean, "**/**") {
		clean = strings.ReplaceAll(clean, "**/**", "**") // same meaning, no blow-up
	}
	for _, seg := range strings.Split(strings.TrimPrefix(clean, "/"), "/") {
		if seg == "**" {
			continue
		}
		if strings.Contains(seg, "**") {
			return "", fmt.Errorf("glob %q: ** must be a whole path segment", g)
		}
		if _, err := path.Match(seg, ""); err != nil {
			return "", fmt.Errorf("glob %q: bad pattern %q: %v", g, seg, err)
		}
	}
	return clean, nil
}

// globMatch matches a clean slash path against a compiled glob.
func globMatch(pattern, name string) bool {
	abs := strings.HasPrefix(pattern, "/")
	if abs != strings.HasPrefix(name, "/") {
		return false
	}
	ps := strings.Split(strings.TrimPrefix(pattern, "/"), "/")
	ns := strings.Split(strings.TrimPrefix(name, "/"), "/")
	if name == "." {
		ns = []string{"."}
	}
	return matchSegments(ps, ns)
}

func matchSegments(ps, ns []string) bool {
	for len(ps) > 0 {
		if ps[0] == "**" {
			rest := ps[1:]
			for i := 0; i <= len(ns); i++ {
				if matchSegments(rest, ns[i:]) {
					return true
				}
			}
			return false
		}
		if len(ns) == 0 {
			return false
		}
		ok, err := path.Match(ps[0], ns[0])
		if err != nil || !ok {
			return false
		}
		ps, ns = ps[1:], ns[1:]
	}
	return len(ns) == 0
}
