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
//     (nobody when the tests run as root), so a file of this machine it
//     could write is one anybody may write;
//   - mount namespace: every mount is made read-only, a fresh tmpfs hides
//     the temporary directory, and /proc is the sandbox's own; before any
//     command runs every capability is dropped (empty bounding set,
//     no_new_privs), so no command can undo a mount;
//   - network namespace: only a loopback that is down, so nothing connects
//     anywhere (and strace shows that it tried);
//   - pid, IPC and UTS namespaces: a kill reaches only the sandbox; every
//     command runs in a process group of its own, killed when it ends;
//   - a timeout per command, a file size and process limit, a bounded
//     tmpfs.
//
// Programs are real but harmless: PATH is the sandbox's bin, holding real
// shells, find, xargs, coreutils, sed, awk, perl and make (where what a
// command writes, deletes or starts depends on the real program), then
// .stubs, where every word of the command that could name a program is a
// stub (/usr/bin/true under that name). A name made at run time reaches
// command_not_found_handle, exported so nested bash has it too, which
// starts the stub under that name. So whatever bash or a program it
// starts (find -exec, xargs, env, dash, make) would run, strace sees
// start.
//
// strace runs once per sandbox, as its pid 1, and follows everything: the
// runner (a bash reading one command at a time from the test) and every
// command it starts in the background. The runner answers each command
// with the part of the trace written while it ran; the command's calls are
// those of the process the runner started and its descendants (the trace
// reader follows clone, fork and vfork), the runner's own are not.
//
// Layout: the sandbox root H (a fresh directory under the temporary
// directory, the same path outside, where the policy resolves links, and
// inside) holds the workspace ws (with .git, src/glink -> ../.git, .env,
// out/, outlink -> ../outside), and outside the workspace the canaries:
// outside/secret, home/.bashrc (HOME), H and the tmpfs itself. After every
// command the runner fingerprints the canaries (content and directory
// listings); a change no recorded call explains is reported too.

// sandboxEntry is one file, directory or symlink of the sandbox's layout.
type sandboxEntry struct {
	path   string // relative to the sandbox root
	dir    bool
	link   string // a symlink's target
	data   string // a file's content
	mode   os.FileMode
	canary bool // fingerprinted after every command
	// secret: a read_file rule of the differential's configurations
	// denies or asks for it (execution_test.go): where one applies, an
	// allowed command must not open it.
	secret bool
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
		// A diff of README, which patch fails to apply to out/x: it
		// then writes out/x.orig and out/x.rej beside it, for real.
		{path: "ws/out/p.diff", data: "--- a/README\n+++ b/README\n@@ -1 +1 @@\n-readme\n+patched\n"},
		{path: "ws/.env", data: "SECRET=askops-canary\n", canary: true, secret: true},
		{path: "ws/secrets", dir: true},
		{path: "ws/secrets/token", data: "askops-canary-token\n", secret: true},
		{path: "ws/README", data: "readme\n"},
		{path: "ws/package.json", data: "{\"name\": \"ws\", \"version\": \"1.0.0\"}\n"},
		{path: "ws/outlink", link: "../outside"},
		{path: "outside", dir: true, canary: true},
		{path: "outside/secret", data: "askops-canary\n", canary: true},
		{path: "home", dir: true, canary: true},
		{path: "home/.bashrc", data: "# askops canary\n", canary: true},
		{path: "home/.npm", dir: true}, // npm's cache: npm makes it if it is missing
		{path: "tmp", dir: true},
	}
}

