package bound

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// envProbe makes the test binary, run as a bounded command, try one way out
// of the bound and print what the kernel answered, a line a try: "NAME:
// ok" when it worked, "NAME: ERROR" when it did not. The tests read those
// lines; the test binary is the command so no tool on the machine (keyctl,
// ipcmk, a C compiler) is needed.
const envProbe = "ASKOPS_BOUND_TEST_PROBE"

// probeSecret is the key the driver leaves in its session keyring (see
// driverSpec.SessionKey) for a bounded command to look for.
const probeSecret = "askops-bound-test-secret"

func probe(what string) int {
	kind, arg, _ := strings.Cut(what, ":")
	say := func(name string, err error) {
		if err == nil {
			fmt.Printf("%s: ok\n", name)
			return
		}
		fmt.Printf("%s: %v\n", name, err)
	}
	switch kind {
	case "keyring":
		id, err := unix.RequestKey("user", probeSecret, "", 0)
		if err == nil {
			buf := make([]byte, 256)
			n, rerr := unix.KeyctlBuffer(unix.KEYCTL_READ, id, buf, 0)
			if rerr == nil {
				fmt.Printf("secret read: %s\n", buf[:n])
			}
		}
		say("request_key", err)
		_, err = unix.AddKey("user", "askops-bound-test-planted", []byte("planted"), unix.KEY_SPEC_SESSION_KEYRING)
		say("add_key", err)
	case "ipc":
		key, _ := strconv.Atoi(arg)
		_, _, e := syscall.RawSyscall(syscall.SYS_MSGGET, uintptr(key), 0, 0)
		say("msgget", errnoErr(e))
	case "sockets":
		for _, f := range []struct {
			name      string
			domain, t int
		}{
			{"inet", unix.AF_INET, unix.SOCK_STREAM},
			{"inet6", unix.AF_INET6, unix.SOCK_STREAM},
			{"netlink", unix.AF_NETLINK, unix.SOCK_RAW},
			{"vsock", unix.AF_VSOCK, unix.SOCK_STREAM},
			{"packet", unix.AF_PACKET, unix.SOCK_DGRAM},
			{"alg", unix.AF_ALG, unix.SOCK_SEQPACKET},
		} {
			fd, err := unix.Socket(f.domain, f.t|unix.SOCK_CLOEXEC, 0)
			if err == nil {
				unix.Close(fd)
			}
			say("socket "+f.name, err)
		}
	case "open":
		for _, p := range strings.Split(arg, ",") {
			fd, err := unix.Open(p, unix.O_RDONLY|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
			if err == nil {
				unix.Close(fd)
			}
			say("open "+p, err)
		}
	case "core":
		var r unix.Rlimit
		if err := unix.Getrlimit(unix.RLIMIT_CORE, &r); err != nil {
			say("getrlimit", err)
			return 1
		}
		fmt.Printf("core limit: %d %d\n", r.Cur, r.Max)
		say("raise core limit", unix.Setrlimit(unix.RLIMIT_CORE, &unix.Rlimit{Cur: 1 << 20, Max: 1 << 20}))
	default:
		fmt.Println("unknown probe", what)
		return 1
	}
	return 0
}

func errnoErr(e syscall.Errno) error {
	if e == 0 {
		return nil
	}
	return e
}

// joinSessionKey gives the driver's thread a session keyring of its own
// holding probeSecret, as a login session or a credential helper leaves
// one to the processes it starts; the thread stays locked, so the command
// the driver starts next inherits it. After the command, the driver says
// whether a key it planted is there.
func joinSessionKey(value string) (check func(), err error) {
	runtime.LockOSThread()
	if _, err := unix.KeyctlJoinSessionKeyring("askops-bound-test"); err != nil {
		return nil, fmt.Errorf("join a session keyring: %w", err)
	}
	if _, err := unix.AddKey("user", probeSecret, []byte(value), unix.KEY_SPEC_SESSION_KEYRING); err != nil {
		return nil, fmt.Errorf("add the secret key: %w", err)
	}
	return func() {
		if _, err := unix.KeyctlSearch(unix.KEY_SPEC_SESSION_KEYRING, "user", "askops-bound-test-planted", 0); err == nil {
			fmt.Println("driver: a planted key is in the session keyring")
		}
	}, nil
}

// probeLines are the lines of out a probe printed, by name.
func probeLines(out string) map[string]string {
	m := map[string]string{}
	for _, l := range strings.Split(out, "\n") {
		if k, v, ok := strings.Cut(l, ": "); ok {
			m[k] = v
		}
	}
	return m
}

// A bounded command cannot read the keys of the session keyring it was
// started in (askops' own, or a login session's: Kerberos tickets,
// credential helpers' tokens), nor leave keys there for later programs:
// the kernel's key retention service is not namespaced, so the filter
// refuses it whole. /proc/keys, which names them, is empty.
func TestBoundKeepsOffTheKeyring(t *testing.T) {
	exe := testExe(t)
	sup := Probe(t.Context(), "")
	for _, u := range users() {
		t.Run(u.name, func(t *testing.T) {
			bx := newBox(t, u, exe)
			out, code := bx.run(t, driverSpec{Support: &sup, SessionKey: "hunter2-in-the-keyring"}, `cat /proc/keys; `+envProbe+"=keyring "+exe)
			if code != 0 {
				t.Fatalf("status %d: %s", code, out)
			}
			got := probeLines(out)
			if strings.Contains(out, "hunter2-in-the-keyring") || got["request_key"] == "ok" {
				t.Errorf("the command found the session keyring's secret:\n%s", out)
			}
			if got["add_key"] == "ok" || strings.Contains(out, "planted key is in") {
				t.Errorf("the command added a key to the session keyring:\n%s", out)
			}
			if strings.Contains(out, probeSecret) {
				t.Errorf("/proc/keys names the session keyring's key:\n%s", out)
			}
			if !strings.Contains(got["request_key"], "not implemented") {
				t.Errorf("request_key: %q, want ENOSYS:\n%s", got["request_key"], out)
			}
		})
	}
}

// A bounded command has an IPC namespace of its own: the System V message
// queues (and shared memory, semaphores, POSIX queues) of processes
// outside are not there to find by their key.
func TestBoundKeepsOffHostIPC(t *testing.T) {
	exe := testExe(t)
	sup := Probe(t.Context(), "")
	key := 0x41b00000 | os.Getpid()&0xffff
	id, _, e := syscall.RawSyscall(syscall.SYS_MSGGET, uintptr(key), uintptr(unix.IPC_CREAT|unix.IPC_EXCL|0o666), 0)
	if e != 0 {
		t.Fatalf("msgget: %v", e)
	}
	t.Cleanup(func() { _, _, _ = syscall.RawSyscall(syscall.SYS_MSGCTL, id, unix.IPC_RMID, 0) })
	for _, u := range users() {
		t.Run(u.name, func(t *testing.T) {
			bx := newBox(t, u, exe)
			out, code := bx.run(t, driverSpec{Support: &sup}, envProbe+"=ipc:"+strconv.Itoa(key)+" "+exe)
			if code != 0 {
				t.Fatalf("status %d: %s", code, out)
			}
			if got := probeLines(out)["msgget"]; got != "no such file or directory" {
				t.Errorf("msgget of the host's queue: %q, want ENOENT:\n%s", got, out)
			}
		})
	}
}

// A bounded command makes IP and netlink sockets, no other family: vsock
// reaches the hypervisor from any network namespace, and the rest are
// devices and kernel services no ordinary command asks for.
func TestBoundRefusesOtherSocketFamilies(t *testing.T) {
	exe := testExe(t)
	sup := Probe(t.Context(), "")
	for _, u := range users() {
		t.Run(u.name, func(t *testing.T) {
			bx := newBox(t, u, exe)
			out, code := bx.run(t, driverSpec{Support: &sup}, envProbe+"=sockets "+exe)
			if code != 0 {
				t.Fatalf("status %d: %s", code, out)
			}
			got := probeLines(out)
			for _, f := range []string{"inet", "inet6", "netlink"} {
				if got["socket "+f] != "ok" {
					t.Errorf("socket %s: %q, want ok:\n%s", f, got["socket "+f], out)
				}
			}
			for _, f := range []string{"vsock", "packet", "alg"} {
				if got["socket "+f] != "address family not supported by protocol" {
					t.Errorf("socket %s: %q, want EAFNOSUPPORT:\n%s", f, got["socket "+f], out)
				}
			}
		})
	}
}

// A bounded command's /dev holds /dev/null and its kin, nothing else: not
// the user's other terminals (a command read what was typed there), nor,
// for root, /dev/loop-control, /dev/kvm, /dev/vsock or the disks.
func TestBoundHasItsOwnDev(t *testing.T) {
	exe := testExe(t)
	sup := Probe(t.Context(), "")
	for _, u := range users() {
		t.Run(u.name, func(t *testing.T) {
			bx := newBox(t, u, exe)
			ptmx, tty := openPTY(t)
			_ = ptmx
			if u.uid >= 0 {
				if err := os.Chown(tty.Name(), u.uid, u.uid); err != nil {
					t.Fatal(err)
				}
			}
			// Typed into the other terminal, waiting to be read.
			if _, err := ptmx.Write([]byte("typed-password\n")); err != nil {
				t.Fatal(err)
			}
			paths := []string{tty.Name(), "/dev/loop-control", "/dev/kvm", "/dev/vsock", "/dev/userfaultfd", "/dev/kmsg"}
			script := envProbe + "=open:" + strings.Join(paths, ",") + " " + exe + `; timeout 5 head -c 14 ` + tty.Name() + `; echo; ` +
				`echo x > /dev/null && [ "$(head -c 4 /dev/zero | wc -c)" = 4 ] && head -c 4 /dev/urandom >/dev/null && cat <(echo fd-ok) && echo dev-ok`
			out, code := bx.run(t, driverSpec{Support: &sup}, script)
			if code != 0 || !strings.Contains(out, "fd-ok") || !strings.Contains(out, "dev-ok") {
				t.Errorf("status %d; /dev/null, /dev/zero, /dev/urandom or /dev/fd did not work:\n%s", code, out)
			}
			if strings.Contains(out, "typed-password") {
				t.Errorf("the command read another terminal:\n%s", out)
			}
			got := probeLines(out)
			for _, p := range paths {
				if got["open "+p] != "no such file or directory" {
					t.Errorf("open %s: %q, want ENOENT:\n%s", p, got["open "+p], out)
				}
			}
			// The terminal still holds what was typed, for its reader.
			var queued int32
			if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, tty.Fd(), syscall.TIOCINQ, uintptr(unsafe.Pointer(&queued))); e != 0 || queued == 0 {
				t.Errorf("the other terminal's input was taken (%d bytes left, %v)", queued, e)
			}
		})
	}
}

