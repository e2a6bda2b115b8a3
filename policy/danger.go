package policy

import (
	"path"
	"strings"
)

// dangerous records built-in dangers in one simple command (already
// unwrapped by the caller for wrappers). These always ask: no allow rule,
// grant or mode can let them run unseen.
func (z *analyzer) dangerous(ws []word) {
	name := cmdName(ws[0])
	args := ws[1:]
	switch {
	case name == "rm" || name == "rmdir" || name == "unlink" || name == "shred" || name == "srm":
		if name == "rm" && !hasFlag(args, 'r', 'R', "--recursive") && !hasLong(args, "--no-preserve-root") {
			return
		}
		if hasLong(args, "--no-preserve-root") {
			z.a.danger("rm --no-preserve-root")
			return
		}
		for _, t := range operands(args) {
			if why := z.dangerousTarget(t); why != "" {
				z.a.danger("recursive delete of " + why)
			}
		}
	case name == "chmod" || name == "chown" || name == "chgrp" || name == "setfacl" || name == "chattr":
		if !hasFlag(args, 'R', 'R', "--recursive") {
			return
		}
		ops := operands(args)
		if len(ops) > 0 && !hasLongPrefix(args, "--reference") {
			ops = ops[1:] // the mode or owner
		}
		for _, t := range ops {
			if why := z.dangerousTarget(t); why != "" {
				z.a.danger("recursive " + name + " of " + why)
			}
		}
	case name == "find":
		deletes := false
		for _, a := range args {
			if a.loose == "-delete" {
				deletes = true
			}
		}
		for _, in := range findExec(ws) {
			if len(in.words) > 0 && cmdName(in.words[0]) == "rm" {
				deletes = true
			}
		}
		if !deletes {
			return
		}
		for _, a := range args {
			if strings.HasPrefix(a.loose, "-") || a.loose == "(" || a.loose == "!" {
				break
			}
			if why := z.dangerousTarget(a); why != "" {
				z.a.danger("find deleting under " + why)
			}
		}
	case name == "mkfs" || strings.HasPrefix(name, "mkfs.") || name == "mke2fs" || name == "mkswap" ||
		name == "wipefs" || name == "mkntfs" || name == "mkdosfs" || name == "blkdiscard" ||
		name == "fdisk" || name == "sfdisk" || name == "sgdisk" || name == "cfdisk" || name == "parted":
		z.a.danger(name + " (formats or repartitions a disk)")
	case name == "dd":
		for _, a := range args {
			if v, ok := strings.CutPrefix(a.loose, "of="); ok && isDevice(v) {
				z.a.danger("dd writing to the device " + printable(v))
			}
		}
	case name == "tee" || name == "cp" || name == "mv" || name == "install" || name == "cat" || name == "pv":
		if name == "cat" || name == "pv" {
			return
		}
		for _, a := range args {
			if isDevice(a.loose) {
				z.a.danger(name + " writing to the device " + printable(a.loose))
			}
		}
	case name == "shutdown" || name == "reboot" || name == "halt" || name == "poweroff" || name == "kexec":
		z.a.danger(name + " (stops the machine)")
	case name == "init" || name == "telinit":
		for _, a := range args {
			if a.loose == "0" || a.loose == "6" || !a.known() {
				z.a.danger(name + " " + printable(a.loose) + " (stops the machine)")
			}
		}
	case name == "systemctl":
		for _, a := range args {
			switch a.loose {
			case "poweroff", "reboot", "halt", "kexec", "emergency", "rescue", "suspend", "hibernate":
				z.a.danger("systemctl " + a.loose + " (stops the machine)")
			}
		}
	case name == "kill" || name == "pkill" || name == "killall":
		for _, a := range args {
			if a.loose == "-1" && name == "kill" {
				z.a.danger("kill -1 (every process)")
			}
			if a.loose == "1" && name == "kill" {
				z.a.danger("kill 1 (init)")
			}
		}
	case name == "git":
		z.gitPush(args)
	case name == ":" || name == "":
		// A fork bomb is found on the function definition.
	}
}