// sandboxPrograms are the real programs in the sandbox's bin; every other
// name is a stub. These are the ones whose writes, deletes, reads or the
// programs they start matter.
var sandboxPrograms = []string{
	"bash", "sh", "dash", "env", "find", "xargs", "timeout", "nice", "nohup",
	"rm", "rmdir", "unlink", "shred", "mv", "cp", "ln", "mkdir", "touch", "tee", "dd", "truncate", "chmod", "install",
	"cat", "head", "tail", "sort", "tr", "wc", "cut", "uniq", "ls", "basename", "dirname", "readlink",
	"realpath", "mktemp", "base64", "grep", "sed", "awk", "perl", "make", "npm", "node", "ed", "sqlite3",
	// Readers (coreutils, diffutils, tar, gzip, util-linux, libc-bin:
	// every Debian has them), whose opens of protected files matter.
	"diff", "cmp", "comm", "paste", "join", "nl", "od", "tac", "rev", "fold", "md5sum", "sha256sum", "cksum",
	"tar", "gzip", "zcat", "split", "csplit", "expand", "pr", "fmt", "shuf", "tsort", "iconv", "sleep", "kill",
	// Tools with options that write or load files (.ci/run installs the
	// ones a minimal Debian lacks); there is no network in the sandbox,
	// but what they open before connecting is seen.
	"curl", "wget", "zip", "unzip", "patch", "xxd", "openssl", "gpg", "ssh-keygen", "file",
	// git writes its repository's files and runs what its config names
	// (execution_test.go: its own state, and what it may leave there).
	"git",
	// rsync and the compressors other than gzip: options that write,
	// read lists of names, or run a remote shell.
	"rsync", "xz", "bzip2", "zstd", "lz4",
	// The ssh tools (no network: what they run and write on this side).
	"ssh", "scp", "sftp", "jq",
	// Wrappers that run their command (util-linux).
	"prlimit", "setarch", "linux64", "setpriv",
	// Archivers that extract the names their archive holds (cpio reads
	// the layout's tar too; ar its own out/l.a).
	"cpio", "pax", "ar",
}

// traceSyscalls are the system calls strace records: what starts a
// program, what opens a file (to read or write it), what deletes, links
// or changes a file, what changes the directory relative names resolve
// against, and what reaches a network.
const traceSyscalls = "execve,execveat," +
	"open,openat,openat2,creat," +
	"unlink,unlinkat,rmdir,rename,renameat,renameat2," +
	"mkdir,mkdirat,mknod,mknodat,symlink,symlinkat,link,linkat," +
	"truncate,ftruncate,chmod,fchmod,fchmodat,chown,fchown,lchown,fchownat," +
	"utimensat,utime,utimes,futimesat," +
	"chdir,fchdir,clone,clone3,fork,vfork," +
	"connect,sendto,sendmsg,sendmmsg"

