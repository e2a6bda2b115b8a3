package e2e

import (
	"bytes"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// sandboxUID is the throwaway unprivileged user the outside check runs as
// when the tests run as root (CI): no passwd entry, owns only what the
// test gives it.
const sandboxUID = 54321

// The outside check of `bot sandbox`: the ten cases (and the ways
// out of a bound the issue names: find -H, /proc/self/cwd, a descriptor
// the parent left open, bash run again, setsid, nohup, and npm test
// beside go test), as root and as an unprivileged user, through the built
// binary exactly as an outside test drives it. Refused cases fail inside
// the command with the system's error and leave .git, the denied .env and
// everything outside untouched.
func TestSandboxOutsideCheck(t *testing.T) {
	t.Parallel() // its commands run in processes of their own; it shares nothing
	requireBot(t)
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatal("go is not on PATH")
	}
	npmBin, err := exec.LookPath("npm")
	if err != nil {
		t.Fatal("npm is not on PATH (.ci/run installs it)")
	}
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var accepted atomic.Int64
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			c.Close()
		}
	}()
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)

	cases := []struct {
		name, script string
		code         int    // -1: any failure
		has, hasNot  string // in the output
	}{
		// Outside the writable paths every mount is read-only in the
		// command's namespace (chmod and touch are refused there too), so
		// a write outside fails with EROFS before Landlock's EACCES.
		{"write into .git", `echo x > .git/HEAD`, -1, "Read-only file system", ""},
		{"write into .git through a link", `echo x > src/glink/config`, -1, "Read-only file system", ""},
		{"find -L -delete through links", `find -L src -name HEAD -delete`, -1, "Read-only file system", ""},
		{"find src/glink/ -delete", `find src/glink/ -delete`, -1, "Read-only file system", ""},
		{"write outside", `echo x > "$OUTSIDE/new"`, -1, "Read-only file system", ""},
		{"read a denied .env", `cat .env`, -1, "Permission denied", "hunter2"},
		{"loopback connect", `exec 3<>/dev/tcp/127.0.0.1/` + port + ` && echo connected`, -1, "Connection refused", "connected"},
		{"workspace write", `echo hi > new.txt && cat new.txt`, 0, "hi", ""},
		{"exit status", `exit 42`, 42, "", ""},
		{"go test inside", `go test -count=1 ./...`, 0, "ok  \texample.com/m", ""},

		{"find -H src/glink -delete", `find -H src/glink -name HEAD -delete`, -1, "Read-only file system", ""},
		{"npm test inside", `npm test`, 0, "npm test ok", ""},
		{"write outside through /proc/self/cwd", `echo x > /proc/self/cwd/../outside/new`, -1, "Read-only file system", ""},
		{"inherited descriptor", `echo x >&3; [ ! -e /proc/self/fd/3 ] && echo no-3`, 0, "no-3", ""},
		{"bash run again", `exec bash -c 'exec bash -c "echo x > .git/HEAD; echo y > $OUTSIDE/new"'`, -1, "Read-only file system", ""},
		{"setsid", `setsid -w bash -c 'echo x > "$OUTSIDE/setsid"; echo x > .git/setsid'`, -1, "Read-only file system", ""},
		{"nohup", `nohup bash -c 'echo x > "$OUTSIDE/nohup"' 2>&1; cat "$OUTSIDE/nohup"`, -1, "Read-only file system", ""},
	}
	users := []struct {
		name string
		uid  int
	}{{"self", -1}}
	if os.Getuid() == 0 {
		users = append(users, struct {
			name string
			uid  int
		}{"unprivileged", sandboxUID})
	}
	for _, u := range users {
		t.Run(u.name, func(t *testing.T) {
			bot, home := sandboxBot(t, u.uid)
			for _, c := range cases {
				t.Run(c.name, func(t *testing.T) {
					root := sandboxBox(t, u.uid)
					ws, outside := filepath.Join(root, "ws"), filepath.Join(root, "outside")
					argv := []string{bot, "sandbox", "-workspace", ws, "-config", filepath.Join(root, "askops.yaml"), "--", "bash", "-c", c.script}
					if u.uid >= 0 {
						id := strconv.Itoa(u.uid)
						argv = append([]string{"setpriv", "--reuid=" + id, "--regid=" + id, "--clear-groups", "--inh-caps=-all"}, argv...)
					}
					ctx := testCtxFor(t, 10*time.Minute) // a cold build cache on a loaded box
					cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
					cmd.Dir = ws
					cmd.Env = []string{"PATH=" + filepath.Dir(goBin) + ":" + filepath.Dir(npmBin) + ":/usr/local/bin:/usr/bin:/bin", "HOME=" + home, "LANG=C",
						"OUTSIDE=" + outside, "GOFLAGS=-mod=mod", "GOTOOLCHAIN=local"}
					// OUTSIDE is not in the command's environment (bot sandbox
					// passes the agent's minimal one): the script exports it.
					cmd.Args[len(cmd.Args)-1] = "export OUTSIDE=" + outside + "; " + c.script
					if c.name == "inherited descriptor" {
						// bot sandbox gets outside/keep open for writing as its
						// descriptor 3, as a careless parent leaves one.
						f, err := os.OpenFile(filepath.Join(outside, "keep"), os.O_RDWR, 0)
						if err != nil {
							t.Fatal(err)
						}
						defer f.Close()
						cmd.ExtraFiles = []*os.File{f}
					}
					var out bytes.Buffer
					cmd.Stdout, cmd.Stderr = &out, &out
					err := cmd.Run()
					var ee *exec.ExitError
					if err != nil && !errors.As(err, &ee) {
						t.Fatal(err)
					}
					code := cmd.ProcessState.ExitCode()
					t.Logf("status %d: %s", code, strings.TrimSpace(out.String()))
					if code == 126 || code == 2 {
						t.Fatalf("bot sandbox did not run the command (status %d):\n%s", code, out.String())
					}
					if (c.code >= 0 && code != c.code) || (c.code < 0 && code == 0) {
						t.Errorf("status %d, want %d (-1: a failure); output:\n%s", code, c.code, out.String())
					}
					if c.has != "" && !strings.Contains(out.String(), c.has) {
						t.Errorf("output lacks %q:\n%s", c.has, out.String())
					}
					if c.hasNot != "" && strings.Contains(out.String(), c.hasNot) {
						t.Errorf("output holds %q:\n%s", c.hasNot, out.String())
					}
					sandboxUntouched(t, root)
				})
			}
			if n := accepted.Load(); n != 0 {
				t.Errorf("the loopback listener outside the bound took %d connections", n)
			}
		})
	}
}

