package bound

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/askops/askops/bound/internal/stage"
)

// throwawayUID is the unprivileged user the tests run the bound as, when
// they run as root (CI does): no passwd entry, no group, owns nothing but
// the test's own directories.
const throwawayUID = 54321

// envDriver makes the test binary a driver, as `bot sandbox` is one: it
// probes, wraps the command of its driverSpec and exits with its status.
// The tests start it as the throwaway user, so the whole path (probe,
// wrap, the namespaces' id maps) runs unprivileged.
const envDriver = "ASKOPS_BOUND_TEST_DRIVER"

type driverSpec struct {
	Workspace string   `json:"workspace"`
	Argv      []string `json:"argv"`
	Deny      []string `json:"deny"` // base names whose reads are denied
	Writable  []string `json:"writable"`
	Hidden    bool     `json:"hidden"` // make the driver non-dumpable first, as the agent does
	// Support, when set, is used instead of the driver's own Probe (which
	// costs a start of this binary: the refusal table probes once).
	Support *Support `json:"support,omitempty"`
	// SessionKey, when set, is a secret the driver keeps in a session
	// keyring of its own, which the command inherits (joinSessionKey).
	SessionKey string `json:"session_key,omitempty"`
	// Keep is Config.Keep.
	Keep []string `json:"keep,omitempty"`
	// KeepNames are the names Config.KeepNames reports.
	KeepNames []string `json:"keep_names,omitempty"`
	// Unwritable are the paths, relative to the workspace, that
	// Config.Unwritable reports.
	Unwritable []string `json:"unwritable,omitempty"`
	// Hosts is Config.Hosts.
	Hosts []string `json:"hosts,omitempty"`
}

func TestMain(m *testing.M) {
	if raw, ok := os.LookupEnv(envDriver); ok {
		os.Exit(drive(raw))
	}
	if _, ok := os.LookupEnv(envTIOCSTI); ok {
		os.Exit(pushInput())
	}
	if what, ok := os.LookupEnv(envProbe); ok {
		os.Exit(probe(what))
	}
	os.Exit(m.Run())
}

func drive(raw string) int {
	var d driverSpec
	if err := json.Unmarshal([]byte(raw), &d); err != nil {
		fmt.Fprintln(os.Stderr, "driver:", err)
		return 2
	}
	if d.Hidden {
		if _, _, e := syscall.RawSyscall(syscall.SYS_PRCTL, syscall.PR_SET_DUMPABLE, 0, 0); e != 0 {
			fmt.Fprintln(os.Stderr, "driver: dumpable:", e)
			return 2
		}
	}
	var sup Support
	if d.Support != nil {
		sup = *d.Support
	} else {
		sup = Probe(context.Background(), "")
	}
	if os.Getenv("ASKOPS_BOUND_TEST_DEBUG") != "" {
		fmt.Fprintf(os.Stderr, "driver: probe %s: %s\n", sup, sup.Why)
	}
	var keepNames func(string) bool
	if len(d.KeepNames) > 0 {
		keepNames = func(n string) bool { return slices.Contains(d.KeepNames, n) }
	}
	var unwritable func(string, string) bool
	if len(d.Unwritable) > 0 {
		unwritable = func(ws, p string) bool {
			rel, err := filepath.Rel(ws, p)
			return err == nil && slices.Contains(d.Unwritable, rel)
		}
	}
	b, err := New(Config{Support: sup, Writable: d.Writable, Denied: deniedNames(d.Deny), Keep: d.Keep, KeepNames: keepNames, Unwritable: unwritable, Hosts: d.Hosts})
	if err != nil {
		fmt.Fprintln(os.Stderr, "driver:", err)
		return 2
	}
	if !b.Active() {
		fmt.Fprintln(os.Stderr, "driver: no bound:", b.Describe())
		return 3
	}
	checkKeyring := func() {}
	if d.SessionKey != "" {
		if checkKeyring, err = joinSessionKey(d.SessionKey); err != nil {
			fmt.Fprintln(os.Stderr, "driver:", err)
			return 2
		}
	}
	cmd := exec.Command(d.Argv[0], d.Argv[1:]...)
	cmd.Dir = d.Workspace
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, envDriver+"=") { // a command that is this binary is not a driver
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	release, err := b.Wrap(cmd, d.Workspace)
	if err != nil {
		fmt.Fprintln(os.Stderr, "driver:", err)
		return 2
	}
	defer func() {
		if undone := release(); undone != "" {
			fmt.Fprintln(os.Stderr, "driver: undone:", undone)
		}
	}()
	_ = cmd.Run()
	if cmd.ProcessState == nil {
		return 2
	}
	checkKeyring()
	return cmd.ProcessState.ExitCode()
}