// sandboxSetup is pid 1 of the namespaces until it becomes strace: it
// makes every mount read-only, mounts a tmpfs on the temporary directory,
// builds the layout's template there (read-only), drops every capability
// and starts strace on the runner. Arguments: the sandbox root, the tmpfs
// mount point, the timeout in seconds, the script that builds the layout,
// the real programs, the system calls to trace, the runner.
const sandboxSetup = `
set -u
H=$1 M=$2 T=$3 layout=$4 programs=$5 syscalls=$6 runner=$7 helper=$8
fail() { printf '@@askops-error %s\n' "$*"; exit 1; }
while read -r _ _ _ _ mp _; do
	printf -v mp '%b' "$mp"
	/usr/bin/mount -o remount,bind,ro "$mp" 2>/dev/null || fail "cannot make the mount $mp read-only"
done </proc/self/mountinfo
/usr/bin/mount -t proc proc /proc || fail "cannot mount /proc"
/usr/bin/mount -t tmpfs -o size=1g,mode=0755 tmpfs "$M" || fail "cannot mount a tmpfs on $M"
/usr/bin/mkdir -p "$H/.tpl/bin" "$H/.tpl/stub" || fail "cannot make $H"
cd "$H/.tpl" || fail "cannot enter $H/.tpl"
eval "$layout" || fail "cannot build the layout"
# One commit, so what git reads and writes (log, diff, archive, checkout,
# reset) does it for real.
(cd ws && HOME=/nonexistent GIT_CONFIG_NOSYSTEM=1 /usr/bin/git add README src/main.go package.json &&
	HOME=/nonexistent GIT_CONFIG_NOSYSTEM=1 /usr/bin/git -c user.name=askops -c user.email=askops@example.com \
		commit -q --no-verify -m layout &&
	HOME=/nonexistent GIT_CONFIG_NOSYSTEM=1 /usr/bin/git branch topic) || fail "cannot commit the layout with git"
# An archive and a zip of the workspace's files, so extracting, listing
# and testing them (and what tar and zip start to do it) happen for real.
(cd ws && /usr/bin/tar -cf out/a.tar README && /usr/bin/zip -q out/a.zip src/main.go && /usr/bin/ar rc out/l.a README) ||
	fail "cannot make the layout's archives"
real=()
for n in $programs; do
	found=
	for d in /usr/bin /bin /usr/sbin /sbin; do
		if [[ -x $d/$n ]]; then real+=("$d/$n"); found=1; break; fi
	done
	# A missing program would run as a stub and pass what it does
	# unseen: the differential fails instead (.ci/run installs them).
	[[ $found ]] || fail "the program $n is not installed (the execution differential runs it for real)"
done
/usr/bin/ln -s -t "$H/.tpl/bin" "${real[@]}" || fail "cannot link the programs"
/usr/bin/ln -s /usr/bin/true "$H/.tpl/stub/run" || fail "cannot make the stub"
/usr/bin/mount --bind "$H/.tpl" "$H/.tpl" && /usr/bin/mount -o remount,bind,ro "$H/.tpl" || fail "cannot make the template read-only"
/usr/bin/mkfifo "$H/.fifo" "$H/.hreq" "$H/.hres" && : >"$H/.trace" && : >"$H/.mark" && : >"$H/.err" || fail "cannot make the runner's files"
cd /
/usr/bin/setpriv --bounding-set=-all --inh-caps=-all --no-new-privs \
	/usr/bin/bash --norc --noprofile -c "$helper" askops-sandbox "$H" "$M" </dev/null >/dev/null &
helperpid=$!
# strace alone keeps CAP_SYS_PTRACE: it reads the calls of a process that
# made itself non-dumpable (gpg, gpg-agent). The runner, and so every
# command, holds no capability: the second setpriv drops the bounding set,
# which takes CAP_SETPCAP (without it setpriv left CAP_SYS_PTRACE in place,
# silently; the harness's self-test reads CapEff).
exec /usr/bin/setpriv --bounding-set=-all,+sys_ptrace,+setpcap --inh-caps=-all --no-new-privs \
	/usr/bin/strace --seccomp-bpf -f -qq -y -s 65536 -e "trace=$syscalls" -o "$H/.trace" \
	/usr/bin/setpriv --bounding-set=-all --inh-caps=-all --no-new-privs \
	/usr/bin/bash --norc --noprofile -c "$runner" askops-sandbox "$H" "$M" "$T" "$helperpid"
`