// A bounded command dumps no core, and cannot raise its limit: where
// core_pattern is a pipe, the kernel runs that program as root on the host
// to read the dump.
func TestBoundDumpsNoCore(t *testing.T) {
	exe := testExe(t)
	sup := Probe(t.Context(), "")
	for _, u := range users() {
		t.Run(u.name, func(t *testing.T) {
			bx := newBox(t, u, exe)
			out, code := bx.run(t, driverSpec{Support: &sup}, envProbe+"=core "+exe)
			if code != 0 {
				t.Fatalf("status %d: %s", code, out)
			}
			got := probeLines(out)
			if got["core limit"] != "0 0" || got["raise core limit"] == "ok" {
				t.Errorf("core limit %q, raising it: %q; want 0 0, refused:\n%s", got["core limit"], got["raise core limit"], out)
			}
		})
	}
}

// A writable path beneath the workspace is granted through the workspace,
// never by following a link there: with HOME the workspace, a command
// moved ~/.cache aside (with Landlock alone, removed go-build) and made
// ~/.cache/go-build (writable) a link to a directory outside, which the
// next command was granted.
func TestBoundFollowsNoPlantedLinkToAWritablePath(t *testing.T) {
	exe := testExe(t)
	sup := Probe(t.Context(), "")
	for _, u := range users() {
		for _, s := range []struct {
			name string
			sup  Support
		}{{"namespaces", sup}, {"landlock alone", Support{LandlockABI: sup.LandlockABI}}} {
			t.Run(u.name+"/"+s.name, func(t *testing.T) {
				bx := newBox(t, u, exe)
				cache := filepath.Join(bx.ws, ".cache", "go-build")
				if err := os.MkdirAll(cache, 0o755); err != nil {
					t.Fatal(err)
				}
				if u.uid >= 0 {
					for _, d := range []string{cache, filepath.Dir(cache)} {
						if err := os.Chown(d, u.uid, u.uid); err != nil {
							t.Fatal(err)
						}
					}
				}
				bx.env = []string{"OUTSIDE=" + bx.outside}
				d := driverSpec{Support: &s.sup, Writable: []string{"~/.cache/go-build"}}
				bx.home = bx.ws
				out, code := bx.run(t, d, `{ mv .cache .cache-old && mkdir .cache; } || rm -r .cache/go-build; ln -s "$OUTSIDE" .cache/go-build && echo planted`)
				if code != 0 || !strings.Contains(out, "planted") {
					t.Fatalf("status %d: %s", code, out)
				}
				script := `echo x > ~/.cache/go-build/new`
				if s.sup.Namespaces {
					// (With Landlock alone, touch reaches any file of the
					// user's anyway: see docs/security.md.)
					script += `; touch -d 2000-01-01 ~/.cache/go-build/keep`
				}
				out, _ = bx.run(t, d, script)
				bx.untouched(t)
				if t.Failed() {
					t.Logf("output:\n%s", out)
				}
			})
		}
	}
}

