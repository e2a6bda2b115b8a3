package policy

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// Reading strace's output (strace -f -qq -y -s 65536, one file for every
// process): the calls that start programs, open, change or delete files
// or reach a network, each with the file it reaches.

// traceKind is what one recorded call did.
type traceKind int

const (
	traceExec    traceKind = iota // started (or tried to start) a program
	traceWrite                    // created, wrote, truncated, linked or changed a file's mode, owner or times
	traceDelete                   // removed a name (unlink, rmdir, the old name of a rename)
	traceConnect                  // connected, or sent a datagram, to an address
	traceRead                     // opened a file to read it, and the open succeeded
)

// traceEvent is one recorded call.
type traceEvent struct {
	pid     int
	kind    traceKind
	path    string   // the program, or the file reached (absolute, links resolved as far as known)
	to      string   // a rename's new name (on the traceDelete of the old)
	argv    []string // traceExec: the program's arguments, as far as strace printed them
	address string   // traceConnect
	call    string   // the call's name
	line    string   // the line, for messages (clipped)
	created bool     // traceWrite: made by an open with O_CREAT|O_EXCL that succeeded (nothing was there before)
}

// traceReader turns a trace into events. links are the symlinks known
// before the command ran (absolute path -> target as written); those the
// command makes are added as they are seen, so a later call through one
// resolves.
type traceReader struct {
	links map[string]string
	cwd   map[int]string // the last working directory seen for each process
	// ppid is who forked whom, kept across the commands one strace
	// follows: a process an earlier command left running is still placed.
	ppid map[int]int
	// earlier are the roots of the commands read before.
	earlier map[int]bool
	ws      string // the working directory of the first process
}

// newTraceReader reads one command's part of a trace. forks and earlier
// belong to the strace the trace comes from (nil for a fresh one); read
// adds to them.
func newTraceReader(links map[string]string, ws string, forks map[int]int, earlier map[int]bool) *traceReader {
	if forks == nil {
		forks = map[int]int{}
	}
	if earlier == nil {
		earlier = map[int]bool{}
	}
	r := &traceReader{links: map[string]string{}, cwd: map[int]string{}, ppid: forks, earlier: earlier, ws: ws}
	for k, v := range links {
		r.links[k] = v
	}
	return r
}

// unnamedRead is the path of a read whose file strace could not name.
const unnamedRead = "\x00unnamed"

// errEarlier marks a trace line of a process an earlier command started.
var errEarlier = errors.New("a process of an earlier command")