// sandboxRunner reads requests, runs each command, and answers. A
// request is a NUL-terminated record: a flag (N: run; R: reset the
// sandbox first; F: reset it and its stubs first; P: only make the
// stubs), the names to make stubs for (space-separated), a newline, the
// command. The answer is a line "@@askops-run RC PID" once the command
// and everything in its process group have ended and the runner has
// touched .mark, so the trace holds all of it. The test reads the trace,
// the command's stderr and the canaries itself, through the sandbox's
// /proc/PID/root.
const sandboxRunner = `
set -u
H=$1 M=$2 T=$3 helperpid=$4
export -n LC_ALL
LC_ALL=C
set -m # every command in a process group of its own
ulimit -u 512 -f 16384 || { printf '@@askops-error cannot set limits\n'; exit 1; }
exec 9<>"$H/.fifo" 5<>"$H/.hreq" 6<>"$H/.hres" || { printf '@@askops-error cannot open the fifos\n'; exit 1; }
helper() {
	local ok=
	printf '%s\n' "$*" >&5 && read -r ok <&6 && [[ $ok == ok ]] || { printf '@@askops-error the helper failed: %s\n' "$1"; exit 1; }
}
# reap kills what a command left running outside its process group (a
# daemon in a session of its own: gpg starts gpg-agent; rsync's receiver
# finishing), and waits until every such process is gone, so none of its
# calls land in the next command's part of the trace. Only the sandbox's
# own processes are spared: strace (1), this runner and the helper.
reap() {
	local p n left
	for ((n = 0; n < 2000; n++)); do
		left=
		for p in /proc/[0-9]*; do
			p=${p#/proc/}
			[[ $p == 1 || $p == "$$" || $p == "$helperpid" ]] && continue
			kill -KILL "$p" 2>/dev/null && left=1
		done
		[[ -z $left ]] && return 0
		read -r -t 0.01 -u 9 # nobody writes the fifo: a pause while strace reaps them
	done
	return 1
}
helper F
printf '@@askops-ready\n'
while IFS= read -r -d '' req; do
	names=${req%%$'\n'*} command=${req#*$'\n'}
	if [[ ${names:0:1} != N || -n ${names:1} ]]; then
		helper "${names:0:1}" ${names:1}
	fi
	if [[ ${names:0:1} == P ]]; then
		: >"$H/.mark"
		printf '@@askops-run 0 0\n'
		continue
	fi
	cd "$H/ws" || { printf '@@askops-error no workspace\n'; exit 1; }
	LC_ALL=C.UTF-8 /usr/bin/bash -c "$command" </dev/null >/dev/null 2>"$H/.err" 5<&- 6<&- 9<&- &
	pid=$!
	{ read -t "$T" -u 9; kill -TERM -- "-$pid"; read -t 2 -u 9; kill -KILL -- "-$pid"; } 2>/dev/null 5<&- 6<&- &
	dog=$!
	wait "$pid"
	rc=$?
	kill -KILL -- "-$dog" "-$pid" 2>/dev/null
	wait "$dog" 2>/dev/null
	reap || { printf '@@askops-error the processes of %q outlive it\n' "$command"; exit 1; }
	cd /
	: >"$H/.mark"
	printf '@@askops-run %d %d\n' "$rc" "$pid"
done
`

// sandboxHelper resets the sandbox and makes stubs for the runner,
// outside strace (its calls are nobody's, and tracing them only costs).
// A request is a line: N (nothing), R (reset the layout), F (reset it and
// the stubs) or P (nothing), then the names to make stubs for; the answer
// is "ok".
const sandboxHelper = `
set -u
H=$1 M=$2
shopt -s nullglob dotglob
exec 5<>"$H/.hreq" 6<>"$H/.hres" || exit 1
reset() {
	local f junk=()
	for f in "$M"/* "$H"/*; do
		case $f in
		"$H" | "$H/.tpl" | "$H/.stubs" | "$H/.trace" | "$H/.fifo" | "$H/.hreq" | "$H/.hres" | "$H/.mark" | "$H/.err") ;;
		*) junk+=("$f") ;;
		esac
	done
	[[ ${1-} == full ]] && junk+=("$H/.stubs")
	if ((${#junk[@]})) && ! /usr/bin/rm -rf "${junk[@]}" 2>/dev/null; then
		/usr/bin/chmod -R u+rwX "${junk[@]}" 2>/dev/null
		/usr/bin/rm -rf "${junk[@]}" || return 1
	fi
	[[ -d $H/.stubs ]] || /usr/bin/mkdir "$H/.stubs" || return 1
	/usr/bin/cp -a "$H/.tpl/." "$H/" || return 1
	printf 'askops-canary\n' >"$M/askops-canary" && : >"$H/.err"
}
while read -r how names <&5; do
	case $how in
	R) reset ;;
	F) reset full ;;
	esac && if [[ -n $names ]]; then
		/usr/bin/perl -e '$t = shift; $d = shift; -e "$d/$_" or symlink($t, "$d/$_") or die "$_: $!" for @ARGV' \
			"$H/stub/run" "$H/.stubs" $names
	fi
	if (($? == 0)); then echo ok >&6; else echo failed >&6; fi
done
`

