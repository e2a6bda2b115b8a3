package policy

import (
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// A prefix is judged when granted by the same model that judges calls,
// without the file system: its program must have a model and its own
// words must be inside it. A prefix may stop anywhere a call goes on:
// before an option's value, before a subcommand.
func TestPrefixGrantRefusal(t *testing.T) {
	for _, tc := range []struct {
		prefix string
		want   string // a piece of the refusal; "" when grantable
	}{
		{"gpg", ""},
		{"/usr/bin/gpg --verify", ""},
		{"gpg -o", ""}, // -o's value comes with the call, and is judged then
		{"gpg -r", ""},
		{"gpg --homedir", "--homedir is not an option askops knows for gpg"},
		{"gpg --photo-viewer evil", "--photo-viewer"},
		{"gpg -o .git/hooks/x", "in .git"},
		{"gpg -o src/../.git/x", `".." element`},
		{"gpg -o .Git/x", "in .git"},
		{"gpg -o .git./x", "in .git"},
		{"gpg -o ~/x", "not a plain path"},
		{"gpg -o a*", "not a plain path"},
		{"gpg --output=x:y", "not a plain path"},
		{"openssl", ""},
		{"openssl x509", ""},
		{"openssl x509 -in", ""},
		{"openssl x509 --in x", "--in is not an option"}, // openssl would read it as -in: not in the model's spelling
		{"openssl x509 -in=x", "-in=x is not an option"},
		{"openssl ca", "no model of openssl ca"},
		{"openssl req -newkey rsa:4096", ""},
		{"openssl req -newkey ed25519", ""},
		{"openssl req -newkey ec:/etc/ssl/params.pem", "reads a file"},
		{"openssl req -newkey rsa:x", "key kind"},
		{"gh", ""},
		{"gh pr", ""},
		{"gh pr view", ""},
		{"gh api", "no model of gh api"},
		{"git push origin", ""},
		{"git push origin/x", "not the name of a configured remote"},
		{"git push --", ""},
		{"git log -5", ""},
		{"git log -5x", "is not an option askops knows for git log"},
		{"git status --porcelain=v2", ""},
		{"git status --porcelain=v2;x", "not a plain word"},
		{"git remote show", ""},
		{"git remote prune", "change what later pushes"},
		{"git branch topic", "makes a branch"},
		{"unzip -l", ""},
		{"unzip --", "-- is not an option"},
		{"chmod 2755", "not a mode"},
		{"chmod a+rwx,o-w", ""},
		{"chmod u=g", "not a mode"},
		{"chown root:wheel", ""},
		{"chown 'root;x'", "not an owner"},
		{"kubectl get pods -o json", ""},
		{"kubectl get pods -o jsonpath-file=x", "output format"},
		{"docker ps --last=3", ""},
		{"docker ps --last=x", "not a count"},
		{"docker ps --all=true", ""},
		{"docker ps --all=yes", "takes no value"},
		{"go list -m=false", ""},
		{"go list --deps", ""},
		{"go list -json=ImportPath", ""},
		{"go build -race=false", "#include"},
		{"go vet", "#include"},
		{"patch", "patch writes the files its input names"},
		{"tar", "no model of tar"},
		{"rm", "no model of rm"},
		{"curl", "no model of curl"},
	} {
		got := PrefixGrantRefusal(strings.Fields(strings.ReplaceAll(tc.prefix, "'", "")))
		switch {
		case tc.want == "" && got != "":
			t.Errorf("PrefixGrantRefusal(%q) = %q, want grantable", tc.prefix, got)
		case tc.want != "" && !strings.Contains(got, tc.want):
			t.Errorf("PrefixGrantRefusal(%q) = %q, want it to say %q", tc.prefix, got, tc.want)
		}
	}
}

// The note an approver reads fits beside any scope in a confirm dialog.
func TestPrefixGrantNoteIsShort(t *testing.T) {
	for _, p := range []string{"gpg", "openssl", "openssl x509", "unzip", "chmod", "chown", "git push", "git fetch",
		"git remote", "git status", "git branch", "kubectl get", "docker ps", "gh pr view", "go list", "ls", "grep"} {
		note := PrefixGrantNote(strings.Fields(p))
		if note == "" || len(note) > 100 {
			t.Errorf("PrefixGrantNote(%q) = %q (%d bytes), want a short note", p, note, len(note))
		}
	}
}

// The config reader keeps git's syntax: what it cannot read is an error,
// never a guess (a guess could miss an include or a hooks path).
func TestParseGitConfig(t *testing.T) {
	const text = "\ufeff# comment\n" +
		"[core]\n\trepositoryformatversion = 0\n\tbare = false ; trailing comment\n\tlogAllRefUpdates\n" +
		"[remote \"Origin \\\"q\\\"\"]\n\turl = https://github.com/acme/app.git  \n\tFETCH = +refs/heads/*:refs/remotes/origin/*\n" +
		"[Branch.Main] remote = origin\n" +
		"[alias]\n\tx = \"!echo \\\"a;b\\\" # not a comment\"\n\ty = one \\\n two\n\tz = \"  kept  \"\n\tt = a\\tb\n"
	got, err := grantParseGitConfig(text)
	if err != nil {
		t.Fatal(err)
	}
	want := []gitConfigEntry{
		{section: "core", key: "repositoryformatversion", value: "0"},
		{section: "core", key: "bare", value: "false"},
		{section: "core", key: "logallrefupdates"},
		{section: "remote", sub: `Origin "q"`, key: "url", value: "https://github.com/acme/app.git"},
		{section: "remote", sub: `Origin "q"`, key: "fetch", value: "+refs/heads/*:refs/remotes/origin/*"},
		{section: "branch", sub: "main", key: "remote", value: "origin"},
		{section: "alias", key: "x", value: `!echo "a;b" # not a comment`},
		{section: "alias", key: "y", value: "one  two"},
		{section: "alias", key: "z", value: "  kept  "},
		{section: "alias", key: "t", value: "a\tb"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("parsed\n%+v\nwant\n%+v", got, want)
	}
	for _, bad := range []string{
		"url = x\n",                       // outside a section
		"[remote \"o]\nurl = x\n",         // unterminated subsection
		"[remote.o x]\n",                  // bad header
		"[core]\n\tx = \"open\n",          // unterminated quote
		"[core]\n\tx = a\\qb\n",           // unknown escape
		"[core]\n\t= x\n",                 // no key
		"[core]\n\tx y = 1\n",             // a space in a key
		"[core]\n\tx = 1\n[\n",            // empty header
		"[core]\n\t9x = 1\n",              // a key starting with a digit
		"[remote \"o\"] url = a\n[core\n", // header without ]
	} {
		if _, err := grantParseGitConfig(bad); err == nil {
			t.Errorf("grantParseGitConfig(%q) = nil error, want it refused", bad)
		}
	}
}

func gitIn(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

func realTemp(t *testing.T) string {
	t.Helper()
	d, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// A push grant finds the repository as git does (a .git directory, a .git
// file of a linked worktree with its commondir, a bare repository) and
// trusts its config only where the agent cannot write it: a git directory
// that is a plain workspace directory (a bare repository the agent made,
// a .git file pointing into the workspace) covers nothing.
func TestPrefixGrantReadsTheRepository(t *testing.T) {
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	t.Setenv("GIT_CONFIG_GLOBAL", "")
	t.Setenv("XDG_CONFIG_HOME", "")
	t.Setenv("HOME", t.TempDir())
	push := strings.Fields("git push")
	call := strings.Fields("git push origin main")

	// A linked worktree whose repository lives outside the workspace.
	main := realTemp(t)
	gitIn(t, main, "init", "-q", "-b", "main")
	gitIn(t, main, "remote", "add", "origin", "https://github.com/acme/app.git")
	gitIn(t, main, "-c", "user.name=x", "-c", "user.email=x@x", "commit", "-q", "--allow-empty", "--no-verify", "-m", "x")
	wt := filepath.Join(realTemp(t), "wt")
	gitIn(t, main, "worktree", "add", "-q", wt)
	if why := PrefixNotCovered(push, call, wt, wt); why != "" {
		t.Errorf("in a linked worktree: %q, want covered (origin is configured in the common config)", why)
	}
	if why := PrefixNotCovered(push, strings.Fields("git push evil main"), wt, wt); why == "" {
		t.Error("in a linked worktree, a remote nobody configured is covered")
	}

	// A .git file pointing at a workspace directory the agent could have
	// written (config, hooks).
	ws := realTemp(t)
	gitIn(t, ws, "init", "-q", "--bare", "gd")
	gitIn(t, filepath.Join(ws, "gd"), "remote", "add", "origin", "https://github.com/acme/app.git")
	if err := os.WriteFile(filepath.Join(ws, ".git"), []byte("gitdir: gd\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if why := PrefixNotCovered(push, call, ws, ws); !strings.Contains(why, "workspace directory") {
		t.Errorf("a .git file into the workspace: %q, want not covered", why)
	}
	// A bare repository in the workspace, as the working directory.
	if why := PrefixNotCovered(push, call, filepath.Join(ws, "gd"), ws); !strings.Contains(why, "workspace directory") {
		t.Errorf("a bare repository in the workspace: %q, want not covered", why)
	}

	// No repository: nothing to push to; git status has nothing to run.
	empty := realTemp(t)
	if why := PrefixNotCovered(push, call, empty, empty); why == "" {
		t.Error("git push with no repository is covered")
	}
	if why := PrefixNotCovered(strings.Fields("git status"), strings.Fields("git status"), empty, empty); why != "" {
		t.Errorf("git status with no repository: %q, want covered", why)
	}

	// A config that does not parse covers nothing.
	bad := realTemp(t)
	gitIn(t, bad, "init", "-q")
	f, err := os.OpenFile(filepath.Join(bad, ".git", "config"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("[remote \"origin\"]\n\turl = https://github.com/acme/app.git\n[oops\n")
	f.Close()
	if why := PrefixNotCovered(push, call, bad, bad); !strings.Contains(why, "does not parse") {
		t.Errorf("an unreadable config: %q, want not covered", why)
	}

	// A call run inside .git, or with no workspace, covers nothing.
	if why := PrefixNotCovered([]string{"ls"}, []string{"ls"}, filepath.Join(main, ".git"), main); why == "" {
		t.Error("ls run in .git is covered")
	}
	if why := PrefixNotCovered([]string{"ls"}, []string{"ls"}, main, ""); why == "" {
		t.Error("a call with no workspace is covered")
	}
}

// BenchmarkPrefixNotCovered is the cover-time cost of a prefix grant: a
// push (finding the repository, reading the system, user and repository
// configs) and a write (resolving links, PATH).
func BenchmarkPrefixNotCovered(b *testing.B) {
	b.Setenv("HOME", b.TempDir())
	ws, err := filepath.EvalSymlinks(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	for _, args := range [][]string{{"init", "-q"}, {"remote", "add", "origin", "https://github.com/acme/app.git"}} {
		if out, err := exec.Command("git", append([]string{"-C", ws}, args...)...).CombinedOutput(); err != nil {
			b.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	for _, tc := range []struct{ name, prefix, command string }{
		{"git-push", "git push", "git push --dry-run origin main"},
		{"gpg-output", "gpg", "gpg --batch -o out/a.gpg --encrypt -r alice src/a.txt"},
	} {
		prefix, command := strings.Fields(tc.prefix), strings.Fields(tc.command)
		b.Run(tc.name, func(b *testing.B) {
			for b.Loop() {
				if why := PrefixNotCovered(prefix, command, ws, ws); why != "" {
					b.Fatal(why)
				}
			}
		})
	}
}