func deniedNames(names []string) func(string, string) bool {
	if len(names) == 0 {
		return nil
	}
	return func(_, p string) bool {
		for _, n := range names {
			if filepath.Base(p) == n {
				return true
			}
		}
		return false
	}
}

// who is one way the tests run the bound: as this process's user, or as
// the throwaway one.
type who struct {
	name string
	uid  int // -1: this process's user
}

// users are the users every case runs as: as root, root and the throwaway
// user; as anyone else, that user (which is unprivileged already).
func users() []who {
	if os.Getuid() == 0 {
		return []who{{"root", -1}, {"unprivileged", throwawayUID}}
	}
	return []who{{"unprivileged", -1}}
}

// box is one test's workspace and the places around it.
type box struct {
	root, ws, outside, home string
	exe                     string // the test binary, where the user may run it
	uid                     int
	extra                   *os.File // the driver's descriptor 3, inherited as a careless parent leaves one
	env                     []string // added to the driver's environment
}

// newBox makes a workspace with a git repository, a secret .env, a link
// into .git and a link out of the workspace, all owned by u.
func newBox(t *testing.T, u who, exe string) *box {
	t.Helper()
	root := t.TempDir()
	for _, d := range []string{filepath.Dir(root), root} {
		if err := os.Chmod(d, 0o755); err != nil { // for the throwaway user
			t.Fatal(err)
		}
	}
	bx := &box{root: root, ws: filepath.Join(root, "ws"), outside: filepath.Join(root, "outside"), home: filepath.Join(root, "home"), uid: u.uid}
	for _, d := range []string{bx.ws, bx.outside, bx.home, filepath.Join(bx.ws, "src"), filepath.Join(bx.ws, ".git", "objects"), filepath.Join(root, "bin")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	files := map[string]string{
		filepath.Join(bx.ws, ".git", "HEAD"):   "ref: refs/heads/main\n",
		filepath.Join(bx.ws, ".git", "config"): "[core]\n",
		filepath.Join(bx.ws, ".env"):           "SECRET=hunter2\n",
		filepath.Join(bx.ws, "src", ".env"):    "SECRET=nested\n",
		filepath.Join(bx.ws, "src", "a.txt"):   "a\n",
		filepath.Join(bx.outside, "keep"):      "keep\n",
	}
	for p, c := range files {
		if err := os.WriteFile(p, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("../.git", filepath.Join(bx.ws, "src", "glink")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(bx.outside, filepath.Join(bx.ws, "out")); err != nil {
		t.Fatal(err)
	}
	bx.exe = exe
	if u.uid >= 0 {
		if err := filepath.Walk(root, func(p string, _ os.FileInfo, err error) error {
			if err != nil {
				return err
			}
			return os.Lchown(p, u.uid, u.uid)
		}); err != nil {
			t.Fatal(err)
		}
	}
	return bx
}

// testExe is a copy of the test binary the throwaway user may run (the
// one go test built sits in a directory only root may enter).
func testExe(t *testing.T) string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, d := range []string{filepath.Dir(dir), dir} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	exe := filepath.Join(dir, "bound.test")
	copyFile(t, self, exe)
	return exe
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o755); err != nil {
		t.Fatal(err)
	}
}

// run runs script with bash in the box's workspace inside the bound, as
// the box's user, through the driver; it returns the combined output and
// the exit status.
func (bx *box) run(t *testing.T, d driverSpec, script string) (string, int) {
	t.Helper()
	d.Workspace = bx.ws
	d.Argv = []string{"bash", "-c", script}
	if d.Deny == nil {
		d.Deny = []string{".env"}
	}
	js, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	argv := []string{bx.exe}
	if bx.uid >= 0 {
		id := strconv.Itoa(bx.uid)
		argv = []string{"setpriv", "--reuid=" + id, "--regid=" + id, "--clear-groups", "--inh-caps=-all", bx.exe}
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Minute) // a cold build cache on a loaded box
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = bx.ws
	cmd.Env = []string{
		envDriver + "=" + string(js),
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + bx.home,
		"LANG=C",
	}
	cmd.Env = append(cmd.Env, bx.env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if bx.extra != nil {
		cmd.ExtraFiles = []*os.File{bx.extra}
	}
	err = cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatalf("driver: %v", err)
	}
	code := cmd.ProcessState.ExitCode()
	if code == 2 || code == 3 || code == ExitSetup {
		t.Fatalf("the bound was not set up (status %d): %s", code, out.String())
	}
	return out.String(), code
}

func (bx *box) untouched(t *testing.T) {
	t.Helper()
	for p, want := range map[string]string{
		filepath.Join(bx.ws, ".git", "HEAD"):   "ref: refs/heads/main\n",
		filepath.Join(bx.ws, ".git", "config"): "[core]\n",
		filepath.Join(bx.ws, ".env"):           "SECRET=hunter2\n",
		filepath.Join(bx.outside, "keep"):      "keep\n",
	} {
		got, err := os.ReadFile(p)
		if err != nil || string(got) != want {
			t.Errorf("%s: %q, %v; want it untouched (%q)", p, got, err, want)
		}
	}
	if fi, err := os.Stat(filepath.Join(bx.outside, "keep")); err != nil || fi.Mode() != 0o644 || fi.ModTime().Year() == 2000 {
		t.Errorf("outside/keep: %v, %v; want its mode (0644) and time untouched", fi.Mode(), err)
	}
	entries, _ := os.ReadDir(bx.outside)
	if len(entries) != 1 {
		t.Errorf("outside holds %d entries, want only keep", len(entries))
	}
}

// The kernel offers this machine a whole bound; in CI a missing one fails.
func TestProbeFindsLandlockAndNamespaces(t *testing.T) {
	s := Probe(t.Context(), "")
	if s.LandlockABI < 4 || !s.Namespaces || !s.Enough() {
		t.Fatalf("probe: %+v; want Landlock ABI ≥ 4 and namespaces on this machine", s)
	}
	if got := s.String(); !strings.HasPrefix(got, "landlock ABI ") || !strings.HasSuffix(got, ", namespaces yes") {
		t.Errorf("String() = %q", got)
	}
}

// Each refused case fails inside the command with the system's error, and
// what it aimed at is untouched; what is allowed works.
func TestBoundRefusesAndAllows(t *testing.T) {
	cases := []struct {
		name   string
		script string
		code   int    // the exit status wanted; -1: any but 0
		output string // a text the output must hold
		absent string // a text it must not
	}{
		{"write into .git", `echo x > .git/HEAD`, -1, "Read-only file system", ""},
		{"new file in .git", `touch .git/new`, -1, "Read-only file system", ""},
		{"write into .git through a link", `echo x > src/glink/config`, -1, "Read-only file system", ""},
		{"rm -rf .git", `rm -rf .git`, -1, "", ""},
		{"find -L -delete", `find -L src -name HEAD -delete`, -1, "", ""},
		{"find through the link -delete", `find src/glink/ -delete`, -1, "", ""},
		{"find -H -delete", `find -H src/glink -name HEAD -delete`, -1, "Read-only file system", ""},
		{"move .git away", `mv .git gone`, -1, "", ""},
		{"write outside", `echo x > ` + "$OUTSIDE/new", -1, "Read-only file system", ""},
		{"write outside through a link", `echo x > out/new`, -1, "Read-only file system", ""},
		{"delete outside", `rm -f $OUTSIDE/keep`, -1, "Read-only file system", ""},
		{"write outside through /proc/self/cwd", `echo x > /proc/self/cwd/../outside/new`, -1, "Read-only file system", ""},
		{"read a denied file", `cat .env`, -1, "Permission denied", "hunter2"},
		{"read a denied file through a link", `ln -s .env e2 && cat e2`, -1, "Permission denied", "hunter2"},
		{"read a nested denied file", `cat src/.env`, -1, "Permission denied", "nested"},
		{"chmod a denied file", `chmod 644 .env; cat .env`, -1, "", "hunter2"},
		{"unmount .git", `umount .git`, -1, "", ""},
		{"loopback connect", `exec 3<>/dev/tcp/127.0.0.1/$PORT && echo connected`, -1, "", "connected"},
		{"signal the parent", `kill -0 $PPID_OUTSIDE && echo signalled`, -1, "", "signalled"},
		{"write in the workspace", `echo hi > src/new.txt && mkdir -p d/e && mv src/new.txt d/e/ && cat d/e/new.txt && rm -r d`, 0, "hi", ""},
		{"write the private temp", `f=$(mktemp) && echo t > "$f" && cat "$f" && [ "$TMPDIR" != /tmp ]`, 0, "t", ""},
		{"write /dev/null", `echo x > /dev/null && echo ok`, 0, "ok", ""},
		{"git reads", `cat .git/HEAD`, 0, "refs/heads/main", ""},
		{"exit status", `exit 7`, 7, "", ""},
		{"setsid", `setsid bash -c 'echo x > $OUTSIDE/setsid' ; echo x > .git/setsid`, -1, "", ""},
		{"nohup", `nohup bash -c 'echo x > $OUTSIDE/nohup' >/dev/null 2>&1; cat $OUTSIDE/nohup`, -1, "", ""},
		{"bash run again", `exec bash -c 'exec bash -c "echo x > .git/HEAD"'`, -1, "Read-only file system", ""},
		// Landlock handles no file's attributes: the mounts outside the
		// writable paths are read-only for that.
		{"chmod outside", `chmod 4777 $OUTSIDE/keep`, -1, "Read-only file system", ""},
		{"touch outside", `touch -d 2000-01-01 $OUTSIDE/keep`, -1, "Read-only file system", ""},
		{"chmod outside through a link", `chmod 777 out/keep`, -1, "Read-only file system", ""},
		{"chmod in the workspace", `echo x > s.sh && chmod 755 s.sh && touch -d 2000-01-01 s.sh && [ -x s.sh ] && echo chmod-ok`, 0, "chmod-ok", ""},
		{"host processes unseen", `[ -e /proc/$PPID_OUTSIDE/cmdline ] && echo read-host; [ $(ls -d /proc/[0-9]* | wc -l) -lt 10 ] && echo few`, 0, "few", "read-host"},
		{"inherited descriptor", `echo x >&3; [ ! -e /proc/self/fd/3 ] && echo no-3`, 0, "no-3", ""},
		// A Unix socket with a path (docker.sock, a D-Bus bus, tmux) is a
		// service acting outside the bound: no Unix socket is made at
		// all, nor a datagram pair (its sendto may name a path); a stream
		// pair (child processes' stdio) still is.
		{"unix socket outside", `perl -MIO::Socket::UNIX -e 'IO::Socket::UNIX->new(Peer => $ENV{SOCK}) or die "refused: $!\n"; print "connected\n"'`, -1, "Permission denied", "connected"},
		{"datagram socketpair", `perl -MSocket -e 'socketpair(my $a, my $b, AF_UNIX, SOCK_DGRAM, 0) or die "refused: $!\n"; print "pair\n"'`, -1, "Permission denied", "pair"},
		{"stream socketpair", `perl -MSocket -e 'socketpair(my $a, my $b, AF_UNIX, SOCK_STREAM, 0) or die "refused: $!\n"; print "pair-ok\n"'`, 0, "pair-ok", ""},
	}
	sockDir, err := os.MkdirTemp("", "askops-bound-sock")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(sockDir)
	sock := filepath.Join(sockDir, "s")
	ul, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ul.Close()
	// Anyone may connect, the throwaway user too: only the bound refuses.
	if err := os.Chmod(sockDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(sock, 0o777); err != nil {
		t.Fatal(err)
	}
	go serve(ul, func(net.Conn) {})
	port := listenLoopback(t, func(c net.Conn) { _, _ = io.WriteString(c, "served\n") })
	exe := testExe(t)
	sup := Probe(t.Context(), "")
	for _, u := range users() {
		t.Run(u.name, func(t *testing.T) {
			for _, c := range cases {
				t.Run(c.name, func(t *testing.T) {
					bx := newBox(t, u, exe)
					env := "OUTSIDE=" + bx.outside + " PORT=" + port + " SOCK=" + sock + " PPID_OUTSIDE=" + strconv.Itoa(os.Getpid()) + "; "
					script := "export " + env + c.script
					if c.name == "inherited descriptor" {
						f, err := os.OpenFile(filepath.Join(bx.outside, "keep"), os.O_RDWR, 0)
						if err != nil {
							t.Fatal(err)
						}
						defer f.Close()
						bx.extra = f
					}
					out, code := bx.run(t, driverSpec{Support: &sup}, script)
					if c.code >= 0 && code != c.code {
						t.Errorf("status %d, want %d; output:\n%s", code, c.code, out)
					}
					if c.code < 0 && code == 0 {
						t.Errorf("status 0, want a failure; output:\n%s", out)
					}
					if c.output != "" && !strings.Contains(out, c.output) {
						t.Errorf("output lacks %q:\n%s", c.output, out)
					}
					if c.absent != "" && strings.Contains(out, c.absent) {
						t.Errorf("output holds %q:\n%s", c.absent, out)
					}
					bx.untouched(t)
					if _, err := os.Lstat(filepath.Join(bx.ws, ".git", "new")); err == nil {
						t.Error(".git/new was made")
					}
				})
			}
		})
	}
}

// A process that made itself non-dumpable (the agent does) and is not root
// cannot write a child's id maps: the bound goes through askops run again
// once more, and holds all the same.
func TestBoundFromANonDumpableProcess(t *testing.T) {
	exe := testExe(t)
	for _, u := range users() {
		t.Run(u.name, func(t *testing.T) {
			bx := newBox(t, u, exe)
			out, code := bx.run(t, driverSpec{Hidden: true}, `echo x > .git/HEAD; echo y > `+bx.outside+`/new; cat .env; echo ok > made.txt; exit 5`)
			if code != 5 {
				t.Errorf("status %d, want 5; output:\n%s", code, out)
			}
			for _, want := range []string{"Read-only file system", "Permission denied"} {
				if !strings.Contains(out, want) {
					t.Errorf("output lacks %q:\n%s", want, out)
				}
			}
			if strings.Contains(out, "hunter2") {
				t.Errorf("the denied file was read:\n%s", out)
			}
			if b, err := os.ReadFile(filepath.Join(bx.ws, "made.txt")); err != nil || string(b) != "ok\n" {
				t.Errorf("made.txt: %q, %v", b, err)
			}
			bx.untouched(t)
		})
	}
}

// A Go module's tests and an npm package's run inside the bound with the
// default writable paths: the toolchains' caches and the private temp.
func TestToolchainsRunInside(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatal("go is not on PATH")
	}
	if _, err := exec.LookPath("npm"); err != nil {
		t.Fatal("npm is not on PATH (CI installs it for the agent CLIs)")
	}
	exe := testExe(t)
	for _, u := range users() {
		t.Run(u.name, func(t *testing.T) {
			bx := newBox(t, u, exe)
			files := map[string]string{
				"go.mod":       "module example.com/m\n\ngo 1.22\n",
				"m.go":         "package m\n\nfunc Two() int { return 2 }\n",
				"m_test.go":    "package m\n\nimport (\n\t\"os\"\n\t\"testing\"\n)\n\nfunc TestTwo(t *testing.T) {\n\tif Two() != 2 {\n\t\tt.Fatal(\"no\")\n\t}\n\tif err := os.WriteFile(t.TempDir()+\"/x\", nil, 0o600); err != nil {\n\t\tt.Fatal(err)\n\t}\n}\n",
				"package.json": `{"name":"p","version":"1.0.0","scripts":{"test":"node test.js"}}` + "\n",
				"test.js":      "const fs = require('fs'); const os = require('os');\nfs.writeFileSync(os.tmpdir() + '/t', 'x');\nfs.writeFileSync('npm-ran', 'yes');\nconsole.log('npm test ok');\n",
				"src/.keep":    "",
			}
			for name, body := range files {
				p := filepath.Join(bx.ws, name)
				if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
					t.Fatal(err)
				}
				if u.uid >= 0 {
					_ = os.Chown(p, u.uid, u.uid)
				}
			}
			script := "export PATH=" + filepath.Dir(goBin) + ":$PATH GOFLAGS=-mod=mod GOTOOLCHAIN=local GOPROXY=off; go test -count=1 ./... && npm test"
			// A build cache that outlives the test, so the standard
			// library is compiled once per machine, not once per run: this
			// user's own, or for the throwaway user one kept for it
			// (under the default writable ~/.cache it would be new each run).
			cache := filepath.Join(os.TempDir(), "askops-bound-test-gocache")
			if u.uid < 0 {
				c, err := exec.Command("go", "env", "GOCACHE").Output()
				if err != nil {
					t.Fatal(err)
				}
				cache = strings.TrimSpace(string(c))
			} else {
				if err := os.MkdirAll(cache, 0o700); err != nil {
					t.Fatal(err)
				}
				if err := os.Chown(cache, u.uid, u.uid); err != nil {
					t.Fatal(err)
				}
			}

			bx.env = []string{"GOCACHE=" + cache} // the default writable paths follow it
			out, code := bx.run(t, driverSpec{}, script)
			if code != 0 || !strings.Contains(out, "ok  \texample.com/m") || !strings.Contains(out, "npm test ok") {
				t.Fatalf("status %d; output:\n%s", code, out)
			}
			bx.untouched(t)
		})
	}
}

// askops run again execs the command from the stage's init, before the
// packages that sort after it initialise: the toolkits a bounded start
// has no use for (golang.org/x/sys/unix, encoding/json and what follows
// them) never run. (Each init is traced once it returns; the stage's never
// does.)
func TestStageRunsBeforeTheRest(t *testing.T) {
	sp := stage.Spec{Stage: stage.Inner, Argv: []string{"/bin/true"}, Dir: t.TempDir(), ABI: Probe(t.Context(), "").LandlockABI}
	cmd := exec.CommandContext(t.Context(), "/proc/self/exe")
	cmd.Env = []string{"GODEBUG=inittrace=1", stage.Env + "=" + sp.Encode()}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	trace := string(out)
	if !strings.Contains(trace, "init os @") {
		t.Fatalf("no init trace:\n%s", trace)
	}
	for _, late := range []string{"golang.org/x/sys/unix", "encoding/json"} {
		if strings.Contains(trace, "init "+late) {
			t.Errorf("%s initialised before the command ran:\n%s", late, trace)
		}
	}
}

// One Bound runs command after command, each in a private directory made
// ahead (with the files that hide denied ones when the last command needed
// them, without otherwise): a denied file stays unreadable in every one.
func TestSparePrivateDirectories(t *testing.T) {
	sup := Probe(t.Context(), "")
	b, err := New(Config{Support: sup, Denied: deniedNames([]string{".env"})})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	secret, plain := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(secret, ".env"), []byte("SECRET=hunter2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for i, ws := range []string{secret, secret, plain, secret, plain, plain, secret} {
		cmd := exec.CommandContext(t.Context(), "bash", "-c", `cat .env 2>&1; [ -w "$TMPDIR" ] && echo tmp-ok`)
		cmd.Dir, cmd.Env = ws, []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}
		release, err := b.Wrap(cmd, ws)
		if err != nil {
			t.Fatal(err)
		}
		out, _ := cmd.CombinedOutput()
		release()
		if strings.Contains(string(out), "hunter2") || !strings.Contains(string(out), "tmp-ok") {
			t.Errorf("command %d in %s:\n%s", i, ws, out)
		}
		if ws == secret && !strings.Contains(string(out), "Permission denied") {
			t.Errorf("command %d: reading .env was not refused:\n%s", i, out)
		}
	}
}

