package policy

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The execution sandbox runs commands in real bash, under strace, inside a
// throwaway set of namespaces, so the execution differential
// (execution_test.go) can compare what bash really did with what the policy
// read. Nothing a command does there reaches this machine:
//
//   - user namespace: the sandbox's root is an unprivileged user outside
//     (nobody when the tests run as root), so a file of this machine it may
//     write is one anybody may write;
//   - mount namespace: every mount is made read-only, a fresh tmpfs hides
//     the temporary directory, and /proc is the sandbox's own; before any
//     command runs the driver drops every capability (empty bounding set,
//     no_new_privs), so no command can undo a mount;
//   - network namespace: only a loopback that is down, so nothing connects
//     anywhere (and strace shows that it tried);
//   - pid, IPC and UTS namespaces: a kill reaches only the sandbox, and the
//     driver (pid 1) kills whatever a command left running before the next;
//   - a timeout per command, a file size and process limit, and a bounded
//     tmpfs.
//
// Programs are real but harmless: PATH is one directory of the sandbox
// (bin) holding real shells, find, xargs, coreutils, sed, awk, perl and make
// (where what a command writes or deletes, or what it runs, depends on the
// real program), and every other name resolves to a stub (/usr/bin/true
// under the name bash asked for, through command_not_found_handle, exported
// so nested bash has it too). A program that starts another through execvp
// (find -exec, xargs, env, dash) tries bin/NAME; strace shows that attempt
// even when it fails, so a program that would have run is seen either way.
//
// Layout: the sandbox root H (a fresh directory under the temporary
// directory, the same path outside, where the policy resolves links, and
// inside) holds the workspace ws (with .git, src/glink -> ../.git, .env,
// out/, outlink -> ../outside), and outside the workspace the canaries:
// outside/secret, home/.bashrc (HOME), and H itself. After every command
// the driver fingerprints the canaries (content and directory listings);
// a change strace did not explain is still reported.

// sandboxEntry is one file, directory or symlink of the sandbox's layout.
type sandboxEntry struct {
	path   string // relative to the sandbox root
	dir    bool
	link   string // a symlink's target
	data   string // a file's content
	mode   os.FileMode
	canary bool // fingerprinted after every command
}

func sandboxLayout() []sandboxEntry {
	return []sandboxEntry{
		{path: "ws", dir: true},
		{path: "ws/.git", dir: true, canary: true},
		{path: "ws/.git/HEAD", data: "ref: refs/heads/main\n", canary: true},
		{path: "ws/.git/config", data: "[core]\n\trepositoryformatversion = 0\n\tbare = false\n", canary: true},
		{path: "ws/.git/hooks", dir: true, canary: true},
		{path: "ws/.git/hooks/pre-commit", data: "#!/bin/sh\nexit 0\n", mode: 0o755, canary: true},
		{path: "ws/.git/objects", dir: true},
		{path: "ws/.git/refs", dir: true},
		{path: "ws/.git/refs/heads", dir: true},
		{path: "ws/src", dir: true},
		{path: "ws/src/main.go", data: "package main\n"},
		{path: "ws/src/glink", link: "../.git"},
		{path: "ws/out", dir: true},
		{path: "ws/out/x", data: "x\n"},
		{path: "ws/.env", data: "SECRET=askops-canary\n", canary: true},
		{path: "ws/README", data: "readme\n"},
		{path: "ws/outlink", link: "../outside"},
		{path: "outside", dir: true, canary: true},
		{path: "outside/secret", data: "askops-canary\n", canary: true},
		{path: "home", dir: true, canary: true},
		{path: "home/.bashrc", data: "# askops canary\n", canary: true},
		{path: "tmp", dir: true},
	}
}

// sandboxPrograms are the real programs in the sandbox's bin; every other
// name is a stub. These are the ones whose writes, deletes or the programs
// they start matter.
var sandboxPrograms = []string{
	"bash", "sh", "dash", "env", "find", "xargs", "timeout", "nice", "nohup",
	"rm", "rmdir", "unlink", "mv", "cp", "ln", "mkdir", "touch", "tee", "dd", "truncate", "chmod", "install",
	"cat", "head", "tail", "sort", "tr", "wc", "cut", "uniq", "ls", "basename", "dirname", "readlink",
	"realpath", "mktemp", "base64", "grep", "sed", "awk", "perl", "make",
}