// read parses the part of a trace written while one command ran and
// returns the calls of root (the command's bash, from its execve on: before
// it, the runner's child sets up the redirections) and of every process it
// started. Other processes' lines (the runner's) are only followed for
// forks. A line of the command's it cannot read is an error: the harness
// must never pass a command because its trace was not understood.
func (r *traceReader) read(trace string, root int) ([]traceEvent, error) {
	type call struct {
		pid  int
		text string
		bad  error
		// resumed: the end of a call whose start came before this trace
		// (a process of an earlier command, killed at its timeout while
		// in a call, finishing it after the next command began).
		resumed bool
	}
	var calls []call
	pending := map[int]string{}
	for _, line := range strings.Split(trace, "\n") {
		if line == "" {
			continue
		}
		pidText, rest, ok := strings.Cut(line, " ")
		pid, err := strconv.Atoi(pidText)
		if !ok || err != nil {
			return nil, fmt.Errorf("a trace line without a process id: %q", clip(line, 200))
		}
		rest = strings.TrimLeft(rest, " ")
		switch {
		case strings.HasPrefix(rest, "+++ "), strings.HasPrefix(rest, "--- "):
			continue
		case strings.HasSuffix(rest, " <unfinished ...>"):
			pending[pid] = strings.TrimSuffix(rest, " <unfinished ...>")
			continue
		case strings.HasPrefix(rest, "<... "):
			// "<... openat resumed>, O_RDONLY) = 3" continues the call.
			i := strings.Index(rest, " resumed>")
			head, ok := pending[pid]
			if i < 0 || !ok {
				calls = append(calls, call{pid: pid, resumed: true, bad: fmt.Errorf("a resumed call without its start: %q", clip(line, 200))})
				continue
			}
			delete(pending, pid)
			rest = head + rest[i+len(" resumed>"):]
		}
		calls = append(calls, call{pid: pid, text: rest})
		if name, args, _ := strings.Cut(rest, "("); name == "clone" || name == "clone3" || name == "fork" || name == "vfork" {
			// A resumed call pads before its result: ")      = 135".
			if _, result, err := splitArgs(args); err == nil {
				result = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(result), "="))
				if child, err := strconv.Atoi(strings.Fields(result + " x")[0]); err == nil && child > 0 {
					r.ppid[child] = pid
				}
			}
		}
	}
	// Every process that made a call must be placed: the command's (root
	// and what it started), or the runner's (root's parent and its other
	// children). A process placed nowhere, or one an earlier command
	// started that still runs, is an error: its calls would be nobody's.
	runner, ok := r.ppid[root]
	if !ok {
		return nil, fmt.Errorf("the trace does not show the runner starting the command (pid %d)", root)
	}
	placed := map[int]bool{}
	place := func(pid int) (bool, error) {
		if m, ok := placed[pid]; ok {
			return m, nil
		}
		p := pid
		for range 4096 {
			switch {
			case p == root:
				placed[pid] = true
				return true, nil
			case r.earlier[p]:
				return false, fmt.Errorf("process %d, which an earlier command started (%d), still runs: %w", pid, p, errEarlier)
			case p == runner:
				placed[pid] = false
				return false, nil
			}
			parent, ok := r.ppid[p]
			if !ok {
				break
			}
			p = parent
		}
		return false, fmt.Errorf("process %d is neither the command's nor the runner's: the trace does not show its fork", pid)
	}
	defer func() { r.earlier[root] = true }()
	var events []traceEvent
	started := false
	for _, c := range calls {
		mine, err := place(c.pid)
		if err != nil && c.resumed && errors.Is(err, errEarlier) {
			// Its start was read with the earlier command's trace (a
			// call cut short, judged as having done what it asked);
			// its end adds nothing. Any new call of it is still an error.
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("%v: %q", err, clip(c.text, 300))
		}
		if !mine {
			continue
		}
		if c.bad != nil {
			return nil, c.bad
		}
		if c.pid == root && !started {
			if !strings.HasPrefix(c.text, "execve(") {
				continue // the runner's child making the redirections
			}
			started = true
		}
		evs, err := r.call(c.pid, c.text)
		if err != nil {
			return nil, fmt.Errorf("%v in %q", err, clip(c.text, 300))
		}
		events = append(events, evs...)
	}
	for pid, head := range pending {
		if mine, _ := place(pid); mine && !strings.HasPrefix(head, "execve(") {
			// A call cut short by a kill; it may still have done what it
			// asked for.
			evs, err := r.call(pid, head+") = ?")
			if err == nil {
				events = append(events, evs...)
			}
		}
	}
	return events, nil
}