func printable(s string) string { return strings.ReplaceAll(s, anyText, "…") }

// hasFlag reports a short option letter (alone or in a cluster like -rf) or
// the given long option, before any "--".
func hasFlag(args []word, a, b byte, long string) bool {
	for _, w := range args {
		l := w.loose
		if l == "--" {
			return false
		}
		if l == long {
			return true
		}
		if len(l) > 1 && l[0] == '-' && l[1] != '-' {
			if strings.IndexByte(l, a) > 0 || strings.IndexByte(l, b) > 0 {
				return true
			}
		}
		if !w.known() && w.splat && strings.HasPrefix(l, anyText) {
			return true // $FLAGS could be -r
		}
	}
	return false
}

func hasLong(args []word, long string) bool {
	for _, w := range args {
		if w.loose == long {
			return true
		}
	}
	return false
}

func hasLongPrefix(args []word, long string) bool {
	for _, w := range args {
		if strings.HasPrefix(w.loose, long) {
			return true
		}
	}
	return false
}

// operands are the non-option words (everything after "--").
func operands(args []word) []word {
	var out []word
	for i, w := range args {
		if w.loose == "--" {
			return append(out, args[i+1:]...)
		}
		if strings.HasPrefix(w.loose, "-") && len(w.loose) > 1 {
			continue
		}
		out = append(out, w)
	}
	return out
}

// dangerousTarget says why deleting (or chmod-ing) t recursively would be a
// disaster: /, a top-level directory, a home directory, the workspace root or
// one of its ancestors — or a path that could be one of those once the
// shell fills in its unknown parts ("$X/" with X empty is "/").
func (z *analyzer) dangerousTarget(t word) string {
	l := t.loose
	if l == "~" || strings.HasPrefix(l, "~/") || (strings.HasPrefix(l, "~") && !strings.Contains(l, "/")) {
		rest := strings.TrimPrefix(l, "~")
		if i := strings.IndexByte(rest, '/'); i >= 0 {
			rest = rest[i:]
		} else {
			rest = ""
		}
		if shallow(strings.ReplaceAll(rest, anyText, "")) {
			return "the home directory (" + printable(l) + ")"
		}
		return ""
	}
	candidates := []string{l}
	if !t.known() {
		// Unknown parts may be empty, or may be the glob's parent itself.
		candidates = []string{strings.ReplaceAll(l, anyText, "")}
		if i := strings.LastIndexByte(l, '/'); i >= 0 && strings.Contains(l[i:], anyText) {
			candidates = append(candidates, strings.ReplaceAll(l[:i+1], anyText, ""))
		}
		if strings.HasPrefix(l, anyText) {
			candidates = append(candidates, "/"+strings.TrimLeft(strings.ReplaceAll(l, anyText, ""), "/"))
		}
	}
	for _, c := range candidates {
		if c == "" {
			if strings.HasPrefix(l, anyText) {
				return printable(l) + " (could be /)"
			}
			c = "."
		}
		p, _ := resolveIn(c, z.cwd, z.workspace)
		if p == "" {
			if c == "." || c == ".." || strings.HasPrefix(c, "../") {
				return printable(l) + " (relative, with no known working directory)"
			}
			continue
		}
		switch {
		case p == "/":
			return printable(l) + " (the root directory)"
		case strings.Count(p, "/") == 1:
			return printable(l) + " (a top-level directory)"
		case z.workspace != "" && within(path.Clean(z.workspace), p):
			return printable(l) + " (the workspace root or above it)"
		case strings.HasPrefix(p, "/home/") && strings.Count(p, "/") == 2,
			strings.HasPrefix(p, "/Users/") && strings.Count(p, "/") == 2:
			return printable(l) + " (a home directory)"
		}
	}
	return ""
}

// shallow reports a path under ~ that is ~ itself (or ~/*, ~/.).
func shallow(rest string) bool {
	rest = strings.Trim(rest, "/")
	return rest == "" || rest == "." || rest == ".*"
}