// traceSyscalls are the system calls strace records: what starts a
// program, what writes, deletes, links or changes a file, what changes
// the directory relative names resolve against, and what reaches a
// network.
const traceSyscalls = "execve,execveat," +
	"open,openat,openat2,creat," +
	"unlink,unlinkat,rmdir,rename,renameat,renameat2," +
	"mkdir,mkdirat,mknod,mknodat,symlink,symlinkat,link,linkat," +
	"truncate,ftruncate,chmod,fchmod,fchmodat,chown,fchown,lchown,fchownat," +
	"utimensat,utime,utimes,futimesat," +
	"chdir,fchdir,clone,clone3,fork,vfork," +
	"connect,sendto,sendmsg,sendmmsg"

// sandboxSetup is pid 1 of the namespaces: it makes every mount read-only,
// mounts a tmpfs on the temporary directory and builds the layout there,
// drops every capability, then runs one command per request. Arguments:
// the sandbox root, the tmpfs mount point, the timeout in seconds, the
// script that builds the layout, the canary paths.
//
// A request is a NUL-terminated record: R (reset the sandbox first) or N,
// then the command. The answer is a line
// "@@askops-run RC TRACE_BYTES STDERR_BYTES FINGERPRINT_BYTES" followed by
// those bytes. The driver runs with LC_ALL=C so ${#x} counts bytes;
// commands get C.UTF-8.
const sandboxSetup = `
set -u
H=$1 M=$2 T=$3 layout=$4 canaries=$5 programs=$6 syscalls=$7 loop=$8
fail() { printf '@@askops-error %s\n' "$*"; exit 1; }
while read -r _ _ _ _ mp _; do
	printf -v mp '%b' "$mp"
	/usr/bin/mount -o remount,bind,ro "$mp" 2>/dev/null || fail "cannot make the mount $mp read-only"
done </proc/self/mountinfo
/usr/bin/mount -t proc proc /proc || fail "cannot mount /proc"
/usr/bin/mount -t tmpfs -o size=256m,mode=0755 tmpfs "$M" || fail "cannot mount a tmpfs on $M"
/usr/bin/mkdir -p "$H/.tpl/bin" "$H/.tpl/stub" || fail "cannot make $H"
cd "$H/.tpl" || fail "cannot enter $H/.tpl"
eval "$layout" || fail "cannot build the layout"
real=()
for n in $programs; do
	for d in /usr/bin /bin /usr/sbin /sbin; do
		if [[ -x $d/$n ]]; then real+=("$d/$n"); break; fi
	done
done
/usr/bin/ln -s -t "$H/.tpl/bin" "${real[@]}" || fail "cannot link the programs"
/usr/bin/ln -s /usr/bin/true "$H/.tpl/stub/run" || fail "cannot make the stub"
/usr/bin/mount --bind "$H/.tpl" "$H/.tpl" && /usr/bin/mount -o remount,bind,ro "$H/.tpl" || fail "cannot make the template read-only"
cd /
exec /usr/bin/setpriv --bounding-set=-all --inh-caps=-all --no-new-privs \
	/usr/bin/bash --norc --noprofile -c "$loop" askops-sandbox "$H" "$M" "$T" "$canaries" "$syscalls"
`