// envTIOCSTI makes the test binary, run as a bounded command, push a
// command line into its standard input's terminal (TIOCSTI), as a
// command aiming at the shell that started the bound would.
const envTIOCSTI = "ASKOPS_BOUND_TEST_TIOCSTI"

func pushInput() int {
	for _, c := range []byte("echo INJECTED\n") {
		b := c
		if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, 0, syscall.TIOCSTI, uintptr(unsafe.Pointer(&b))); e != 0 {
			fmt.Println("TIOCSTI:", e)
			return 1
		}
	}
	fmt.Println("TIOCSTI: pushed")
	return 0
}

// openPTY opens a pseudo-terminal: its controller and the terminal.
func openPTY(t *testing.T) (ptmx, tty *os.File) {
	t.Helper()
	ptmx, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skip("no pseudo-terminals:", err)
	}
	t.Cleanup(func() { ptmx.Close() })
	var n, unlock uint32
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, ptmx.Fd(), syscall.TIOCSPTLCK, uintptr(unsafe.Pointer(&unlock))); e != 0 {
		t.Fatal(e)
	}
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, ptmx.Fd(), syscall.TIOCGPTN, uintptr(unsafe.Pointer(&n))); e != 0 {
		t.Fatal(e)
	}
	tty, err = os.OpenFile("/dev/pts/"+strconv.Itoa(int(n)), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tty.Close() })
	return ptmx, tty
}

