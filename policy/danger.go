package policy

import (
	"path"
	"strings"
)

// dangerous records built-in dangers in one simple command (already
// unwrapped by the caller for wrappers). These always ask: no allow rule,
// grant or mode can let them run unseen. They match what the program will
// do, not how it is spelled: long options by any abbreviation the program
// accepts, paths by every alias of the same file (//dev, /proc/1/root, a
// relative path after cd), refspecs in every force and delete form.
func (z *analyzer) dangerous(ws []word) {
	z.downloadThenRun(ws)
	name := cmdName(ws[0])
	args := ws[1:]
	switch {
	case name == "rm" || name == "rmdir" || name == "unlink" || name == "srm" || name == "wipe":
		if name == "rm" && !hasFlag(args, 'r', 'R', "--recursive") && !hasLong(args, "--no-preserve-root") {
			return
		}
		if name == "rm" && hasLong(args, "--no-preserve-root") {
			z.a.danger("rm --no-preserve-root")
			return
		}
		for _, t := range operands(args) {
			if why := z.dangerousTarget(t); why != "" {
				z.a.danger("recursive delete of " + why)
			}
		}
	case name == "shred" || name == "scrub" || name == "truncate" || name == "fallocate" || name == "sponge" ||
		name == "ddrescue" || name == "badblocks":
		// They overwrite their operands: a disk named there is wiped.
		for _, t := range operands(args) {
			z.dangerousWrite(name+" writing to", t.loose)
		}
	case name == "chmod" || name == "chown" || name == "chgrp" || name == "setfacl" || name == "chattr" || name == "chcon":
		if !hasFlag(args, 'R', 'R', "--recursive") {
			return
		}
		// The mode or owner is an operand too; it never names a
		// dangerous directory, and skipping it would miss `chmod -R -w /`
		// (a mode that looks like an option).
		for _, t := range operands(args) {
			if why := z.dangerousTarget(t); why != "" {
				z.a.danger("recursive " + name + " of " + why)
			}
		}
	case name == "find" || name == "gfind":
		z.findDangers(args)
	case name == "mkfs" || strings.HasPrefix(name, "mkfs.") || name == "mke2fs" || name == "mkswap" ||
		name == "wipefs" || name == "mkntfs" || name == "mkdosfs" || name == "mkexfatfs" || name == "mkudffs" ||
		name == "mkreiserfs" || name == "mkfs.btrfs" || name == "blkdiscard" || name == "sg_format" ||
		name == "fdisk" || name == "sfdisk" || name == "sgdisk" || name == "cfdisk" || name == "gdisk" ||
		name == "parted" || name == "pvremove" || name == "vgremove" || name == "lvremove" || name == "mdadm":
		z.a.danger(name + " (formats, repartitions or removes a disk or volume)")
	case name == "cryptsetup" || name == "nvme" || name == "hdparm" || name == "zpool" || name == "zfs":
		z.diskTool(name, args)
	case name == "dd" || name == "dcfldd" || name == "dc3dd":
		for _, a := range args {
			if strings.HasPrefix(a.loose, anyText) {
				z.a.danger(name + " with the operand " + printable(a.loose) + ", not known until run time (it could be of=/dev/…)")
				continue
			}
			v, ok := strings.CutPrefix(a.loose, "of=")
			if !ok {
				continue
			}
			if strings.HasPrefix(v, anyText) {
				z.a.danger(name + " writing to " + printable(v) + ", not known until run time (it could be a disk)")
				continue
			}
			if !strings.HasPrefix(v, "/") && z.dz.lostDir {
				z.a.danger(name + " writing to " + printable(v) + " after a cd to a directory not known until run time")
				continue
			}
			z.dangerousWrite(name+" writing to", v)
		}
	case name == "tee" || name == "cp" || name == "mv" || name == "install" || name == "rsync":
		z.movesOrMirrors(name, args)
		for _, a := range args {
			if v, ok := strings.CutPrefix(a.loose, "--target-directory="); ok {
				z.dangerousWrite(name+" writing to", v)
			}
			if strings.HasPrefix(a.loose, "-") && len(a.loose) > 1 {
				continue
			}
			z.dangerousWrite(name+" writing to", a.loose)
		}
	case name == "mknod":
		// A block or character device node can be made anywhere, under
		// any name, and then written like a file.
		for _, a := range operands(args) {
			if a.loose == "b" || a.loose == "c" || a.loose == "u" || !a.known() {
				z.a.danger("mknod of a device node")
				break
			}
		}
	case name == "sysctl":
		for _, a := range args {
			if a.loose == "-w" || a.loose == "--write" || a.loose == "-p" || a.loose == "--load" || a.loose == "--system" ||
				(!strings.HasPrefix(a.loose, "-") && strings.Contains(a.loose, "=")) {
				z.a.danger("sysctl changing kernel parameters")
				break
			}
		}
	case name == "git":
		z.gitPush(args)
		z.gitRecursiveDeletes(args)
	case name == "gh":
		z.ghBranches(args)
	case name == ":" || name == "":
		// A fork bomb is found on the function definition.
	default:
		z.machineDangers(name, args)
	}
}

func printable(s string) string { return strings.ReplaceAll(s, anyText, "…") }