// sandboxLoop runs the commands, without capabilities (see sandboxSetup).
const sandboxLoop = `
set -u
H=$1 M=$2 T=$3 canaries=$4 syscalls=$5
export -n LC_ALL
LC_ALL=C
shopt -s nullglob dotglob
ulimit -u 512 -f 131072 || { printf '@@askops-error cannot set limits\n'; exit 1; }
reset() {
	/usr/bin/chmod -R u+rwX "$M" 2>/dev/null
	/usr/bin/find "$M" -mindepth 1 -maxdepth 1 ! -path "$H" -exec /usr/bin/rm -rf {} + || return 1
	/usr/bin/find "$H" -mindepth 1 -maxdepth 1 ! -path "$H/.tpl" -exec /usr/bin/rm -rf {} + || return 1
	/usr/bin/mkdir -p "$H/.stubs" || return 1
	/usr/bin/cp -a "$H/.tpl/." "$H/" || return 1
	: >"$H/.trace" && : >"$H/.err" && printf 'askops-canary\n' >"$M/askops-canary"
}
fingerprint() {
	local f c l out=
	for f in $canaries "$H" "$M" "$M/askops-canary"; do
		if [[ -L $f ]]; then
			out+="$f -> link"$'\n'
		elif [[ -d $f ]]; then
			l=("$f"/*)
			out+="$f/: ${l[*]##*/}"$'\n'
		elif [[ -f $f ]]; then
			c=
			IFS= read -r -d '' c <"$f"
			printf -v c '%q' "$c"
			out+="$f: $c"$'\n'
		else
			out+="$f: missing"$'\n'
		fi
	done
	FP=$out
}
reset || { printf '@@askops-error cannot set up the sandbox\n'; exit 1; }
fingerprint
printf '@@askops-ready %d\n%s' "${#FP}" "$FP"
while IFS= read -r -d '' req; do
	names=${req%%$'\n'*} command=${req#*$'\n'}
	if [[ ${names:0:1} == R ]]; then
		kill -KILL -1 2>/dev/null
		reset || { printf '@@askops-error cannot reset the sandbox\n'; exit 1; }
	fi
	if [[ -n ${names:1} ]]; then
		/usr/bin/perl -e '$t = shift; $d = shift; -e "$d/$_" or symlink($t, "$d/$_") or die "$_: $!" for @ARGV' \
			"$H/stub/run" "$H/.stubs" ${names:1} || { printf '@@askops-error cannot make the stubs\n'; exit 1; }
	fi
	cd "$H/ws" || { printf '@@askops-error no workspace\n'; exit 1; }
	LC_ALL=C.UTF-8 /usr/bin/timeout -k 2 "$T" /usr/bin/strace --seccomp-bpf -f -qq -y -s 65536 -e "trace=$syscalls" -o "$H/.trace" \
		/usr/bin/bash -c "$command" </dev/null >/dev/null 2>"$H/.err"
	rc=$?
	kill -KILL -1 2>/dev/null
	cd /
	fingerprint
	tr= er=
	IFS= read -r -d '' tr <"$H/.trace"
	IFS= read -r -n 2000 -d '' er <"$H/.err"
	printf '@@askops-run %d %d %d %d\n%s%s%s' "$rc" "${#tr}" "${#er}" "${#FP}" "$tr" "$er" "$FP"
done
`

// execSandbox is one running sandbox: its driver and where it lives.
type execSandbox struct {
	root    string            // H: the same path outside and inside
	ws      string            // H/ws
	tmp     string            // H/tmp: TMPDIR
	stub    string            // H/stub/run: what a stubbed name runs
	links   map[string]string // the layout's symlinks: absolute path -> target as written
	timeout time.Duration     // per command, in the sandbox
	base    string            // the canaries' fingerprint after a reset

	cmd     *exec.Cmd
	in      io.WriteCloser
	answers chan sandboxAnswer
	dirty   bool            // the last command wrote something: reset before the next
	stubbed map[string]bool // names that have a stub in .stubs
	stopped sync.Once
}

// sandboxRun is what one command did in the sandbox.
type sandboxRun struct {
	rc          int
	trace       string // strace's output
	stderr      string // the first 2000 bytes of the command's stderr
	fingerprint string // the canaries after the command
}

type sandboxAnswer struct {
	run sandboxRun
	err error
}

// sandboxUser is who the sandbox's root is outside: nobody when the tests
// run as root (the sandbox must not hold root's files), else the user
// running them.
func sandboxUser() (uid, gid int) {
	if os.Getuid() == 0 {
		return 65534, 65534
	}
	return os.Getuid(), os.Getgid()
}