// execSandbox is one running sandbox: its runner and where it lives.
type execSandbox struct {
	root     string            // H: the same path outside and inside
	ws       string            // H/ws
	tmp      string            // H/tmp: TMPDIR
	stub     string            // H/stub/run: what a stubbed name runs
	links    map[string]string // the layout's symlinks: absolute path -> target as written
	timeout  time.Duration     // per command, in the sandbox
	script   string            // builds the layout
	canaries []string
	secrets  []string // the layout's files read_file rules protect (absolute)
	top      string   // the temporary directory, where the tmpfs goes

	proc *sandboxProcess
	// base is the canaries' fingerprint after a reset.
	base string
	// dirty is what the last command may have changed: what to reset
	// before the next.
	dirty   resetKind
	stubbed map[string]bool // names that have a stub in .stubs
	traced  int             // bytes of trace this strace has written
	// forks and earlier are this strace's processes as the trace reader
	// has placed them (see traceReader).
	forks   map[int]int
	earlier map[int]bool
}

// sandboxProcess is the namespaces' pid 1 and the pipes to the runner.
type sandboxProcess struct {
	inside  string   // /proc/PID/root: the sandbox's files, seen from here
	trace   *os.File // strace's output, read as it grows
	cmd     *exec.Cmd
	in      io.WriteCloser
	answers chan sandboxAnswer
	stderr  *limitedWriter
	stopped sync.Once
}

// resetKind is what the sandbox needs before the next command.
type resetKind int

const (
	resetNone      resetKind = iota
	resetWorkspace           // the layout is rebuilt (the workspace, the canaries, HOME, TMPDIR)
	resetAll                 // the stubs too
)

// maxTrace bounds the trace one strace writes (it lives in the
// sandbox's tmpfs): past it the sandbox is started afresh.
const maxTrace = 256 << 20

// sandboxRun is what one command did in the sandbox.
type sandboxRun struct {
	rc          int
	pid         int    // the command's bash, in the sandbox's pid namespace
	trace       string // strace's output while it ran (other processes' too)
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

// newExecSandbox starts a sandbox whose runner stops each command after
// timeout; it is stopped when t ends. A missing strace, namespaces the
// kernel refuses, or a sandbox that cannot be set up fails t: the
// execution differential never skips.
func newExecSandbox(t testing.TB, timeout time.Duration) *execSandbox {
	t.Helper()
	for _, p := range []string{"/usr/bin/strace", "/usr/bin/setpriv", "/usr/bin/mount", "/usr/bin/mkfifo", "/usr/bin/bash", "/usr/bin/perl"} {
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
		top:     top,
		ws:      filepath.Join(root, "ws"),
		tmp:     filepath.Join(root, "tmp"),
		stub:    filepath.Join(root, "stub", "run"),
		links:   map[string]string{},
		timeout: timeout,
		stubbed: map[string]bool{},
	}
	// The same layout outside, where the policy resolves links and looks
	// for directories.
	var script strings.Builder
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
			s.canaries = append(s.canaries, p)
		}
		if e.secret {
			s.secrets = append(s.secrets, p)
		}
	}
	s.script = script.String()
	if err := s.start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.proc.stop() })
	return s
}