// call reads one complete call "name(args) = result".
func (r *traceReader) call(pid int, text string) ([]traceEvent, error) {
	open := strings.IndexByte(text, '(')
	if open <= 0 {
		return nil, fmt.Errorf("not a call")
	}
	name := text[:open]
	args, rest, err := splitArgs(text[open+1:])
	if err != nil {
		return nil, err
	}
	result := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(rest), "="))
	failed := strings.HasPrefix(result, "-1 ") || strings.HasPrefix(result, "?")
	if strings.HasPrefix(result, "-1 EEXIST ") && name != "execve" && name != "execveat" {
		// Nothing was there to change, or it was there already (mkdir -p,
		// O_EXCL): the call changed nothing and would not elsewhere.
		// Every other failure counts as an attempt: the sandbox refuses
		// what a real run might be allowed (a read-only mount, a file of
		// another user, a missing directory that exists elsewhere).
		return nil, nil
	}
	if strings.HasPrefix(result, "-1 ENOENT ") && slices.Contains(args, `""`) {
		// An empty name without AT_EMPTY_PATH: the kernel refused it
		// before it reached any file, and would anywhere (bash's
		// redirection to an unset variable).
		return nil, nil
	}
	ev := func(kind traceKind, p string) traceEvent {
		return traceEvent{pid: pid, kind: kind, path: p, call: name, line: clip(text, 300)}
	}
	arg := func(i int) string {
		if i < len(args) {
			return args[i]
		}
		return ""
	}
	// pathArg resolves the path argument at index i against the directory
	// it starts from.
	pathArg := func(i int, follow bool) (string, error) {
		return r.pathAt(pid, dirArg(name, args, i), arg(i), follow)
	}
	// Every *at call shows the directory its relative names start from
	// (AT_FDCWD</dir>): the process's working directory at that moment.
	for _, a := range args {
		if strings.HasPrefix(a, "AT_FDCWD<") {
			if d, ok := decoration(a); ok {
				r.cwd[pid] = d
			}
			break
		}
	}
	switch name {
	case "execve", "execveat":
		i := firstPathArg(name)
		p, err := pathArg(i, true)
		if err != nil {
			return nil, err
		}
		e := ev(traceExec, p)
		e.argv, _ = stringArray(arg(i + 1))
		return []traceEvent{e}, nil
	case "open", "openat", "openat2", "creat":
		i := firstPathArg(name)
		flags := arg(i + 1)
		kind := traceWrite
		if name != "creat" && !writeFlags(flags) {
			// A read is one only if it opened the file: a failed open
			// read nothing, and O_PATH gives no access to the content.
			if failed || strings.Contains(flags, "O_PATH") {
				return nil, nil
			}
			kind = traceRead
		}
		p, err := pathArg(i, !strings.Contains(flags, "O_NOFOLLOW"))
		if err != nil && kind == traceRead {
			// A process strace may not read (gpg and gpg-agent make
			// themselves non-dumpable): a listing reads no file's
			// content; any other read is of a file not named, which
			// the check holds against the protected files (unnamedRead).
			if strings.Contains(flags, "O_DIRECTORY") {
				return nil, nil
			}
			return []traceEvent{ev(traceRead, unnamedRead)}, nil
		}
		if err != nil {
			return nil, err
		}
		if d, ok := decoration(result); ok && !failed {
			p = d // where the file really is
		}
		e := ev(kind, p)
		e.created = !failed && strings.Contains(flags, "O_CREAT") && strings.Contains(flags, "O_EXCL")
		return []traceEvent{e}, nil
	case "unlink", "rmdir", "unlinkat":
		p, err := pathArg(firstPathArg(name), false)
		if err != nil {
			return nil, err
		}
		return []traceEvent{ev(traceDelete, p)}, nil
	case "rename", "renameat", "renameat2", "link", "linkat":
		oldI, newI := 0, 1
		if atCall(name) {
			oldI, newI = 1, 3
		}
		follow := name == "linkat" && strings.Contains(arg(4), "AT_SYMLINK_FOLLOW")
		oldP, err := pathArg(oldI, follow)
		if err != nil {
			return nil, err
		}
		newP, err := pathArg(newI, false)
		if err != nil {
			return nil, err
		}
		if strings.HasPrefix(name, "link") {
			// A hard link is the old file under a second name: a later
			// write to the new name writes the old file.
			return []traceEvent{ev(traceWrite, newP), ev(traceWrite, oldP)}, nil
		}
		if target, ok := r.links[oldP]; ok && !failed {
			delete(r.links, oldP)
			r.links[newP] = target
		}
		del := ev(traceDelete, oldP)
		del.to = newP
		return []traceEvent{del, ev(traceWrite, newP)}, nil
	case "mkdir", "mkdirat", "mknod", "mknodat":
		p, err := pathArg(firstPathArg(name), false)
		if err != nil {
			return nil, err
		}
		return []traceEvent{ev(traceWrite, p)}, nil
	case "symlink", "symlinkat":
		target, err := unquote(arg(0))
		if err != nil {
			return nil, err
		}
		dir := "AT_FDCWD"
		if name == "symlinkat" {
			dir = arg(1)
		}
		p, err := r.pathAt(pid, dir, arg(len(args)-1), false)
		if err != nil {
			return nil, err
		}
		if !failed {
			r.links[p] = target
		}
		return []traceEvent{ev(traceWrite, p)}, nil
	case "truncate", "chmod", "chown", "lchown", "utime", "utimes":
		p, err := r.pathAt(pid, "AT_FDCWD", arg(0), name != "lchown")
		if err != nil {
			return nil, err
		}
		return []traceEvent{ev(traceWrite, p)}, nil
	case "fchmodat", "fchownat", "utimensat", "futimesat":
		if arg(1) == "NULL" { // futimens(fd)
			if d, ok := decoration(arg(0)); ok {
				return []traceEvent{ev(traceWrite, d)}, nil
			}
			return nil, fmt.Errorf("a descriptor strace did not name")
		}
		follow := !strings.Contains(strings.Join(args[2:], " "), "AT_SYMLINK_NOFOLLOW")
		p, err := r.pathAt(pid, arg(0), arg(1), follow)
		if err != nil {
			return nil, err
		}
		return []traceEvent{ev(traceWrite, p)}, nil
	case "ftruncate", "fchmod", "fchown":
		d, ok := decoration(arg(0))
		if !ok {
			return nil, fmt.Errorf("a descriptor strace did not name")
		}
		return []traceEvent{ev(traceWrite, d)}, nil
	case "chdir":
		if !failed {
			p, err := r.pathAt(pid, "AT_FDCWD", arg(0), true)
			if err != nil {
				return nil, err
			}
			r.cwd[pid] = p
		}
		return nil, nil
	case "fchdir":
		if d, ok := decoration(arg(0)); ok && !failed {
			r.cwd[pid] = d
		}
		return nil, nil
	case "clone", "clone3", "fork", "vfork":
		if child, err := strconv.Atoi(strings.Fields(result + " x")[0]); err == nil && child > 0 {
			r.ppid[child] = pid
		}
		return nil, nil
	case "connect":
		if a := arg(1); networkAddress(a) {
			e := ev(traceConnect, "")
			e.address = a
			return []traceEvent{e}, nil
		}
		return nil, nil
	case "sendto":
		if a := arg(4); a != "NULL" && networkAddress(a) {
			e := ev(traceConnect, "")
			e.address = a
			return []traceEvent{e}, nil
		}
		return nil, nil
	case "sendmsg", "sendmmsg":
		if i := strings.Index(arg(1), "msg_name={"); i >= 0 && networkAddress(arg(1)[i+len("msg_name="):]) {
			e := ev(traceConnect, "")
			e.address = arg(1)
			return []traceEvent{e}, nil
		}
		return nil, nil
	case "???":
		// strace lost the call's number: the process was killed or
		// exited while in it (a coprocess at bash's exit, a loaded
		// machine), so it has no arguments and no result. Nothing is
		// known to read, and the canaries' fingerprint still catches a
		// change no call explains.
		if len(args) == 0 && result == "?" {
			return nil, nil
		}
	}
	return nil, fmt.Errorf("a call the reader does not know (%s)", name)
}

