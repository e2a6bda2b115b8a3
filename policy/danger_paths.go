package policy

import (
	"os"
	"path"
	"strings"
)

// dangerState is what the danger checks carry from one simple command to
// the next within a command line: every directory a cd may have moved the
// shell to, and whether a download was saved to a file.
type dangerState struct {
	moved      bool     // a cd was seen: dirs replaces the call's cwd
	dirs       []string // absolute, clean: every place the shell may be
	lostDir    bool     // a cd to a place not known until run time (cd "$D", cd -, cd ~x)
	downloaded bool     // a downloader wrote a file earlier in the line
}

// maxDirs bounds the candidate directories; past it a cd counts as lost.
const maxDirs = 32

// noteDir records where cd or pushd may take the shell. The directory
// before the cd stays a candidate, since a cd that fails leaves the shell
// where it was (cd /nope; rm -rf .). Subshells are not told apart: a cd in
// ( … ) counts for what follows too, which can only add candidates.
func (z *analyzer) noteDir(name string, ws []word) {
	if name != "cd" && name != "pushd" && name != "chdir" {
		return
	}
	dirs := z.dangerDirs()
	z.dz.moved = true
	z.dz.dirs = dirs
	var target *word
	for i := 1; i < len(ws); i++ {
		w := ws[i]
		if w.loose == "--" {
			if i+1 < len(ws) {
				target = &ws[i+1]
			}
			break
		}
		if w.known() && len(w.loose) > 1 && w.loose[0] == '-' && strings.Trim(w.loose[1:], "LPe@n") == "" {
			continue // cd -P, -L, -e, -@; pushd -n
		}
		target = &ws[i]
		break
	}
	if target == nil {
		z.dz.lostDir = true // cd alone: $HOME
		return
	}
	t := target.loose
	if !target.known() || t == "-" || strings.HasPrefix(t, "~") ||
		(name == "pushd" && (strings.HasPrefix(t, "+") || strings.HasPrefix(t, "-"))) {
		z.dz.lostDir = true
		return
	}
	var next []string
	if path.IsAbs(t) {
		next = []string{path.Clean(t)}
	} else {
		for _, d := range dirs {
			next = append(next, path.Join(d, t))
		}
	}
	for _, n := range next {
		if !contains(z.dz.dirs, n) {
			z.dz.dirs = append(z.dz.dirs, n)
		}
	}
	if len(z.dz.dirs) > maxDirs {
		z.dz.dirs = z.dz.dirs[:maxDirs]
		z.dz.lostDir = true
	}
}

// dangerDirs are the directories relative paths may be relative to: the
// call's cwd until a cd, then every place a cd may have led.
func (z *analyzer) dangerDirs() []string {
	if z.dz.moved {
		return z.dz.dirs
	}
	if z.cwd == "" {
		return nil
	}
	return []string{z.cwd}
}

// pathForms returns every absolute, clean path p may name: relative to each
// candidate directory, through /proc/<pid>/root and …/cwd (which lead back
// into the file system), and, for a path that exists, where its symlinks
// lead (a repository can ship `disk -> /dev/sda`). Unknown parts (anyText)
// stay in the result.
func (z *analyzer) pathForms(p string) []string {
	var bases []string
	if path.IsAbs(p) {
		bases = []string{p}
	} else {
		for _, d := range z.dangerDirs() {
			bases = append(bases, path.Join(d, p))
		}
	}
	var out []string
	add := func(s string) {
		if !contains(out, s) {
			out = append(out, s)
		}
	}
	for _, b := range bases {
		for _, f := range z.procAliases(path.Clean(b), 0) {
			add(f)
			if strings.Contains(f, anyText) || strings.HasPrefix(f, "/dev/") || strings.HasPrefix(f, "/proc/") {
				continue // judged by name: their links point at fds and pseudo files
			}
			if real, ok := resolveLinks(f); ok && real != f {
				for _, r := range z.procAliases(real, 0) {
					add(r)
				}
			}
		}
	}
	return out
}

