package policy

import (
	"path"
	"strings"
)

// Within is the one workspace-containment check askops has: whether p lies
// in root (or is root), and p relative to root ("." for root itself).
// Both must be absolute; p is cleaned first, so "/ws/a/../b" is "/ws/b"
// and "/ws/../etc" is outside. It is lexical: resolving symlinks first is
// the caller's business where a file system is at hand (the file tools
// resolve them and check again; grants compare paths as the policy judged
// them). "/ws2" is not inside "/ws".
func Within(root, p string) (rel string, ok bool) {
	if !path.IsAbs(p) {
		return "", false
	}
	p = path.Clean(p)
	if !within(p, root) {
		return "", false
	}
	root = path.Clean(root)
	switch {
	case p == root:
		return ".", true
	case root == "/":
		return strings.TrimPrefix(p, "/"), true
	default:
		return strings.TrimPrefix(p, root+"/"), true
	}
}