// A bounded command started from a terminal cannot push input into it
// (TIOCSTI) for the shell that started it to read and run, unbounded,
// once the command returns: it has no controlling terminal. With
// namespaces and with Landlock alone.
func TestBoundCannotPushTerminalInput(t *testing.T) {
	exe := testExe(t)
	sup := Probe(t.Context(), "")
	alone := Support{LandlockABI: sup.LandlockABI}
	for _, u := range users() {
		for _, s := range []struct {
			name string
			sup  Support
		}{{"namespaces", sup}, {"landlock alone", alone}} {
			t.Run(u.name+"/"+s.name, func(t *testing.T) {
				bx := newBox(t, u, exe)
				_, tty := openPTY(t)
				if u.uid >= 0 {
					if err := os.Chown(tty.Name(), u.uid, u.uid); err != nil {
						t.Fatal(err)
					}
				}
				js, err := json.Marshal(driverSpec{Workspace: bx.ws, Argv: []string{exe}, Support: &s.sup})
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
				cmd.Env = []string{envDriver + "=" + string(js), envTIOCSTI + "=1", "PATH=" + os.Getenv("PATH"), "HOME=" + bx.home}
				var out bytes.Buffer
				cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, &out, &out
				// The terminal is the driver's controlling terminal, as a
				// shell's is for what it starts.
				cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
				_ = cmd.Run()
				if !strings.Contains(out.String(), "TIOCSTI:") {
					t.Fatalf("the command did not run: %s", out.String())
				}
				var queued int32
				if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, tty.Fd(), syscall.TIOCINQ, uintptr(unsafe.Pointer(&queued))); e != 0 {
					t.Fatal(e)
				}
				if strings.Contains(out.String(), "pushed") || queued != 0 {
					t.Errorf("the command pushed input into its terminal (%d bytes queued): %s", queued, out.String())
				}
			})
		}
	}
}