// start starts the sandbox's namespaces, strace and runner, and waits
// until the runner is ready.
func (s *execSandbox) start() error {
	uid, gid := sandboxUser()
	cmd := exec.Command("/usr/bin/bash", "--norc", "--noprofile", "-c", sandboxSetup, "askops-sandbox",
		s.root, s.top, strconv.Itoa(int(s.timeout/time.Second)), s.script,
		strings.Join(sandboxPrograms, " "), traceSyscalls, sandboxRunner, sandboxHelper)
	cmd.Dir = "/"
	cmd.Env = []string{
		"PATH=" + filepath.Join(s.root, "bin") + ":" + filepath.Join(s.root, ".stubs"),
		"HOME=" + filepath.Join(s.root, "home"),
		"TMPDIR=" + s.tmp,
		"LC_ALL=C.UTF-8",
		"TERM=dumb",
		"USER=askops",
		// npm asks its registry whether it is outdated; nothing a command
		// asked for.
		"npm_config_update_notifier=false",
		"npm_config_logs_max=0", // and keeps a log of every run in HOME
		// A name bash does not find runs the stub under that name, so
		// strace sees it start; nested bash imports the function.
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
		return err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	p := &sandboxProcess{cmd: cmd, in: in, answers: make(chan sandboxAnswer, 1), stderr: &limitedWriter{n: 4096}}
	cmd.Stderr = p.stderr
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("cannot start the execution sandbox (user, mount, network and pid namespaces): %w", err)
	}
	r := bufio.NewReaderSize(out, 1<<16)
	ready := make(chan error, 1)
	go func() {
		header, err := r.ReadString('\n')
		if err == nil && header != "@@askops-ready\n" {
			err = fmt.Errorf("%s", strings.TrimSpace(header))
		}
		ready <- err
		if err != nil {
			return
		}
		for {
			run, err := readAnswer(r)
			p.answers <- sandboxAnswer{run: run, err: err}
			if err != nil {
				return
			}
		}
	}()
	select {
	case err = <-ready:
	case <-time.After(2 * time.Minute):
		err = errors.New("no answer within two minutes")
	}
	if err == nil {
		p.inside = fmt.Sprintf("/proc/%d/root", cmd.Process.Pid)
		p.trace, err = os.Open(p.inside + filepath.Join(s.root, ".trace"))
	}
	if err == nil {
		s.proc = p
		s.base, err = s.fingerprint()
	}
	if err != nil {
		p.stop()
		return fmt.Errorf("the execution sandbox (namespaces, setpriv, mount, strace) did not start: %v (stderr %q)", err, p.stderr.String())
	}
	s.dirty, s.traced = resetNone, 0
	s.forks, s.earlier = map[int]int{}, map[int]bool{}
	clear(s.stubbed)
	return nil
}

func (p *sandboxProcess) stop() {
	p.stopped.Do(func() {
		if p.trace != nil {
			_ = p.trace.Close()
		}
		_ = p.in.Close()
		_ = p.cmd.Process.Kill()
		_ = p.cmd.Wait()
	})
}

// readAnswer reads one "@@askops-run RC PID" answer.
func readAnswer(r *bufio.Reader) (sandboxRun, error) {
	var run sandboxRun
	header, err := r.ReadString('\n')
	if err != nil {
		return run, fmt.Errorf("the sandbox stopped: %w", err)
	}
	f := strings.Fields(header)
	if len(f) != 3 || f[0] != "@@askops-run" {
		return run, fmt.Errorf("the sandbox answered %q", strings.TrimSpace(header))
	}
	if run.rc, err = strconv.Atoi(f[1]); err != nil {
		return run, err
	}
	run.pid, err = strconv.Atoi(f[2])
	return run, err
}

// run runs command in the sandbox (in bash -c, in the workspace, stdin
// /dev/null), after a reset if the last command changed anything. The
// caller reads the trace and sets dirty.
func (s *execSandbox) run(ctx context.Context, command string) (sandboxRun, error) {
	if strings.ContainsRune(command, 0) {
		return sandboxRun{}, errors.New("a command with NUL cannot be run in bash -c")
	}
	if s.traced > maxTrace {
		s.proc.stop()
		if err := s.start(); err != nil {
			return sandboxRun{}, err
		}
	}
	flag := "N"
	switch s.dirty {
	case resetWorkspace:
		flag = "R"
	case resetAll:
		flag = "F"
		clear(s.stubbed) // a full reset removes the stubs
	}
	s.dirty = resetAll // until the caller has read the trace, assume the worst
	run, err := s.request(ctx, flag, s.newNames(command), command)
	s.traced += len(run.trace)
	return run, err
}

// prime makes the stubs for every name in commands at once.
func (s *execSandbox) prime(ctx context.Context, commands []string) error {
	var names []string
	for _, c := range commands {
		names = append(names, s.newNames(c)...)
	}
	for len(names) > 0 {
		n := min(len(names), 2000)
		if _, err := s.request(ctx, "P", names[:n], ""); err != nil {
			return err
		}
		names = names[n:]
	}
	return nil
}