// procAliases undoes /proc's ways back into the file system:
// /proc/<pid>/root/X is /X (the process's root, / unless chrooted),
// /proc/<pid>/cwd/X is X under some process's working directory (any of
// ours, or /), and /proc/<pid>/fd/<n>/X or /dev/fd/<n>/X is X under an open
// directory, which may be anything (so / and /dev are assumed).
func (z *analyzer) procAliases(p string, depth int) []string {
	if depth > 4 {
		return []string{p}
	}
	var rest, how string
	switch {
	case strings.HasPrefix(p, "/proc/"):
		parts := strings.SplitN(strings.TrimPrefix(p, "/proc/"), "/", 3)
		if len(parts) < 2 {
			return []string{p}
		}
		if parts[1] == "task" { // /proc/<pid>/task/<tid>/root
			sub := strings.SplitN(strings.Join(parts[2:], "/"), "/", 3)
			if len(sub) < 2 {
				return []string{p}
			}
			parts = append([]string{parts[0]}, sub[1:]...)
		}
		how = parts[1]
		if len(parts) > 2 {
			rest = parts[2]
		}
		if how == "fd" {
			_, r, ok := strings.Cut(rest, "/")
			if !ok {
				return []string{p} // the fd itself: a pipe, a file already opened
			}
			rest = r
		}
	case strings.HasPrefix(p, "/dev/fd/"):
		_, r, ok := strings.Cut(strings.TrimPrefix(p, "/dev/fd/"), "/")
		if !ok {
			return []string{p}
		}
		how, rest = "fd", r
	default:
		return []string{p}
	}
	var bases []string
	switch how {
	case "root":
		bases = []string{"/"}
	case "cwd":
		bases = append([]string{"/"}, z.dangerDirs()...)
	case "fd":
		bases = []string{"/", "/dev"}
	default:
		return []string{p}
	}
	var out []string
	for _, b := range bases {
		out = append(out, z.procAliases(path.Join(b, rest), depth+1)...)
	}
	return out
}

// deviceOrKernel says what writing to the absolute clean path p would
// touch when that is a disk, memory or the kernel's switches ("the device
// /dev/sda", "the kernel interface /proc/sysrq-trigger"), else "".
func deviceOrKernel(p string) string {
	q := strings.ReplaceAll(p, anyText, "x")
	switch {
	case strings.HasPrefix(q, "/dev/"):
		switch q {
		case "/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/stdin",
			"/dev/stdout", "/dev/stderr", "/dev/tty", "/dev/ptmx":
			return ""
		}
		for _, ok := range []string{"/dev/fd/", "/dev/pts/", "/dev/shm/", "/dev/mqueue/"} {
			if strings.HasPrefix(q, ok) {
				return ""
			}
		}
		return "the device " + printable(p)
	case strings.HasPrefix(q, "/sys/"), q == "/proc/sysrq-trigger", strings.HasPrefix(q, "/proc/sys/"),
		q == "/proc/kcore", q == "/proc/kmsg":
		return "the kernel interface " + printable(p)
	case strings.HasPrefix(q, "/proc/"):
		parts := strings.Split(strings.TrimPrefix(q, "/proc/"), "/")
		if len(parts) >= 2 && (parts[1] == "mem" || parts[1] == "oom_score_adj" || parts[1] == "attr") {
			return "the process interface " + printable(p)
		}
	}
	return ""
}

// writeTarget is the device or kernel interface a write to target (as
// written: relative, aliased, with unknown parts) may land on, or "".
func (z *analyzer) writeTarget(target string) string {
	t := strings.ReplaceAll(target, anyText, "x")
	if t == "" {
		return ""
	}
	for _, f := range z.pathForms(t) {
		if why := deviceOrKernel(f); why != "" {
			if f != t {
				why += " (written " + printable(target) + ")"
			}
			return why
		}
	}
	return ""
}

// dangerousWrite records a write to a device or kernel interface; doing
// says who writes ("dd writing to", "writes to" for a redirection).
func (z *analyzer) dangerousWrite(doing, target string) {
	if why := z.writeTarget(target); why != "" {
		z.a.danger(doing + " " + why)
	}
}

// resolveLinks follows the symlinks in the absolute clean path p, dangling
// ones included (a link to /dev/sda is a danger whether or not this
// machine has an sda), and cleans ".." after each link as the kernel does.
func resolveLinks(p string) (string, bool) {
	parts := strings.Split(strings.TrimPrefix(p, "/"), "/")
	cur := "/"
	hops := 0
	for i := 0; i < len(parts); i++ {
		if parts[i] == "" {
			continue
		}
		next := path.Join(cur, parts[i])
		target, err := os.Readlink(next)
		if err != nil {
			cur = next // not a link, or not there: nothing more to follow
			continue
		}
		if hops++; hops > 40 {
			return "", false
		}
		if !path.IsAbs(target) {
			target = path.Join(cur, target)
		}
		parts = append(strings.Split(strings.TrimPrefix(path.Clean(target), "/"), "/"), parts[i+1:]...)
		cur, i = "/", -1
	}
	return cur, true
}

// isDevice reports a path that, written as it is (absolute; //dev, /./ and
// /proc/<pid>/root aliases included), names a disk, memory or a kernel
// switch. Analyses with a working directory use writeTarget, which also
// follows cd and symlinks.
func isDevice(p string) bool {
	q := strings.ReplaceAll(p, anyText, "x")
	if !path.IsAbs(q) {
		return false
	}
	z := analyzer{a: &analysis{}}
	for _, f := range z.procAliases(path.Clean(q), 0) {
		if deviceOrKernel(f) != "" {
			return true
		}
	}
	return false
}