// Nothing a command starts outlives it: the kernel ends every process in
// its pid namespace once the command has ended, so a daemon (setsid,
// nohup, a double fork) cannot change the workspace after the command
// returned, when a person may be reading it or an approved command runs.
func TestBoundEndsWhatTheCommandLeft(t *testing.T) {
	exe := testExe(t)
	sup := Probe(t.Context(), "")
	for _, u := range users() {
		t.Run(u.name, func(t *testing.T) {
			bx := newBox(t, u, exe)
			// Each waits for the go the test gives once the command has
			// returned, then writes.
			gone := filepath.Join(bx.root, "returned")
			// (Without the pid namespace they would outlive the test: a
			// minute at most.)
			wait := `for i in $(seq 600); do [ -e ` + gone + ` ] && break; sleep 0.1; done; echo late > `
			q := ` >/dev/null 2>&1`
			out, code := bx.run(t, driverSpec{Support: &sup}, `(setsid bash -c '`+wait+`late1'`+q+` &); nohup bash -c '`+wait+`late2'`+q+` & (bash -c '`+wait+`late3'`+q+` & disown) ; echo started`)
			if code != 0 || !strings.Contains(out, "started") {
				t.Fatalf("status %d: %s", code, out)
			}
			if err := os.WriteFile(gone, nil, 0o644); err != nil {
				t.Fatal(err)
			}
			time.Sleep(1500 * time.Millisecond)
			for _, n := range []string{"late1", "late2", "late3"} {
				if _, err := os.Lstat(filepath.Join(bx.ws, n)); err == nil {
					t.Errorf("%s was written after the command had returned", n)
				}
			}
		})
	}
}