// newNames are the names of command that have no stub yet; they are
// marked as stubbed.
func (s *execSandbox) newNames(command string) []string {
	var names []string
	for _, n := range commandNames(command) {
		if !s.stubbed[n] && !slices.Contains(sandboxPrograms, n) {
			s.stubbed[n] = true
			names = append(names, n)
		}
	}
	return names
}

func (s *execSandbox) request(ctx context.Context, flag string, names []string, command string) (sandboxRun, error) {
	p := s.proc
	if _, err := io.WriteString(p.in, flag+strings.Join(names, " ")+"\n"+command+"\x00"); err != nil {
		return sandboxRun{}, fmt.Errorf("the sandbox stopped: %w (stderr %q)", err, p.stderr.String())
	}
	// The runner's own timeout stops the command; this one stops a
	// sandbox that no longer answers, and is not a measure.
	limit := time.NewTimer(s.timeout + 2*time.Minute)
	defer limit.Stop()
	select {
	case a := <-p.answers:
		if a.err != nil {
			return a.run, fmt.Errorf("%w (stderr %q)", a.err, p.stderr.String())
		}
		return s.collect(a.run)
	case <-limit.C:
		p.stop()
		return sandboxRun{}, errors.New("the sandbox's runner did not answer")
	case <-ctx.Done():
		p.stop()
		return sandboxRun{}, ctx.Err()
	}
}

// collect reads what the command left: the trace written since the last
// answer (it ends with the runner's touch of .mark), the command's stderr
// and the canaries' fingerprint.
func (s *execSandbox) collect(run sandboxRun) (sandboxRun, error) {
	p := s.proc
	b, err := io.ReadAll(p.trace)
	if err != nil {
		return run, err
	}
	run.trace = string(b)
	if !strings.Contains(run.trace, strconv.Quote(filepath.Join(s.root, ".mark"))) {
		return run, fmt.Errorf("the trace does not reach the runner's mark: strace stopped (stderr %q)", p.stderr.String())
	}
	if run.pid == 0 {
		return run, nil // making stubs
	}
	if f, err := os.Open(p.inside + filepath.Join(s.root, ".err")); err == nil {
		b := make([]byte, 2000)
		n, _ := io.ReadFull(f, b)
		run.stderr = string(b[:n])
		_ = f.Close()
	}
	run.fingerprint, err = s.fingerprint()
	return run, err
}

// fingerprint describes the canaries as the sandbox sees them: each
// file's content, each directory's names, each link.
func (s *execSandbox) fingerprint() (string, error) {
	var b strings.Builder
	for _, c := range append(slices.Clone(s.canaries), s.root, s.top, filepath.Join(s.top, "askops-canary")) {
		p := s.proc.inside + c
		fi, err := os.Lstat(p)
		switch {
		case err != nil:
			fmt.Fprintf(&b, "%s: missing\n", c)
		case fi.Mode()&os.ModeSymlink != 0:
			fmt.Fprintf(&b, "%s -> link\n", c)
		case fi.IsDir():
			entries, err := os.ReadDir(p)
			if err != nil {
				return "", err
			}
			var names []string
			for _, e := range entries {
				names = append(names, e.Name())
			}
			fmt.Fprintf(&b, "%s/: %s %v\n", c, strings.Join(names, " "), fi.Mode())
		default:
			data, err := os.ReadFile(p)
			if err != nil {
				fmt.Fprintf(&b, "%s: unreadable %v\n", c, fi.Mode())
				continue
			}
			fmt.Fprintf(&b, "%s: %q %v\n", c, data, fi.Mode())
		}
	}
	return b.String(), nil
}

// limitedWriter keeps the first n bytes written to it.
type limitedWriter struct {
	mu sync.Mutex
	b  strings.Builder
	n  int
}

func (l *limitedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.n > 0 {
		k := min(len(p), l.n)
		l.b.Write(p[:k])
		l.n -= k
	}
	return len(p), nil
}

func (l *limitedWriter) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
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