// isDevice reports a /dev path that is a real device (a disk, memory), not
// one of the harmless pseudo-devices.
func isDevice(p string) bool {
	p = strings.ReplaceAll(p, anyText, "x")
	if !strings.HasPrefix(p, "/dev/") {
		return false
	}
	switch p {
	case "/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/stdin", "/dev/stdout",
		"/dev/stderr", "/dev/tty":
		return false
	}
	for _, ok := range []string{"/dev/fd/", "/dev/pts/", "/dev/shm/"} {
		if strings.HasPrefix(p, ok) {
			return false
		}
	}
	return true
}

// gitPush flags force pushes (and deletions) of a protected branch.
func (z *analyzer) gitPush(args []word) {
	i := 0
	for ; i < len(args); i++ {
		l := args[i].loose
		if !strings.HasPrefix(l, "-") {
			break
		}
		switch l {
		case "-C", "-c", "--git-dir", "--work-tree", "--namespace", "--exec-path", "--config-env":
			i++
		}
	}
	if i >= len(args) || args[i].loose != "push" {
		return
	}
	force, mirror, all, del, unknown := false, false, false, false, false
	var positional []word
	for j := i + 1; j < len(args); j++ {
		w := args[j]
		l := w.loose
		switch {
		case !w.known():
			unknown = true
			positional = append(positional, w)
		case l == "--force" || strings.HasPrefix(l, "--force-with-lease") || l == "--force-if-includes":
			force = true
		case l == "--mirror":
			mirror = true
		case l == "--all" || l == "--branches":
			all = true
		case l == "--delete":
			del = true
		case l == "--repo" || l == "--receive-pack" || l == "--exec" || l == "-o" || l == "--push-option":
			j++
		case strings.HasPrefix(l, "--"):
		case strings.HasPrefix(l, "-") && len(l) > 1:
			if strings.ContainsRune(l, 'f') {
				force = true
			}
			if strings.ContainsRune(l, 'd') {
				del = true
			}
		default:
			positional = append(positional, w)
		}
	}
	if mirror {
		z.a.danger("git push --mirror (overwrites every remote branch)")
		return
	}
	var refspecs []word
	if len(positional) > 1 {
		refspecs = positional[1:]
	}
	if unknown && (force || del) {
		z.a.danger("git push --force with words not known until run time")
		return
	}
	if (force || del) && (all || len(refspecs) == 0) {
		z.a.danger("git push --force of the current or every branch (may be protected: " + strings.Join(z.protected, ", ") + ")")
		return
	}
	for _, r := range refspecs {
		l := r.loose
		plus := strings.HasPrefix(l, "+")
		l = strings.TrimPrefix(l, "+")
		src, dst, hasColon := strings.Cut(l, ":")
		if !hasColon {
			dst = src
		}
		deleting := del || (hasColon && src == "")
		if !(force || plus || deleting) {
			continue
		}
		dst = strings.TrimPrefix(dst, "refs/heads/")
		if dst == "HEAD" || dst == "@" {
			z.a.danger("git push --force of HEAD (may be a protected branch)")
			continue
		}
		for _, b := range z.protected {
			if globMatchText(dst, b) {
				verb := "force push to"
				if deleting {
					verb = "deletion of"
				}
				z.a.danger("git " + verb + " the protected branch " + b)
			}
		}
	}
}

// globMatchText matches s, where anyText stands for any text, against t.
func globMatchText(s, t string) bool {
	if !strings.Contains(s, anyText) {
		return s == t
	}
	parts := strings.Split(s, anyText)
	if !strings.HasPrefix(t, parts[0]) {
		return false
	}
	t = t[len(parts[0]):]
	last := parts[len(parts)-1]
	for _, p := range parts[1 : len(parts)-1] {
		k := strings.Index(t, p)
		if k < 0 {
			return false
		}
		t = t[k+len(p):]
	}
	return strings.HasSuffix(t, last)
}