// An agent's settings at the workspace's top (Config.KeepNames: Claude
// Code's .claude, .mcp.json) are read-only to a bounded command, as .git
// is: their hooks and MCP servers run later, unbounded. A .claude deeper
// down is not the project's and stays writable.
func TestBoundKeepsAgentSettings(t *testing.T) {
	exe := testExe(t)
	sup := Probe(t.Context(), "")
	for _, u := range users() {
		t.Run(u.name, func(t *testing.T) {
			bx := newBox(t, u, exe)
			settings := map[string]string{
				".claude/settings.json": `{"hooks":{}}`,
				".mcp.json":             `{}`,
				"src/.claude/notes":     "nested\n",
			}
			for f, c := range settings {
				p := filepath.Join(bx.ws, f)
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(c), 0o644); err != nil {
					t.Fatal(err)
				}
				if u.uid >= 0 {
					for q := p; q != bx.ws; q = filepath.Dir(q) {
						if err := os.Lchown(q, u.uid, u.uid); err != nil {
							t.Fatal(err)
						}
					}
				}
			}
			out, code := bx.run(t, driverSpec{Support: &sup, KeepNames: []string{".claude", ".mcp.json"}}, `
echo '{"hooks":{"PreToolUse":[]}}' > .claude/settings.json && echo WROTE-SETTINGS
touch .claude/settings.local.json && echo MADE-LOCAL
rm -f .mcp.json; [ -e .mcp.json ] || echo REMOVED-MCP
mv .claude gone && echo MOVED
echo changed > src/.claude/notes && echo nested-ok`)
			if code != 0 || !strings.Contains(out, "nested-ok") {
				t.Fatalf("status %d, output:\n%s", code, out)
			}
			for _, bad := range []string{"WROTE-SETTINGS", "MADE-LOCAL", "REMOVED-MCP", "MOVED"} {
				if strings.Contains(out, bad) {
					t.Errorf("%s: the settings were changed; output:\n%s", bad, out)
				}
			}
			if !strings.Contains(out, "Read-only file system") {
				t.Errorf("no write was refused as read-only:\n%s", out)
			}
			for f, c := range settings {
				got, err := os.ReadFile(filepath.Join(bx.ws, f))
				if f == "src/.claude/notes" {
					c = "changed\n"
				}
				if err != nil || string(got) != c {
					t.Errorf("%s now holds %q (%v), want %q", f, got, err, c)
				}
			}
		})
	}
}