// atCall reports a call of the *at family (openat, renameat2, ...), whose
// path arguments each follow the directory they start from. creat, for all
// its name, is none.
func atCall(name string) bool {
	return name != "creat" && (strings.HasSuffix(name, "at") || strings.HasSuffix(name, "at2"))
}

// firstPathArg is the index of a call's first path argument.
func firstPathArg(name string) int {
	if atCall(name) {
		return 1
	}
	return 0
}

// dirArg is the directory argument for the path at index i: the argument
// before it for the *at calls, the working directory otherwise.
func dirArg(name string, args []string, i int) string {
	if i > 0 && i-1 < len(args) && atCall(name) {
		return args[i-1]
	}
	return "AT_FDCWD"
}

// writeFlags reports whether open flags may change the file.
func writeFlags(flags string) bool {
	for _, f := range []string{"O_WRONLY", "O_RDWR", "O_CREAT", "O_TRUNC", "O_APPEND"} {
		if strings.Contains(flags, f) {
			return true
		}
	}
	return false
}

// networkAddress: a socket address that leaves this process's machine
// view. A local socket (AF_UNIX) is a network too — a daemon's socket
// is reached through the file system, which no network namespace cuts —
// except the name service's, which glibc asks for user and group names.
// Netlink talks to the kernel.
func networkAddress(a string) bool {
	switch {
	case strings.Contains(a, "sa_family=AF_NETLINK"):
		return false
	case strings.Contains(a, "sa_family=AF_UNIX"):
		for _, nss := range []string{`"/var/run/nscd/socket"`, `"/run/nscd/socket"`, `"/run/systemd/userdb/`} {
			if strings.Contains(a, nss) {
				return false
			}
		}
		return true
	case strings.Contains(a, "sa_family=AF_UNSPEC"):
		return false
	}
	return strings.Contains(a, "sa_family=")
}

