// Package globbase splits a glob pattern (a Glob tool call's) into the
// fixed directory it lists under and its wildcard rest, and tells whether
// that rest can leave the directory: the gateway judges a Glob as a
// listing of that directory, and the hook resolves it, with the same
// reading of the pattern.
package globbase

import "strings"

// Split splits a glob pattern into its directory part before its
// first wildcard and the rest: "../../etc/*" is "../../etc" and "*",
// "src/**/*.go" is "src" and "**/*.go", "*.go" is "." and "*.go".
func Split(pat string) (base, rest string) {
	parts := strings.Split(pat, "/")
	n := 0
	for _, c := range parts[:len(parts)-1] {
		if strings.ContainsAny(c, "*?[{\\") {
			break
		}
		n++
	}
	base, rest = strings.Join(parts[:n], "/"), strings.Join(parts[n:], "/")
	if base == "" && strings.HasPrefix(pat, "/") {
		return "/", rest
	}
	if base == "" {
		return ".", rest
	}
	return base, rest
}

// StaysUnder reports whether the wildcard part of a glob (Split's
// rest) matches only under the directory it starts in: no ".." anywhere
// (*/../.., {..,x}), no backslash (a separator on Windows), no
// alternative spelling a "/" ({/etc,src}), and no leading ~.
func StaysUnder(rest string) bool {
	if strings.Contains(rest, "..") || strings.ContainsRune(rest, '\\') || strings.HasPrefix(rest, "~") {
		return false
	}
	depth := 0
	for _, r := range rest {
		switch r {
		case '{':
			depth++
		case '}':
			if depth > 0 {
				depth--
			}
		case '/':
			if depth > 0 {
				return false
			}
		}
	}
	return true
}