// An agent's settings a bounded command makes at the workspace's top where
// there were none (a .claude with disableAllHooks, a .mcp.json) do not
// stay: with namespaces the workspace is writable as a whole, and only
// what exists can be mounted read-only, so release moves them aside once
// the command has ended and says so; under Landlock alone the kernel
// refuses to make them. Other new entries at the top stay.
func TestBoundMovesSettingsItMade(t *testing.T) {
	exe := testExe(t)
	sup := Probe(t.Context(), "")
	if !sup.Namespaces || sup.LandlockABI < 1 {
		t.Fatalf("probe: %+v; want Landlock and namespaces on this machine", sup)
	}
	script := `mkdir .claude && echo '{"disableAllHooks":true}' > .claude/settings.json && echo MADE-CLAUDE
echo '{}' > .mcp.json && echo MADE-MCP
mkdir build && echo MADE-BUILD
true`
	for _, u := range users() {
		for _, c := range []struct {
			name      string
			sup       Support
			namespace bool
		}{
			{"namespaces", sup, true},
			{"landlock-alone", Support{LandlockABI: sup.LandlockABI}, false},
		} {
			t.Run(u.name+"/"+c.name, func(t *testing.T) {
				bx := newBox(t, u, exe)
				out, code := bx.run(t, driverSpec{Support: &c.sup, KeepNames: []string{".claude", ".mcp.json"}}, script)
				if code != 0 {
					t.Fatalf("status %d, output:\n%s", code, out)
				}
				for _, n := range []string{".claude", ".mcp.json"} {
					if _, err := os.Lstat(filepath.Join(bx.ws, n)); err == nil {
						t.Errorf("%s is at the workspace's top after the command; output:\n%s", n, out)
					}
				}
				moved, err := filepath.Glob(filepath.Join(bx.ws, ".claude.askops-moved-*", "settings.json"))
				if err != nil {
					t.Fatal(err)
				}
				if !c.namespace {
					if strings.Contains(out, "MADE-CLAUDE") || strings.Contains(out, "MADE-MCP") || len(moved) > 0 {
						t.Errorf("Landlock alone let the command make an agent's settings:\n%s", out)
					}
					return
				}
				if !strings.Contains(out, "MADE-CLAUDE") || !strings.Contains(out, "MADE-BUILD") {
					t.Fatalf("the command did not run as the test expects:\n%s", out)
				}
				if len(moved) != 1 {
					t.Fatalf("moved aside: %v; want the one .claude; output:\n%s", moved, out)
				}
				if got, _ := os.ReadFile(moved[0]); !strings.Contains(string(got), "disableAllHooks") {
					t.Errorf("the moved settings hold %q", got)
				}
				if _, err := os.Stat(filepath.Join(bx.ws, "build")); err != nil {
					t.Errorf("build, which is no agent's, did not stay: %v", err)
				}
				for _, want := range []string{"askops moved .claude to .claude.askops-moved-", ".mcp.json to .mcp.json.askops-moved-"} {
					if !strings.Contains(out, want) {
						t.Errorf("release did not say %q:\n%s", want, out)
					}
				}
			})
		}
	}
}