// pathAt resolves the quoted path argument against its directory argument
// (AT_FDCWD</dir>, N</dir>, or the process's working directory), and then
// through the symlinks known to the reader: all of them when follow,
// else those of the parent directories only.
func (r *traceReader) pathAt(pid int, dir, quoted string, follow bool) (string, error) {
	if quoted == "NULL" {
		if d, ok := decoration(dir); ok {
			return d, nil
		}
		return "", fmt.Errorf("a NULL path on a descriptor strace did not name")
	}
	p, err := unquote(quoted)
	if err != nil {
		return "", err
	}
	if !filepath.IsAbs(p) {
		base, ok := decoration(dir)
		if !ok {
			base = r.workdir(pid)
		}
		p = filepath.Join(base, p)
	}
	return r.resolve(filepath.Clean(p), follow), nil
}

// workdir is pid's working directory as last seen, or its parent's.
func (r *traceReader) workdir(pid int) string {
	for range 64 {
		if d, ok := r.cwd[pid]; ok {
			return d
		}
		parent, ok := r.ppid[pid]
		if !ok {
			break
		}
		pid = parent
	}
	return r.ws
}

// resolve follows the known symlinks in p (the last component only when
// follow), at most 40 times as the kernel does.
func (r *traceReader) resolve(p string, follow bool) string {
	for range 40 {
		parts := strings.Split(strings.TrimPrefix(p, "/"), "/")
		changed := false
		for i := 1; i <= len(parts); i++ {
			if i == len(parts) && !follow {
				break
			}
			prefix := "/" + strings.Join(parts[:i], "/")
			target, ok := r.links[prefix]
			if !ok {
				continue
			}
			if !filepath.IsAbs(target) {
				target = filepath.Join(filepath.Dir(prefix), target)
			}
			p = filepath.Clean(filepath.Join(append([]string{target}, parts[i:]...)...))
			changed = true
			break
		}
		if !changed {
			return p
		}
	}
	return p
}

// decoration returns the path strace -y prints after a descriptor
// ("3</dir/file>", "AT_FDCWD</dir>"); ok is false when there is none or it
// is no file (a pipe, a socket).
func decoration(a string) (string, bool) {
	// A file since removed shows as "3</dir/file>(deleted)".
	a = strings.TrimSuffix(a, "(deleted)")
	i := strings.IndexByte(a, '<')
	if i < 0 || !strings.HasSuffix(a, ">") {
		return "", false
	}
	p, err := unescape(a[i+1 : len(a)-1])
	if err != nil || !strings.HasPrefix(p, "/") {
		return "", false
	}
	return p, true
}

// splitArgs splits "a, b, c) = result" into the arguments and what follows
// the closing parenthesis, minding quotes, brackets and decorations.
func splitArgs(s string) (args []string, rest string, err error) {
	depth := 0
	start := 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '"':
			for i++; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' {
					i++
				}
			}
			if i >= len(s) {
				return nil, "", fmt.Errorf("an unterminated string")
			}
		case '[', '{', '<':
			depth++
		case ']', '}', '>':
			if depth > 0 {
				depth--
			}
		case '(':
			depth++
		case ')':
			if depth == 0 {
				if t := strings.TrimSpace(s[start:i]); t != "" {
					args = append(args, t)
				}
				return args, s[i+1:], nil
			}
			depth--
		case ',':
			if depth == 0 {
				args = append(args, strings.TrimSpace(s[start:i]))
				start = i + 1
			}
		}
	}
	return nil, "", fmt.Errorf("no closing parenthesis")
}

