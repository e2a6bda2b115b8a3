package policy

import (
	"os"
	"path"
	"path/filepath"
	"strings"
)

// Paths as the kernel walks them, not as text reads them.
//
// Cleaning a path as text (path.Clean) takes "a/link/.." back to "a", but
// the kernel follows the link first: src/glink/../secrets/token, with
// src/glink -> ../.git, opens secrets/token at the workspace's top. And a
// few links in /proc mean "the process that opens me": /proc/self/cwd is
// the command's own working directory, /proc/self/root its root, /dev/fd
// its descriptors. Read as text, /proc/self/cwd/secrets/token named
// nothing a read_file rule on secrets/** matches, and cat printed it (the
// execution differential found seven such forms).

// kernelClean cleans the absolute path p as the kernel walks it for a
// command working in cwd ("" when unknown: /proc/self/cwd is then left as
// it is, and processView reports it): a ".." after a symbolic link leaves
// the directory the link leads to, and /proc's links to the process
// itself lead where they lead for the command.
func kernelClean(p, cwd string) string {
	return kernelWalk(p, cwd, 0)
}

func kernelWalk(p, cwd string, depth int) string {
	if !strings.Contains(p, "..") && !strings.HasPrefix(p, "/proc/") && !strings.HasPrefix(p, "/dev/") {
		return path.Clean(p) // the common case: nothing the text hides
	}
	cur := "/"
	for _, c := range strings.Split(p, "/") {
		switch c {
		case "", ".":
			continue
		case "..":
			// Where a link leads, on this machine, before leaving it;
			// /proc's links are the command's, not this process's.
			for hops := 0; hops < maxLinkHops && depth < maxDepth && !within(cur, "/proc"); hops++ {
				fi, err := os.Lstat(cur)
				if err != nil || fi.Mode()&os.ModeSymlink == 0 {
					break
				}
				target, err := os.Readlink(cur)
				if err != nil {
					break
				}
				if !path.IsAbs(target) {
					target = path.Dir(cur) + "/" + target // walked, not cleaned as text
				}
				cur = kernelWalk(target, cwd, depth+1)
			}
			cur = path.Dir(cur)
		default:
			cur = path.Join(cur, c)
		}
		cur = processLink(cur, cwd)
	}
	return cur
}

// kernelCleanIn is kernelClean for a path the rules judge against
// workspace: where the walk followed a link (a workspace given through a
// link, ~/proj -> /data/proj, and "cat ./../proj/secrets/token") and
// landed inside the workspace's real directory, the path is given back
// under the workspace as written, where the rules name it.
func kernelCleanIn(p, cwd, workspace string) string {
	walked := kernelClean(p, cwd)
	if workspace == "" || within(walked, workspace) || walked == path.Clean(p) {
		return walked
	}
	if real, err := filepath.EvalSymlinks(workspace); err == nil && real != workspace && within(walked, real) {
		return path.Join(workspace, strings.TrimPrefix(walked, real))
	}
	return walked
}

// maxLinkHops is the kernel's own bound on links followed in one walk.
const maxLinkHops = 40

// processLink is where p leads when it is one of /proc's links to the
// process that opens it; p otherwise.
func processLink(p, cwd string) string {
	switch {
	case p == "/dev/fd":
		return "/proc/self/fd"
	case p == "/proc/thread-self":
		return "/proc/self"
	case p == "/proc/self/cwd" && cwd != "" && path.IsAbs(cwd):
		return path.Clean(cwd)
	case p == "/proc/self/root":
		return "/"
	}
	if n, ok := strings.CutPrefix(p, "/proc/self/task/"); ok && isDigits(n) {
		return "/proc/self" // a thread of the process: the same directories
	}
	return p
}

// processView reports whether the clean path p reaches files through a
// process's entry in /proc that the policy cannot place: another
// process's (or, with the working directory unknown, this one's) cwd,
// root, descriptors or mapped files. Reading /proc/cpuinfo or
// /proc/self/status is no such path.
func processView(p string) bool {
	rest, ok := strings.CutPrefix(p, "/proc/")
	if !ok {
		return false
	}
	parts := strings.Split(rest, "/")
	if len(parts) < 3 || !isDigits(parts[0]) && parts[0] != "self" {
		return false
	}
	switch parts[1] {
	case "cwd", "root", "fd", "map_files", "task":
		return true
	}
	return false
}