// A command that leaves the settings there before it as they were has
// nothing moved, and release says nothing.
func TestBoundMovesNothingItDidNotMake(t *testing.T) {
	exe := testExe(t)
	sup := Probe(t.Context(), "")
	bx := newBox(t, users()[0], exe)
	if err := os.Mkdir(filepath.Join(bx.ws, ".claude"), 0o755); err != nil {
		t.Fatal(err)
	}
	out, code := bx.run(t, driverSpec{Support: &sup, KeepNames: []string{".claude", ".mcp.json"}}, `ls -a >/dev/null; echo done`)
	if code != 0 || strings.Contains(out, "undone") {
		t.Fatalf("status %d, output:\n%s", code, out)
	}
	if fi, err := os.Stat(filepath.Join(bx.ws, ".claude")); err != nil || !fi.IsDir() {
		t.Errorf(".claude, there before the command, is gone: %v", err)
	}
}

// TestBoundHostsOpenTheirPortsOnly: agent.bound.hosts keeps the host's
// network, and Landlock has no rules by host, so a bounded command
// reached every TCP service of this machine, askops' Redis among them
// (where it could write a vote). It may now connect to the ports the
// hosts name (443 and 80 for a host alone) and to no other.
func TestBoundHostsOpenTheirPortsOnly(t *testing.T) {
	named, other := listenLoopback(t, func(net.Conn) {}), listenLoopback(t, func(net.Conn) {})
	exe := testExe(t)
	sup := Probe(t.Context(), "")
	if sup.LandlockABI < 4 {
		t.Fatalf("probe: %+v; want Landlock ABI ≥ 4 on this machine", sup)
	}
	script := `connect() { (exec 3<>/dev/tcp/127.0.0.1/$1) 2>/dev/null && echo "reached $1" || echo "refused $1"; }; ` +
		`connect ` + named + `; connect ` + other
	for _, u := range users() {
		t.Run(u.name, func(t *testing.T) {
			bx := newBox(t, u, exe)
			out, code := bx.run(t, driverSpec{Support: &sup, Hosts: []string{"example.com", "localhost:" + named}}, script)
			if code != 0 || !strings.Contains(out, "reached "+named) || !strings.Contains(out, "refused "+other) {
				t.Errorf("status %d, want the named port reached and the other refused:\n%s", code, out)
			}
		})
	}
	b, err := New(Config{Support: sup, Hosts: []string{"example.com", "github.com:22"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := b.Describe(); !strings.HasSuffix(got, "network open (agent.bound.hosts) to TCP ports 22, 80, 443") {
		t.Errorf("Describe() = %q", got)
	}
	for _, h := range []string{"github.com:0", "github.com:x", "github.com:65536", ":22", "a/b"} {
		if err := CheckHost(h); err == nil {
			t.Errorf("CheckHost(%q) takes it", h)
		}
	}
}

// listenLoopback is a TCP server on a free loopback port, closed when the
// test ends, that hands each connection to handle and closes it; it
// returns the port.
func listenLoopback(t *testing.T, handle func(net.Conn)) string {
	t.Helper()
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go serve(ln, handle)
	return strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
}

// serve accepts until ln is closed, handing each connection to handle.
func serve(ln net.Listener, handle func(net.Conn)) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		handle(c)
		c.Close()
	}
}