// stringArray reads ["a", "b", ...].
func stringArray(a string) ([]string, error) {
	a = strings.TrimSpace(a)
	if !strings.HasPrefix(a, "[") || !strings.HasSuffix(a, "]") {
		return nil, fmt.Errorf("not an array: %q", a)
	}
	parts, _, err := splitArgs(a[1:len(a)-1] + ")")
	if err != nil {
		return nil, err
	}
	var out []string
	for _, p := range parts {
		if p == "..." {
			break
		}
		s, err := unquote(p)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// unquote reads a string as strace prints it: "…" with C escapes, maybe
// followed by ... when cut short.
func unquote(q string) (string, error) {
	q = strings.TrimSuffix(q, "...")
	if len(q) < 2 || q[0] != '"' || q[len(q)-1] != '"' {
		return "", fmt.Errorf("not a string: %q", clip(q, 100))
	}
	return unescape(q[1 : len(q)-1])
}

func unescape(s string) (string, error) {
	if !strings.Contains(s, `\`) {
		return s, nil
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 == len(s) {
			b.WriteByte(s[i])
			continue
		}
		i++
		switch c := s[i]; c {
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case 'r':
			b.WriteByte('\r')
		case 'v':
			b.WriteByte('\v')
		case 'f':
			b.WriteByte('\f')
		case 'x':
			if i+2 >= len(s) {
				return "", fmt.Errorf("a short \\x escape")
			}
			v, err := strconv.ParseUint(s[i+1:i+3], 16, 8)
			if err != nil {
				return "", err
			}
			b.WriteByte(byte(v))
			i += 2
		case '0', '1', '2', '3', '4', '5', '6', '7':
			j := i
			for j < len(s) && j < i+3 && s[j] >= '0' && s[j] <= '7' {
				j++
			}
			v, err := strconv.ParseUint(s[i:j], 8, 8)
			if err != nil {
				return "", err
			}
			b.WriteByte(byte(v))
			i = j - 1
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), nil
}

// The reader places every process: a fork whose result strace printed
// resumed (padded: ")      = 135") is the command's, and a process whose
// fork the trace does not show is an error, never nobody's.
func TestTraceReaderPlacesProcesses(t *testing.T) {
	ws := "/h/ws"
	trace := strings.Join([]string{
		`58    clone(child_stack=NULL, flags=SIGCHLD) = 133`,
		`133   execve("/usr/bin/bash", ["bash", "-c", "awk"], 0x1 /* 1 vars */) = 0`,
		`133   clone3({flags=CLONE_VM|CLONE_VFORK, exit_signal=SIGCHLD}, 88 <unfinished ...>`,
		`135   execve("/bin/sh", ["sh", "-c", "askops-probe"], 0x1 /* 1 vars */) = 0`,
		`133   <... clone3 resumed>)             = 135`,
		`58    openat(AT_FDCWD</>, "/h/.mark", O_WRONLY|O_CREAT|O_TRUNC, 0666) = 3</h/.mark>`,
	}, "\n")
	events, err := newTraceReader(nil, ws, nil, nil).read(trace, 133)
	if err != nil {
		t.Fatal(err)
	}
	var ran []string
	for _, e := range events {
		if e.kind == traceExec {
			ran = append(ran, e.path)
		}
	}
	if want := []string{"/usr/bin/bash", "/bin/sh"}; !slices.Equal(ran, want) {
		t.Errorf("the reader places the exec calls %q, want %q", ran, want)
	}
	_, err = newTraceReader(nil, ws, nil, nil).read(trace+"\n"+`777   execve("/bin/sh", ["sh"], 0x1 /* 1 vars */) = 0`, 133)
	if err == nil || !strings.Contains(err.Error(), "process 777 is neither") {
		t.Errorf("a process the trace does not place: %v", err)
	}
	forks, earlier := map[int]int{}, map[int]bool{}
	if _, err := newTraceReader(nil, ws, forks, earlier).read(trace, 133); err != nil {
		t.Fatal(err)
	}
	next := strings.Join([]string{
		`58    clone(child_stack=NULL, flags=SIGCHLD) = 140`,
		`140   execve("/usr/bin/bash", ["bash", "-c", "ls"], 0x1 /* 1 vars */) = 0`,
		`135   openat(AT_FDCWD</h/ws>, "/h/ws/.git/HEAD", O_WRONLY|O_TRUNC) = 3</h/ws/.git/HEAD>`,
	}, "\n")
	_, err = newTraceReader(nil, ws, forks, earlier).read(next, 140)
	if err == nil || !strings.Contains(err.Error(), "an earlier command started") {
		t.Errorf("a process an earlier command left running: %v", err)
	}
	// Killed at its timeout inside a call, an earlier command's process
	// may print that call's end after the next command began (a loaded
	// machine): its start was read with the earlier command, cut short,
	// so its end alone is no error; a new call of it still is.
	ended := strings.Join([]string{
		`58    clone(child_stack=NULL, flags=SIGCHLD) = 141`,
		`141   execve("/usr/bin/bash", ["bash", "-c", "ls"], 0x1 /* 1 vars */) = 0`,
		`135   <... read resumed>0x7ffd, 128)   = ? ERESTARTSYS (To be restarted if SA_RESTART is set)`,
	}, "\n")
	if _, err := newTraceReader(nil, ws, forks, earlier).read(ended, 141); err != nil {
		t.Errorf("the end of an earlier command's call, started before: %v", err)
	}
	// A call strace lost the number of (the process died in it: coproc
	// ls at bash's exit, under load) is read as nothing; one with
	// arguments is not understood, and is an error.
	lost := strings.Join([]string{
		`58    clone(child_stack=NULL, flags=SIGCHLD) = 150`,
		`150   execve("/usr/bin/bash", ["bash", "-c", "coproc ls"], 0x1 /* 1 vars */) = 0`,
		`150   ???()                = ?`,
	}, "\n")
	if _, err := newTraceReader(nil, ws, nil, nil).read(lost, 150); err != nil {
		t.Errorf("a call strace lost: %v", err)
	}
	if _, err := newTraceReader(nil, ws, nil, nil).read(lost+"\n"+`150   ???(0x1, 0x2)        = 0`, 150); err == nil {
		t.Error("a call strace could not name, with arguments and a result, was read as nothing")
	}
}

// A path strace could not read (a non-dumpable process: gpg, gpg-agent)
// is never read as no file: a listing is no read of content, any other
// read is of a file not named, and a write stays an error.
func TestTraceReaderUnreadablePaths(t *testing.T) {
	ws := "/h/ws"
	start := `58    clone(child_stack=NULL, flags=SIGCHLD) = 133` + "\n" +
		`133   execve("/usr/bin/bash", ["bash", "-c", "gpg"], 0x1 /* 1 vars */) = 0` + "\n"
	for _, tc := range []struct {
		line    string
		want    []string // the reads
		wantErr bool
	}{
		{line: `133   openat(AT_FDCWD, 0x55a815dbe620, O_RDONLY|O_NONBLOCK|O_CLOEXEC|O_DIRECTORY) = 3`},
		{line: `133   openat(AT_FDCWD, 0x7ffdf1a4f1b0, O_RDONLY|O_CLOEXEC) = 3`, want: []string{unnamedRead}},
		{line: `133   openat(AT_FDCWD, 0x7ffdf1a4f1b0, O_WRONLY|O_CREAT|O_TRUNC, 0666) = 3`, wantErr: true},
		{line: `133   mkdir(0x55a815dbe620, 0700)       = 0`, wantErr: true},
	} {
		events, err := newTraceReader(nil, ws, nil, nil).read(start+tc.line, 133)
		if (err != nil) != tc.wantErr {
			t.Errorf("%s: error %v, want one: %v", tc.line, err, tc.wantErr)
			continue
		}
		var reads []string
		for _, e := range events {
			if e.kind == traceRead {
				reads = append(reads, e.path)
			}
		}
		if !slices.Equal(reads, tc.want) {
			t.Errorf("%s: reads %q, want %q", tc.line, reads, tc.want)
		}
	}
}