// gitRecursiveDeletes flags what git deletes as rm -r would: git worktree
// remove takes the worktree's directory away (in a linked worktree,
// git worktree remove --force . deletes the workspace), and git rm -r the
// tracked files below its paths.
func (z *analyzer) gitRecursiveDeletes(args []word) {
	sub, rest := gitSubcommand(args)
	var targets []word
	switch {
	case sub == "worktree" && len(rest) > 0 && rest[0].loose == "remove":
		targets = operands(rest[1:])
	case sub == "rm" && hasFlag(rest, 'r', 'r', "-r") && !hasLong(rest, "--cached"): // --cached leaves the files
		targets = operandsOf(rest, "", []string{"--pathspec-from-file"})
	default:
		return
	}
	for _, t := range targets {
		if why := z.dangerousTarget(t); why != "" {
			z.a.danger("git " + sub + " recursive delete of " + why)
		}
	}
}

// movesOrMirrors flags mv of a directory that must not be deleted (moving
// /usr away breaks the machine as surely as deleting it) and rsync
// --delete onto one (an empty source deletes everything there).
func (z *analyzer) movesOrMirrors(name string, args []word) {
	ops := operands(args)
	if len(ops) < 2 {
		return
	}
	switch {
	case name == "mv":
		for _, t := range ops[:len(ops)-1] {
			if why := z.dangerousTarget(t); why != "" {
				z.a.danger("mv of " + why)
			}
		}
	case name == "rsync":
		for _, a := range args {
			if a.loose == "--" {
				break
			}
			n, _, _ := strings.Cut(a.loose, "=")
			if strings.HasPrefix(n, "--del") || longMatches(a.loose, "--remove-source-files") {
				if why := z.dangerousTarget(ops[len(ops)-1]); why != "" {
					z.a.danger("rsync " + printable(a.loose) + " onto " + why)
				}
				return
			}
		}
	}
}

// hasFlag reports a short option letter (alone or in a cluster like -rf) or
// the given long option, or any abbreviation of it (GNU getopt_long takes
// --rec for --recursive), before any "--".
func hasFlag(args []word, a, b byte, long string) bool {
	for _, w := range args {
		l := w.loose
		if l == "--" {
			return false
		}
		if longMatches(l, long) {
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

// longMatches reports whether the word l is the long option long ("--x")
// or an abbreviation of it, with or without "=value". A short option
// ("-f") must match exactly.
func longMatches(l, long string) bool {
	if !strings.HasPrefix(long, "--") {
		return l == long
	}
	name, _, _ := strings.Cut(l, "=")
	return len(name) > 2 && strings.HasPrefix(name, "--") && strings.HasPrefix(long, name)
}

func hasLong(args []word, long string) bool {
	for _, w := range args {
		if w.loose == "--" {
			return false
		}
		if longMatches(w.loose, long) {
			return true
		}
	}
	return false
}

// leadingOperands is the first n of operands(args): the verbs a check
// reads, without a copy of a 30,000-word command per check.
func leadingOperands(args []word, n int) []word {
	out := make([]word, 0, n)
	for i, w := range args {
		if len(out) == n {
			break
		}
		if w.loose == "--" {
			rest := args[i+1:]
			return append(out, rest[:min(len(rest), n-len(out))]...)
		}
		if strings.HasPrefix(w.loose, "-") && len(w.loose) > 1 {
			continue
		}
		out = append(out, w)
	}
	return out
}

// operandText is the i-th of ops (leadingOperands' words), or "" past
// their end: a subcommand path read word by word (gh alias set).
func operandText(ops []word, i int) string {
	if i < len(ops) {
		return ops[i].loose
	}
	return ""
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
	if strings.HasPrefix(l, "~") {
		// A stand-in home two levels deep, like /home/alice: ~/.. is /home,
		// ~/../.. is /, ~/. and ~/* are the home directory itself.
		user, rest, _ := strings.Cut(l[1:], "/")
		home := "/home/~" + strings.ReplaceAll(user, anyText, "x")
		p := path.Clean(home + "/" + strings.ReplaceAll(rest, anyText, ""))
		switch {
		case p == home:
			return "the home directory (" + printable(l) + ")"
		case !strings.HasPrefix(p, home+"/"):
			return printable(l) + " (above the home directory)"
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
		forms := z.pathForms(c)
		if len(forms) == 0 {
			if c == "." || c == ".." || strings.HasPrefix(c, "../") {
				return printable(l) + " (relative, with no known working directory)"
			}
			continue
		}
		for _, p := range forms {
			if why := z.vitalDir(p); why != "" {
				return printable(l) + " (" + why + ")"
			}
		}
	}
	return ""
}

// vitalDir says why the absolute clean path p must not be deleted or
// re-owned recursively, or "".
func (z *analyzer) vitalDir(p string) string {
	switch {
	case p == "/":
		return "the root directory"
	case strings.Count(p, "/") == 1:
		return "a top-level directory"
	case z.workspace != "" && within(path.Clean(z.workspace), p):
		return "the workspace root or above it"
	case strings.HasPrefix(p, "/home/") && strings.Count(p, "/") == 2,
		strings.HasPrefix(p, "/Users/") && strings.Count(p, "/") == 2:
		return "a home directory"
	}
	return ""
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