// With Landlock alone (no namespaces), a writable path that holds the
// workspace would make its .git writable (Landlock only grants): such a
// bound is refused, and the command does not run.
func TestLandlockAloneRefusesAWritablePathHoldingTheWorkspace(t *testing.T) {
	sup := Probe(t.Context(), "")
	root := t.TempDir()
	ws := filepath.Join(root, "src", "ws")
	if err := os.MkdirAll(filepath.Join(ws, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, ".git", "HEAD"), []byte("ref: refs/heads/main\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	b, err := New(Config{Support: Support{LandlockABI: sup.LandlockABI}, Writable: []string{root}})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	cmd := exec.CommandContext(t.Context(), "bash", "-c", `echo x > .git/HEAD`)
	cmd.Dir, cmd.Env = ws, []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}
	release, err := b.Wrap(cmd, ws)
	if err == nil {
		out, _ := cmd.CombinedOutput()
		release()
		head, _ := os.ReadFile(filepath.Join(ws, ".git", "HEAD"))
		t.Fatalf("the bound was set up; .git/HEAD now %q; output: %s", head, out)
	}
	if !strings.Contains(err.Error(), "holds the workspace") {
		t.Errorf("Wrap: %v", err)
	}
}

// A nested repository's .git is read-only like the workspace's own, with
// no read rule too: git runs its hooks and config later, unbounded.
func TestBoundKeepsNestedGitReadOnly(t *testing.T) {
	exe := testExe(t)
	sup := Probe(t.Context(), "")
	for _, u := range users() {
		t.Run(u.name, func(t *testing.T) {
			bx := newBox(t, u, exe)
			nested := filepath.Join(bx.ws, "vendor", "lib", ".git")
			if err := os.MkdirAll(nested, 0o755); err != nil {
				t.Fatal(err)
			}
			head := filepath.Join(nested, "HEAD")
			if err := os.WriteFile(head, []byte("ref: refs/heads/main\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if u.uid >= 0 {
				for _, p := range []string{head, nested, filepath.Dir(nested), filepath.Dir(filepath.Dir(nested))} {
					if err := os.Chown(p, u.uid, u.uid); err != nil {
						t.Fatal(err)
					}
				}
			}
			out, code := bx.run(t, driverSpec{Support: &sup, Deny: []string{}}, `echo x > vendor/lib/.git/HEAD; mkdir vendor/lib/.git/hooks`)
			if code == 0 || !strings.Contains(out, "Read-only file system") {
				t.Errorf("status %d, want a failure with EROFS:\n%s", code, out)
			}
			if b, err := os.ReadFile(head); err != nil || string(b) != "ref: refs/heads/main\n" {
				t.Errorf("the nested .git/HEAD: %q, %v", b, err)
			}
			if _, err := os.Lstat(filepath.Join(nested, "hooks")); err == nil {
				t.Error("a hooks directory was made in the nested .git")
			}
			bx.untouched(t)
		})
	}
}

// A bounded command handed a terminal may set its modes while it runs, but
// they do not outlive it: stty -echo -isig left the shell a person returns
// to without echo and without Ctrl-C.
func TestBoundPutsTerminalModesBack(t *testing.T) {
	exe := testExe(t)
	sup := Probe(t.Context(), "")
	for _, u := range users() {
		t.Run(u.name, func(t *testing.T) {
			bx := newBox(t, u, exe)
			_, tty := openPTY(t)
			if u.uid >= 0 {
				if err := os.Chown(tty.Name(), u.uid, u.uid); err != nil {
					t.Fatal(err)
				}
			}
			before, err := unix.IoctlGetTermios(int(tty.Fd()), unix.TCGETS)
			if err != nil {
				t.Fatal(err)
			}
			if before.Lflag&(unix.ECHO|unix.ISIG) != unix.ECHO|unix.ISIG {
				t.Fatalf("a new terminal without echo or signals: %#x", before.Lflag)
			}
			js, err := json.Marshal(driverSpec{Workspace: bx.ws, Argv: []string{"bash", "-c", "stty -echo -isig && stty && echo set"}, Support: &sup})
			if err != nil {
				t.Fatal(err)
			}
			argv := []string{exe}
			if u.uid >= 0 {
				id := strconv.Itoa(u.uid)
				argv = []string{"setpriv", "--reuid=" + id, "--regid=" + id, "--clear-groups", "--inh-caps=-all", exe}
			}
			cmd := exec.CommandContext(t.Context(), argv[0], argv[1:]...)
			cmd.Dir = bx.ws
			cmd.Env = []string{envDriver + "=" + string(js), "PATH=" + os.Getenv("PATH"), "HOME=" + bx.home}
			var out bytes.Buffer
			cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, &out, &out
			_ = cmd.Run()
			if !strings.Contains(out.String(), "-echo") || !strings.Contains(out.String(), "set") {
				t.Fatalf("the command did not set the terminal's modes: %s", out.String())
			}
			after, err := unix.IoctlGetTermios(int(tty.Fd()), unix.TCGETS)
			if err != nil {
				t.Fatal(err)
			}
			if after.Lflag&(unix.ECHO|unix.ISIG) != unix.ECHO|unix.ISIG {
				t.Errorf("the terminal's modes outlived the command: lflag %#x, was %#x", after.Lflag, before.Lflag)
			}
		})
	}
}

// The git directory a .git file names ("gitdir: ../.store", as git
// worktree, submodules and --separate-git-dir write) is read-only like a
// .git directory when it lies in the workspace, and so is the common
// directory a worktree's names.
func TestBoundKeepsGitDirsNamedByGitFilesReadOnly(t *testing.T) {
	exe := testExe(t)
	sup := Probe(t.Context(), "")
	for _, u := range users() {
		t.Run(u.name, func(t *testing.T) {
			bx := newBox(t, u, exe)
			files := map[string]string{
				"sub/.git":                       "gitdir: ../.store\n",
				".store/HEAD":                    "ref: refs/heads/main\n",
				"wt/.git":                        "gitdir: " + filepath.Join(bx.ws, ".common", "worktrees", "wt") + "\n",
				".common/worktrees/wt/HEAD":      "ref: refs/heads/wt\n",
				".common/worktrees/wt/commondir": "../..\n",
				".common/config":                 "[core]\n",
			}
			for name, body := range files {
				p := filepath.Join(bx.ws, name)
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if u.uid >= 0 {
				if err := filepath.Walk(bx.ws, func(p string, _ os.FileInfo, err error) error {
					if err != nil {
						return err
					}
					return os.Lchown(p, u.uid, u.uid)
				}); err != nil {
					t.Fatal(err)
				}
			}
			out, _ := bx.run(t, driverSpec{Support: &sup, Deny: []string{}}, `echo x > .store/HEAD; mkdir .store/hooks; echo x > .common/worktrees/wt/HEAD; echo x >> .common/config; echo ok > made.txt`)
			for name, body := range files {
				if b, err := os.ReadFile(filepath.Join(bx.ws, name)); err != nil || string(b) != body {
					t.Errorf("%s: %q, %v; want it untouched", name, b, err)
				}
			}
			if _, err := os.Lstat(filepath.Join(bx.ws, ".store", "hooks")); err == nil {
				t.Error(".store/hooks was made")
			}
			if b, err := os.ReadFile(filepath.Join(bx.ws, "made.txt")); err != nil || string(b) != "ok\n" {
				t.Errorf("made.txt: %q, %v (the rest of the workspace is writable)", b, err)
			}
			if t.Failed() {
				t.Logf("output:\n%s", out)
			}
		})
	}
}

// With the default writable paths, a GOPATH's pkg (the module cache) is
// writable and its bin is not: go install puts there the programs people
// run later from their PATH, bot among them.
func TestBoundKeepsGoBinReadOnly(t *testing.T) {
	exe := testExe(t)
	sup := Probe(t.Context(), "")
	for _, u := range users() {
		t.Run(u.name, func(t *testing.T) {
			bx := newBox(t, u, exe)
			out, _ := bx.run(t, driverSpec{Support: &sup}, `mkdir -p ~/go/pkg/mod/cache && echo x > ~/go/pkg/mod/cache/f && echo pkg-ok; mkdir -p ~/go/bin; echo x > ~/go/bin/tool`)
			if !strings.Contains(out, "pkg-ok") {
				t.Errorf("the module cache was not writable:\n%s", out)
			}
			if _, err := os.Lstat(filepath.Join(bx.home, "go", "bin", "tool")); err == nil {
				t.Errorf("a program was written into ~/go/bin:\n%s", out)
			}
		})
	}
}

// askops' own program, when it lies in the workspace (bot built in the
// repository askops works on), stays as it is: the gateway runs it by its
// path for every allowed command, and a replaced one would run the next of
// them unbounded. Neither it nor the directory holding it can be changed,
// moved or replaced.
func TestBoundKeepsAskopsOwnProgram(t *testing.T) {
	exe := testExe(t)
	want, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	sup := Probe(t.Context(), "")
	for _, u := range users() {
		t.Run(u.name, func(t *testing.T) {
			bx := newBox(t, u, exe)
			self := filepath.Join(bx.ws, "tools", "bin", "bot")
			if err := os.MkdirAll(filepath.Dir(self), 0o755); err != nil {
				t.Fatal(err)
			}
			copyFile(t, exe, self)
			if u.uid >= 0 {
				for _, p := range []string{self, filepath.Dir(self), filepath.Dir(filepath.Dir(self))} {
					if err := os.Chown(p, u.uid, u.uid); err != nil {
						t.Fatal(err)
					}
				}
			}
			bx.exe = self
			out, _ := bx.run(t, driverSpec{Support: &sup}, `echo x >> tools/bin/bot; cp /bin/true tools/bin/bot.new && mv tools/bin/bot.new tools/bin/bot; mv tools/bin tools/bin2 || mv tools tools2; mkdir -p tools/bin && cp /bin/true tools/bin/bot; echo ok > made.txt`)
			got, err := os.ReadFile(self)
			if err != nil || !bytes.Equal(got, want) {
				t.Errorf("askops' program was changed or replaced (%d bytes, %v):\n%s", len(got), err, out)
			}
			if b, err := os.ReadFile(filepath.Join(bx.ws, "made.txt")); err != nil || string(b) != "ok\n" {
				t.Errorf("made.txt: %q, %v (the rest of the workspace is writable):\n%s", b, err, out)
			}
		})
	}
}

// askops' config file, where it lies in the workspace, stays as it is: the
// next bot sandbox reads it, and agent.bound.mode: off there would run the
// next command unbounded.
func TestBoundKeepsAskopsConfig(t *testing.T) {
	exe := testExe(t)
	sup := Probe(t.Context(), "")
	const body = "agent:\n  bound:\n    mode: required\n"
	for _, u := range users() {
		t.Run(u.name, func(t *testing.T) {
			bx := newBox(t, u, exe)
			conf := filepath.Join(bx.ws, "deploy", "askops.yaml")
			if err := os.MkdirAll(filepath.Dir(conf), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(conf, []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
			if u.uid >= 0 {
				for _, p := range []string{conf, filepath.Dir(conf)} {
					if err := os.Chown(p, u.uid, u.uid); err != nil {
						t.Fatal(err)
					}
				}
			}
			out, _ := bx.run(t, driverSpec{Support: &sup, Keep: []string{conf}}, `echo "    mode: off" >> deploy/askops.yaml; mv deploy deploy2; mkdir -p deploy && echo "agent: {bound: {mode: off}}" > deploy/askops.yaml; echo ok > made.txt`)
			if b, err := os.ReadFile(conf); err != nil || string(b) != body {
				t.Errorf("the config file: %q, %v; want it untouched:\n%s", b, err, out)
			}
			if b, err := os.ReadFile(filepath.Join(bx.ws, "made.txt")); err != nil || string(b) != "ok\n" {
				t.Errorf("made.txt: %q, %v (the rest of the workspace is writable):\n%s", b, err, out)
			}
		})
	}
}

// With Landlock alone (no namespaces, no mounts), an agent's settings at
// the workspace's top are kept as .git is: not granted, so a write there
// is refused, while the rest of the workspace stays writable.
func TestLandlockAloneKeepsAgentSettings(t *testing.T) {
	sup := Probe(t.Context(), "")
	if sup.LandlockABI == 0 {
		t.Fatal("no Landlock here: the bound's tests need it (see docs/security.md)")
	}
	ws := t.TempDir()
	for _, d := range []string{".claude", "src"} {
		if err := os.MkdirAll(filepath.Join(ws, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(ws, ".claude", "settings.json"), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	b, err := New(Config{Support: Support{LandlockABI: sup.LandlockABI}, Writable: []string{}, KeepNames: func(n string) bool { return n == ".claude" }})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	cmd := exec.CommandContext(t.Context(), "bash", "-c", `echo x > src/a && echo wrote-src; echo '{"hooks":{}}' > .claude/settings.json && echo WROTE-SETTINGS; true`)
	cmd.Dir, cmd.Env = ws, []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}
	release, err := b.Wrap(cmd, ws)
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.CombinedOutput()
	release()
	if err != nil || !strings.Contains(string(out), "wrote-src") || strings.Contains(string(out), "WROTE-SETTINGS") {
		t.Fatalf("%v; output:\n%s", err, out)
	}
	if got, _ := os.ReadFile(filepath.Join(ws, ".claude", "settings.json")); string(got) != "{}" {
		t.Errorf("the settings now hold %q", got)
	}
}

// What a write rule denies (Config.Unwritable) stays as it was, whatever
// program changes it: a directory the rule names keeps its files and gets
// no new one, a file keeps its content, mode and name; the rest of the
// workspace stays writable. The policy judges the commands it reads; this
// holds for the ones it leaves to the bound (a script, a build, git
// checking out a branch).
func TestBoundKeepsWhatWriteRulesDenyReadOnly(t *testing.T) {
	exe := testExe(t)
	sup := Probe(t.Context(), "")
	for _, u := range users() {
		t.Run(u.name, func(t *testing.T) {
			bx := newBox(t, u, exe)
			token := filepath.Join(bx.ws, "secrets", "token")
			prod := filepath.Join(bx.ws, "config", "prod.yaml")
			env := filepath.Join(bx.ws, "secrets", ".env") // read rules deny it too: still hidden
			for _, f := range []string{token, prod, env} {
				if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(f, []byte("kept\n"), 0o644); err != nil {
					t.Fatal(err)
				}
				if u.uid >= 0 {
					for _, p := range []string{f, filepath.Dir(f)} {
						if err := os.Chown(p, u.uid, u.uid); err != nil {
							t.Fatal(err)
						}
					}
				}
			}
			out, _ := bx.run(t, driverSpec{Support: &sup, Deny: []string{".env"}, Unwritable: []string{"secrets", "config/prod.yaml"}},
				`cat secrets/.env; echo x > secrets/token; rm -f secrets/token; touch secrets/new; mv secrets s2; rm -rf secrets;
				 echo x > config/prod.yaml; chmod 600 config/prod.yaml; mv config/prod.yaml config/p; rm -f config/prod.yaml;
				 echo ok > config/other.yaml; echo ok > made.txt`)
			for _, f := range []string{token, prod} {
				fi, err := os.Stat(f)
				if b, rerr := os.ReadFile(f); err != nil || rerr != nil || string(b) != "kept\n" || fi.Mode().Perm() != 0o644 {
					t.Errorf("%s: changed (%v, %v):\n%s", f, err, rerr, out)
				}
			}
			if strings.Contains(out, "kept") {
				t.Errorf("secrets/.env, which a read rule denies, was read in a directory a write rule keeps:\n%s", out)
			}
			for _, p := range []string{"secrets/new", "s2", "config/p"} {
				if _, err := os.Lstat(filepath.Join(bx.ws, p)); err == nil {
					t.Errorf("%s was made:\n%s", p, out)
				}
			}
			for _, p := range []string{"made.txt", "config/other.yaml"} {
				if b, err := os.ReadFile(filepath.Join(bx.ws, p)); err != nil || string(b) != "ok\n" {
					t.Errorf("%s: %q, %v: the rest of the workspace is writable:\n%s", p, b, err, out)
				}
			}
			bx.untouched(t)
		})
	}
}