// sandboxBot is the bot binary where uid may run it, and a home for it
// that outlives the test, so its Go build cache (the default writable
// ~/.cache) is filled once per machine.
func sandboxBot(t *testing.T, uid int) (bot, home string) {
	t.Helper()
	if uid < 0 {
		h, err := os.UserHomeDir()
		if err != nil {
			t.Fatal(err)
		}
		return botBinary, h
	}
	dir := t.TempDir()
	for _, d := range []string{filepath.Dir(dir), dir} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(botBinary)
	if err != nil {
		t.Fatal(err)
	}
	bot = filepath.Join(dir, "bot")
	if err := os.WriteFile(bot, b, 0o755); err != nil {
		t.Fatal(err)
	}
	home = filepath.Join(os.TempDir(), "askops-sandbox-test-home")
	if err := os.MkdirAll(home, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(home, uid, uid); err != nil {
		t.Fatal(err)
	}
	return bot, home
}

// sandboxBox makes a workspace (a git repository's .git, a secret .env, a
// Go module, src/glink -> .git), a directory outside it and a config whose
// read_file rule denies **/.env, all owned by uid.
func sandboxBox(t *testing.T, uid int) string {
	t.Helper()
	root := t.TempDir()
	for _, d := range []string{filepath.Dir(root), root} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	files := map[string]string{
		"ws/.git/HEAD":    "ref: refs/heads/main\n",
		"ws/.git/config":  "[core]\n",
		"ws/.env":         "SECRET=hunter2\n",
		"ws/go.mod":       "module example.com/m\n\ngo 1.22\n",
		"ws/m.go":         "package m\n\nfunc Two() int { return 2 }\n",
		"ws/m_test.go":    "package m\n\nimport \"testing\"\n\nfunc TestTwo(t *testing.T) {\n\tif Two() != 2 {\n\t\tt.Fatal(Two())\n\t}\n}\n",
		"ws/src/a.txt":    "a\n",
		"ws/package.json": `{"name":"p","version":"1.0.0","private":true,"scripts":{"test":"node test.js"}}` + "\n",
		"ws/test.js":      "const fs = require('fs'), os = require('os');\nfs.writeFileSync(os.tmpdir() + '/t', 'x');\nfs.writeFileSync('npm-ran', 'yes');\nconsole.log('npm test ok');\n",
		"outside/keep":    "keep\n",
		"askops.yaml":     "policy:\n  rules:\n    - tool: read_file\n      path: \"**/.env\"\n      decision: deny\n",
	}
	for name, body := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("../.git", filepath.Join(root, "ws", "src", "glink")); err != nil {
		t.Fatal(err)
	}
	if uid >= 0 {
		if err := filepath.Walk(root, func(p string, _ os.FileInfo, err error) error {
			if err != nil {
				return err
			}
			return os.Lchown(p, uid, uid)
		}); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func sandboxUntouched(t *testing.T, root string) {
	t.Helper()
	for name, want := range map[string]string{
		"ws/.git/HEAD": "ref: refs/heads/main\n", "ws/.git/config": "[core]\n",
		"ws/.env": "SECRET=hunter2\n", "outside/keep": "keep\n",
	} {
		if b, err := os.ReadFile(filepath.Join(root, name)); err != nil || string(b) != want {
			t.Errorf("%s: %q, %v; want it untouched", name, b, err)
		}
	}
	if entries, _ := os.ReadDir(filepath.Join(root, "outside")); len(entries) != 1 {
		t.Errorf("outside holds %d entries, want keep alone", len(entries))
	}
}

// check-config, serve's start line and /readyz name the bound in force:
// on this machine, Landlock and namespaces.
func TestBoundNamedEverywhere(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	w := newWorld(t)
	a := w.serve(ctx, t, "A", settings{})
	const want = ", namespaces yes"
	code, body, err := httpGet(ctx, a.base+"/readyz")
	if err != nil || code != 200 || !strings.Contains(body, "bound: landlock ABI ") || !strings.Contains(body, want) {
		t.Errorf("/readyz: %d %q, %v; want it to name the bound", code, body, err)
	}
	logs := a.stdout() + a.stderr()
	line := ""
	for l := range strings.Lines(logs) {
		if strings.Contains(l, "askops serving") {
			line = l
		}
	}
	if !strings.Contains(line, "landlock ABI ") || !strings.Contains(line, want) {
		t.Errorf("serve's start line does not name the bound: %q", line)
	}
	p := w.start(t, "check", "check-config", "-config", a.config)
	p.wait(ctx, t)
	if out := p.stdout(); !strings.Contains(out, "bound: landlock ABI ") || !strings.Contains(out, want) {
		t.Errorf("check-config does not name the bound:\n%s", out)
	}
}