// newExecSandbox starts a sandbox; it is stopped when t ends. A missing
// strace, unshare refused by the kernel, or a driver that cannot set the
// sandbox up fails t: the execution differential never skips.
func newExecSandbox(t testing.TB) *execSandbox {
	t.Helper()
	for _, p := range []string{"/usr/bin/strace", "/usr/bin/setpriv", "/usr/bin/timeout", "/usr/bin/mount", "/usr/bin/bash"} {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("the execution sandbox needs %s (.ci/run installs strace; setpriv and mount come with util-linux): %v", p, err)
		}
	}
	top, err := filepath.EvalSymlinks(os.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	root, err := os.MkdirTemp(top, "askops-exec-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(root) })
	s := &execSandbox{
		root:    root,
		ws:      filepath.Join(root, "ws"),
		tmp:     filepath.Join(root, "tmp"),
		stub:    filepath.Join(root, "stub", "run"),
		links:   map[string]string{},
		timeout: 3 * time.Second,
		answers: make(chan sandboxAnswer, 1),
		stubbed: map[string]bool{},
	}
	// The same layout outside, where the policy resolves links and looks
	// for directories.
	var script strings.Builder
	var canaries []string
	for _, e := range sandboxLayout() {
		p := filepath.Join(root, e.path)
		q := shellQuote(e.path)
		mode := e.mode
		switch {
		case e.dir:
			err = os.Mkdir(p, 0o755)
			fmt.Fprintf(&script, "/usr/bin/mkdir %s || exit 1\n", q)
		case e.link != "":
			err = os.Symlink(e.link, p)
			s.links[p] = e.link
			fmt.Fprintf(&script, "/usr/bin/ln -s %s %s || exit 1\n", shellQuote(e.link), q)
		default:
			if mode == 0 {
				mode = 0o644
			}
			err = os.WriteFile(p, []byte(e.data), mode)
			fmt.Fprintf(&script, "printf %%s %s >%s && /usr/bin/chmod %o %s || exit 1\n", shellQuote(e.data), q, mode, q)
		}
		if err != nil {
			t.Fatal(err)
		}
		if e.canary {
			canaries = append(canaries, p)
		}
	}
	uid, gid := sandboxUser()
	secs := int(s.timeout / time.Second)
	cmd := exec.Command("/usr/bin/bash", "--norc", "--noprofile", "-c", sandboxSetup, "askops-sandbox",
		root, top, strconv.Itoa(secs), script.String(), strings.Join(canaries, " "),
		strings.Join(sandboxPrograms, " "), traceSyscalls, sandboxLoop)
	cmd.Dir = "/"
	cmd.Env = []string{
		"PATH=" + filepath.Join(root, "bin") + ":" + filepath.Join(root, ".stubs"),
		"HOME=" + filepath.Join(root, "home"),
		"TMPDIR=" + s.tmp,
		"LC_ALL=C.UTF-8",
		"TERM=dumb",
		"USER=askops",
		// Every name bash does not find runs the stub under that name,
		// so strace sees it start; nested bash imports the function.
		"BASH_FUNC_command_not_found_handle%%=() { exec -a \"$1\" " + s.stub + " \"${@:2}\"; }",
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags: syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS | syscall.CLONE_NEWNET |
			syscall.CLONE_NEWPID | syscall.CLONE_NEWIPC | syscall.CLONE_NEWUTS,
		UidMappings:                []syscall.SysProcIDMap{{ContainerID: 0, HostID: uid, Size: 1}},
		GidMappings:                []syscall.SysProcIDMap{{ContainerID: 0, HostID: gid, Size: 1}},
		GidMappingsEnableSetgroups: false,
		Credential:                 &syscall.Credential{Uid: 0, Gid: 0, NoSetGroups: true},
		Pdeathsig:                  syscall.SIGKILL,
	}
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &limitedWriter{w: &stderr, n: 4096}
	if err := cmd.Start(); err != nil {
		t.Fatalf("cannot start the execution sandbox (user, mount, network and pid namespaces): %v", err)
	}
	s.cmd, s.in = cmd, in
	t.Cleanup(s.stop)
	r := bufio.NewReaderSize(out, 1<<16)
	ready := make(chan error, 1)
	go func() {
		header, err := r.ReadString('\n')
		if err == nil && !strings.HasPrefix(header, "@@askops-ready ") {
			err = fmt.Errorf("%s", strings.TrimSpace(header))
		}
		if err == nil {
			var fp []byte
			fp, err = readSized(r, strings.TrimPrefix(strings.TrimSpace(header), "@@askops-ready "))
			s.base = string(fp)
		}
		ready <- err
		if err != nil {
			return
		}
		for {
			run, err := readAnswer(r)
			s.answers <- sandboxAnswer{run: run, err: err}
			if err != nil {
				return
			}
		}
	}()
	select {
	case err := <-ready:
		if err != nil {
			s.stop()
			t.Fatalf("the execution sandbox did not start: %v (stderr %q)", err, stderr.String())
		}
	case <-time.After(60 * time.Second):
		s.stop()
		t.Fatalf("the execution sandbox did not start within a minute (stderr %q)", stderr.String())
	}
	return s
}

func (s *execSandbox) stop() {
	s.stopped.Do(func() {
		_ = s.in.Close()
		_ = s.cmd.Process.Kill()
		_ = s.cmd.Wait()
	})
}

// readAnswer reads one "@@askops-run" answer.
func readAnswer(r *bufio.Reader) (sandboxRun, error) {
	var run sandboxRun
	header, err := r.ReadString('\n')
	if err != nil {
		return run, fmt.Errorf("the sandbox stopped: %w", err)
	}
	f := strings.Fields(header)
	if len(f) != 5 || f[0] != "@@askops-run" {
		return run, fmt.Errorf("the sandbox answered %q", strings.TrimSpace(header))
	}
	if run.rc, err = strconv.Atoi(f[1]); err != nil {
		return run, err
	}
	var parts [3][]byte
	for i := range parts {
		if parts[i], err = readSized(r, f[2+i]); err != nil {
			return run, err
		}
	}
	run.trace, run.stderr, run.fingerprint = string(parts[0]), string(parts[1]), string(parts[2])
	return run, nil
}

func readSized(r *bufio.Reader, size string) ([]byte, error) {
	n, err := strconv.Atoi(size)
	if err != nil || n < 0 {
		return nil, fmt.Errorf("bad size %q", size)
	}
	b := make([]byte, n)
	_, err = io.ReadFull(r, b)
	return b, err
}

// run runs command in the sandbox (in bash -c, in the workspace, stdin
// /dev/null), after a reset if the last command changed anything.
func (s *execSandbox) run(ctx context.Context, command string) (sandboxRun, error) {
	if strings.ContainsRune(command, 0) {
		return sandboxRun{}, errors.New("a command with NUL cannot be run in bash -c")
	}
	flag := "N"
	if s.dirty {
		flag = "R"
		clear(s.stubbed) // a reset removes the stubs
	}
	var names []string
	for _, n := range commandNames(command) {
		if !s.stubbed[n] && !slices.Contains(sandboxPrograms, n) {
			s.stubbed[n] = true
			names = append(names, n)
		}
	}
	if _, err := io.WriteString(s.in, flag+strings.Join(names, " ")+"\n"+command+"\x00"); err != nil {
		return sandboxRun{}, fmt.Errorf("the sandbox stopped: %w", err)
	}
	// The driver's own timeout stops the command; this one stops a driver
	// that no longer answers (a reset that hangs), and is not a measure.
	limit := time.NewTimer(s.timeout + 2*time.Minute)
	defer limit.Stop()
	select {
	case a := <-s.answers:
		if a.err != nil {
			return a.run, a.err
		}
		// Until the caller has read the trace, assume the worst.
		s.dirty = true
		return a.run, nil
	case <-limit.C:
		s.stop()
		return sandboxRun{}, errors.New("the sandbox's driver did not answer")
	case <-ctx.Done():
		s.stop()
		return sandboxRun{}, ctx.Err()
	}
}

type limitedWriter struct {
	mu sync.Mutex
	w  io.Writer
	n  int
}

func (l *limitedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.n > 0 {
		k := min(len(p), l.n)
		_, _ = l.w.Write(p[:k])
		l.n -= k
	}
	return len(p), nil
}

func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// canaryChanges names the canary lines that differ from the baseline.
func canaryChanges(base, now string) []string {
	if base == now {
		return nil
	}
	was := strings.Split(base, "\n")
	var out []string
	for _, l := range strings.Split(now, "\n") {
		if !slices.Contains(was, l) {
			out = append(out, l)
		}
	}
	for _, l := range was {
		name, _, _ := strings.Cut(l, ": ")
		if name != "" && !strings.Contains(now, name+": ") && !strings.Contains(now, name+"/: ") && !strings.Contains(now, name+" -> ") {
			out = append(out, l+" (gone)")
		}
	}
	return out
}

// commandNames are the words of command that could name a program: each
// gets a stub, so a program that looks a name up in PATH before it starts
// it (dash, make, env -i's bash) finds one, and strace sees it start. A
// name made at run time still reaches command_not_found_handle in bash.
func commandNames(command string) []string {
	var names []string
	seen := map[string]bool{}
	for _, f := range strings.FieldsFunc(command, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("._+-", r))
	}) {
		f = strings.TrimLeft(f, ".-+")
		// After a backslash the first letter may be an escape ($'\tcurl').
		for _, n := range []string{f, f[min(1, len(f)):]} {
			if n == "" || len(n) > 100 || seen[n] || len(names) >= 5000 {
				continue
			}
			seen[n] = true
			names = append(names, n)
		}
	}
	return names
}
