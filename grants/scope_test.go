package grants_test

import (
	"strings"
	"testing"

	"github.com/askops/askops/grants"
	"github.com/askops/askops/policy"
)

const ws = "/ws"

func bashCall(command, cwd string) policy.Call {
	return policy.Call{Tool: "bash", Safety: policy.SideEffect, Command: command, Cwd: cwd, Workspace: ws}
}

func fileCall(tool, path, cwd string) policy.Call {
	return policy.Call{Tool: tool, Path: path, Cwd: cwd, Workspace: ws}
}

// must(t)(grants.ScopeFor(c)) fails the test when the constructor refuses.
func must(t testing.TB) func(grants.Scope, error) grants.Scope {
	return func(s grants.Scope, err error) grants.Scope {
		t.Helper()
		if err != nil {
			t.Fatalf("scope: %v", err)
		}
		return s
	}
}

func TestScopeFor(t *testing.T) {
	tests := []struct {
		name string
		call policy.Call
		want grants.Scope // zero: an error is expected
	}{
		{"bash exact, trimmed", bashCall("  npm test \n", "/ws/app"), grants.Scope{Tool: "bash", Kind: grants.KindExact, Command: "npm test", Cwd: "/ws/app"}},
		{"bash cwd cleaned", bashCall("ls", "/ws/app/./"), grants.Scope{Tool: "bash", Kind: grants.KindExact, Command: "ls", Cwd: "/ws/app"}},
		{"bash without cwd runs in the workspace", bashCall("ls", ""), grants.Scope{Tool: "bash", Kind: grants.KindExact, Command: "ls", Cwd: "/ws"}},
		{"bash compound command is granted exactly", bashCall("make && make test", "/ws"), grants.Scope{Tool: "bash", Kind: grants.KindExact, Command: "make && make test", Cwd: "/ws"}},
		{"bash empty command", bashCall("   ", "/ws"), grants.Scope{}},
		{"bash cwd outside workspace", bashCall("ls", "/etc"), grants.Scope{}},
		{"bash cwd escaping with ..", bashCall("ls", "/ws/../etc"), grants.Scope{}},
		{"bash relative cwd", policy.Call{Tool: "bash", Command: "ls", Cwd: "app"}, grants.Scope{}},
		{"bash no cwd, no workspace", policy.Call{Tool: "bash", Command: "ls"}, grants.Scope{}},
		{"write_file relative", fileCall("write_file", "src/main.go", ""), grants.Scope{Tool: "write_file", Kind: grants.KindPath, Path: "src/main.go"}},
		{"write_file relative to cwd", fileCall("write_file", "main.go", "/ws/src"), grants.Scope{Tool: "write_file", Kind: grants.KindPath, Path: "src/main.go"}},
		{"edit_file absolute inside", fileCall("edit_file", "/ws/src//main.go", ""), grants.Scope{Tool: "edit_file", Kind: grants.KindPath, Path: "src/main.go"}},
		{"read_file dot slash", fileCall("read_file", "./README.md", ""), grants.Scope{Tool: "read_file", Kind: grants.KindPath, Path: "README.md"}},
		{"list_files without path", fileCall("list_files", "", ""), grants.Scope{Tool: "list_files", Kind: grants.KindPath, Path: "."}},
		{"write_file outside", fileCall("write_file", "/etc/passwd", ""), grants.Scope{}},
		{"write_file sibling with workspace prefix", fileCall("write_file", "/ws2/x", ""), grants.Scope{}},
		{"write_file dotdot escape", fileCall("write_file", "../etc/passwd", ""), grants.Scope{}},
		{"write_file dotdot staying inside", fileCall("write_file", "src/../main.go", ""), grants.Scope{}},
		{"write_file empty path", fileCall("write_file", "", ""), grants.Scope{}},
		{"write_file workspace root", fileCall("write_file", ".", ""), grants.Scope{}},
		{"write_file without workspace", policy.Call{Tool: "write_file", Path: "/ws/a"}, grants.Scope{}},
		{"write_file control char", fileCall("write_file", "a\nb", ""), grants.Scope{}},
		{"write_file cwd with ..", fileCall("write_file", "x", "/ws/link/.."), grants.Scope{}},
		{"write_file workspace with ..", policy.Call{Tool: "write_file", Path: "x", Workspace: "/ws/a/.."}, grants.Scope{}},
		{"unknown tool", policy.Call{Tool: "http_get", Workspace: ws}, grants.Scope{}},
		{"empty tool", policy.Call{Workspace: ws}, grants.Scope{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := grants.ScopeFor(tt.call)
			if tt.want == (grants.Scope{}) {
				if err == nil {
					t.Fatalf("ScopeFor = %+v, want an error", got)
				}
				if grants.ErrorCode(err) != grants.CodeInvalid {
					t.Fatalf("error code %q, want invalid (%v)", grants.ErrorCode(err), err)
				}
				return
			}
			if err != nil {
				t.Fatalf("ScopeFor: %v", err)
			}
			if got != tt.want {
				t.Fatalf("ScopeFor = %+v, want %+v", got, tt.want)
			}
			if !got.Covers(tt.call) {
				t.Fatalf("the default scope %v does not cover its own call", got)
			}
		})
	}
}

func TestPrefixScope(t *testing.T) {
	ok := []string{"git push", "gpg --verify", "go list ./...", "git status", "ls -la", "'git' push"}
	for _, p := range ok {
		if _, err := grants.PrefixScope(p, "/ws"); err != nil {
			t.Errorf("PrefixScope(%q) refused: %v", p, err)
		}
	}
	refused := []string{
		"", "   ",
		"bash -c", "bash -c 'echo hi'", "bash", "sh -c", "sh", "zsh -c",
		"python -c", "python3 -c", "python", "node -e", "node", "perl -e", "ruby -e",
		"env", "env FOO=1", "sudo", "sudo git", "xargs", "xargs rm", "eval", "exec", "source", ". ./x",
		"timeout 5", "nice", "nohup", "find . -exec", "awk", "git", "git -c", "npm run", "npx",
		"git push; rm -rf /", "git push && ls", "git push || ls", "git push | tee", "git push > /etc/x",
		"git push &", "(git push)", "{ git push; }", "git push $(evil)", "git push `evil`",
		"git push $X", "FOO=1 git push", "git push\nrm -rf /", "! git push", "git push *",
		"git push <<EOF\nx\nEOF", "if true; then git push; fi", "git push 'unterminated",
	}
	for _, p := range refused {
		s, err := grants.PrefixScope(p, "/ws")
		if err == nil {
			t.Errorf("PrefixScope(%q) = %v, want refused", p, s)
			continue
		}
		if grants.ErrorCode(err) != grants.CodeInvalid {
			t.Errorf("PrefixScope(%q): code %q, want invalid", p, grants.ErrorCode(err))
		}
	}
	for _, cwd := range []string{"", "ws", "./ws"} {
		if _, err := grants.PrefixScope("git push", cwd); err == nil {
			t.Errorf("PrefixScope with cwd %q accepted", cwd)
		}
	}
	s := must(t)(grants.PrefixScope("  git push ", "/ws/"))
	if s.Command != "git push" || s.Cwd != "/ws" {
		t.Errorf("PrefixScope not normalized: %+v", s)
	}
}

func TestDirAndPathScope(t *testing.T) {
	tests := []struct {
		name, tool, path string
		dir              bool
		want             string // "" = refused
	}{
		{"dir relative", "read_file", "docs", true, "docs"},
		{"dir absolute inside", "write_file", "/ws/src/pkg/", true, "src/pkg"},
		{"dir whole workspace", "read_file", "/ws", true, "."},
		{"dir outside", "read_file", "/etc", true, ""},
		{"dir dotdot", "read_file", "docs/../..", true, ""},
		{"dir not a file tool", "bash", "docs", true, ""},
		{"dir empty", "read_file", "", true, ""},
		{"path relative", "edit_file", "src/main.go", false, "src/main.go"},
		{"path outside", "edit_file", "/ws-other/main.go", false, ""},
		{"path root", "edit_file", "/ws", false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var s grants.Scope
			var err error
			if tt.dir {
				s, err = grants.DirScope(tt.tool, tt.path, ws)
			} else {
				s, err = grants.PathScope(tt.tool, tt.path, ws)
			}
			if tt.want == "" {
				if err == nil {
					t.Fatalf("= %+v, want refused", s)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if s.Path != tt.want || s.Tool != tt.tool {
				t.Fatalf("= %+v, want path %q", s, tt.want)
			}
		})
	}
	if _, err := grants.DirScope("read_file", "docs", "relative/ws"); err == nil {
		t.Error("DirScope with a relative workspace accepted")
	}
}

func TestValidateRefusesMalformedScopes(t *testing.T) {
	bad := []grants.Scope{
		{},
		{Tool: "bash", Kind: "glob", Command: "ls", Cwd: "/ws"},
		{Tool: "bash", Kind: grants.KindExact, Command: "", Cwd: "/ws"},
		{Tool: "bash", Kind: grants.KindExact, Command: " ls", Cwd: "/ws"},
		{Tool: "bash", Kind: grants.KindExact, Command: "ls", Cwd: ""},
		{Tool: "bash", Kind: grants.KindExact, Command: "ls", Cwd: "ws"},
		{Tool: "bash", Kind: grants.KindExact, Command: "ls", Cwd: "/ws/../etc"},
		{Tool: "bash", Kind: grants.KindExact, Command: "ls", Cwd: "/ws/"},
		{Tool: "bash", Kind: grants.KindExact, Command: "ls", Cwd: "/ws", Path: "x"},
		{Tool: "bash", Kind: grants.KindPrefix, Command: "bash -c", Cwd: "/ws"},
		{Tool: "bash", Kind: grants.KindPrefix, Command: "git push; rm -rf /", Cwd: "/ws"},
		{Tool: "bash", Kind: grants.KindPath, Path: "x"},
		{Tool: "read_file", Kind: grants.KindExact, Command: "ls", Cwd: "/ws"},
		{Tool: "read_file", Kind: grants.KindPath, Path: ""},
		{Tool: "read_file", Kind: grants.KindPath, Path: "/etc/passwd"},
		{Tool: "read_file", Kind: grants.KindPath, Path: "../x"},
		{Tool: "read_file", Kind: grants.KindPath, Path: "a/../b"},
		{Tool: "read_file", Kind: grants.KindPath, Path: "a//b"},
		{Tool: "read_file", Kind: grants.KindPath, Path: "a/"},
		{Tool: "read_file", Kind: grants.KindPath, Path: "./a"},
		{Tool: "read_file", Kind: grants.KindPath, Path: "a", Cwd: "/ws"},
		{Tool: "read_file", Kind: grants.KindDir, Path: "a\x00b"},
		{Tool: "http_get", Kind: grants.KindPath, Path: "a"},
	}
	for _, s := range bad {
		if err := s.Validate(); err == nil {
			t.Errorf("Validate(%+v) = nil, want an error", s)
		} else if grants.ErrorCode(err) != grants.CodeInvalid {
			t.Errorf("Validate(%+v): code %q", s, grants.ErrorCode(err))
		}
		// An invalid scope covers nothing, however it was made.
		for _, c := range []policy.Call{bashCall(s.Command, s.Cwd), bashCall("ls", "/ws"), fileCall(s.Tool, s.Path, "")} {
			if s.Covers(c) {
				t.Errorf("invalid scope %+v covers %+v", s, c)
			}
		}
	}
}

func TestCoversNeverWidens(t *testing.T) {
	prefix := must(t)(grants.PrefixScope("git log", "/ws"))
	exact := must(t)(grants.ScopeFor(bashCall("npm test", "/ws/app")))
	path := must(t)(grants.ScopeFor(fileCall("write_file", "src/main.go", "")))
	dir := must(t)(grants.DirScope("read_file", "docs", ws))
	whole := must(t)(grants.DirScope("list_files", ".", ws))
	outside := must(t)(grants.PrefixScope("ls", "/etc")) // made without a workspace

	tests := []struct {
		name  string
		scope grants.Scope
		call  policy.Call
		want  bool
	}{
		{"prefix: itself", prefix, bashCall("git log", "/ws"), true},
		{"prefix: with arguments", prefix, bashCall("git log -5 main", "/ws"), true},
		{"prefix: extra spaces", prefix, bashCall("  git   log   main ", "/ws"), true},
		{"prefix: quoted words", prefix, bashCall(`'git' "log" main`, "/ws"), true},
		{"prefix: cwd omitted means workspace", prefix, bashCall("git log", ""), true},
		{"prefix: ; rm", prefix, bashCall("git log; rm -rf /", "/ws"), false},
		{"prefix: newline rm", prefix, bashCall("git log\nrm -rf /", "/ws"), false},
		{"prefix: $(…)", prefix, bashCall("git log $(evil)", "/ws"), false},
		{"prefix: backticks", prefix, bashCall("git log `evil`", "/ws"), false},
		{"prefix: <(…)", prefix, bashCall("git log <(evil)", "/ws"), false},
		{"prefix: &&", prefix, bashCall("git log && x", "/ws"), false},
		{"prefix: ||", prefix, bashCall("git log || x", "/ws"), false},
		{"prefix: pipe to sh", prefix, bashCall("git log | sh", "/ws"), false},
		{"prefix: redirect", prefix, bashCall("git log > /etc/x", "/ws"), false},
		{"prefix: stderr redirect", prefix, bashCall("git log 2>/etc/x", "/ws"), false},
		{"prefix: background", prefix, bashCall("git log & evil", "/ws"), false},
		{"prefix: subshell", prefix, bashCall("(git log)", "/ws"), false},
		{"prefix: variable", prefix, bashCall("git log $REMOTE", "/ws"), false},
		{"prefix: glob", prefix, bashCall("git log *", "/ws"), false},
		{"prefix: assignment", prefix, bashCall("GIT_SSH_COMMAND=evil git log", "/ws"), false},
		{"prefix: receive-pack runs code", prefix, bashCall("git log --receive-pack=evil main", "/ws"), false},
		{"prefix: sudo in front", prefix, bashCall("sudo git log", "/ws"), false},
		{"prefix: git -c in front", prefix, bashCall("git -c core.sshCommand=evil log", "/ws"), false},
		{"prefix: word run together", prefix, bashCall("git logx", "/ws"), false},
		{"prefix: shorter", prefix, bashCall("git", "/ws"), false},
		{"prefix: other command", prefix, bashCall("git push", "/ws"), false},
		{"prefix: does not parse", prefix, bashCall("git log 'oops", "/ws"), false},
		{"prefix: other cwd", prefix, bashCall("git log", "/ws/sub"), false},
		{"prefix: cwd outside workspace", prefix, bashCall("git log", "/tmp"), false},
		{"prefix: other tool", prefix, policy.Call{Tool: "shell", Command: "git log", Cwd: "/ws", Workspace: ws}, false},
		{"prefix: scope cwd outside the call's workspace", outside, bashCall("ls", "/etc"), false},

		{"exact: itself", exact, bashCall("npm test", "/ws/app"), true},
		{"exact: surrounding space", exact, bashCall(" npm test\n", "/ws/app/"), true},
		{"exact: other cwd", exact, bashCall("npm test", "/ws"), false},
		{"exact: workspace default cwd differs", exact, bashCall("npm test", ""), false},
		{"exact: more arguments", exact, bashCall("npm test -- --x", "/ws/app"), false},
		{"exact: appended command", exact, bashCall("npm test; rm -rf /", "/ws/app"), false},
		{"exact: inner spacing differs", exact, bashCall("npm  test", "/ws/app"), false},
		{"exact: other tool", exact, policy.Call{Tool: "write_file", Command: "npm test", Cwd: "/ws/app", Workspace: ws}, false},

		{"path: itself", path, fileCall("write_file", "src/main.go", ""), true},
		{"path: absolute", path, fileCall("write_file", "/ws/src/main.go", ""), true},
		{"path: relative to cwd", path, fileCall("write_file", "main.go", "/ws/src"), true},
		{"path: unclean", path, fileCall("write_file", "./src//main.go", ""), true},
		{"path: dotdot back in", path, fileCall("write_file", "src/../src/main.go", ""), false},
		{"path: dotdot escape", path, fileCall("write_file", "../ws/src/main.go", ""), false},
		{"path: other file", path, fileCall("write_file", "src/other.go", ""), false},
		{"path: suffix", path, fileCall("write_file", "src/main.go.bak", ""), false},
		{"path: under it", path, fileCall("write_file", "src/main.go/x", ""), false},
		{"path: other tool", path, fileCall("edit_file", "src/main.go", ""), false},
		{"path: outside", path, fileCall("write_file", "/etc/passwd", ""), false},
		{"path: sibling workspace", path, fileCall("write_file", "/ws2/src/main.go", ""), false},
		{"path: call without workspace", path, policy.Call{Tool: "write_file", Path: "/ws/src/main.go"}, false},

		{"dir: itself", dir, fileCall("read_file", "docs", ""), true},
		{"dir: file under", dir, fileCall("read_file", "docs/a.md", ""), true},
		{"dir: deep", dir, fileCall("read_file", "/ws/docs/x/y.md", ""), true},
		{"dir: name prefix", dir, fileCall("read_file", "docs2/a.md", ""), false},
		{"dir: dotdot out", dir, fileCall("read_file", "docs/../secret", ""), false},
		{"dir: dotdot escape", dir, fileCall("read_file", "../docs/a.md", ""), false},
		{"dir: parent", dir, fileCall("read_file", ".", ""), false},
		{"dir: other tool", dir, fileCall("write_file", "docs/a.md", ""), false},
		{"dir: whole workspace", whole, fileCall("list_files", "", "/ws/a/b"), true},
		{"dir: whole workspace, outside", whole, fileCall("list_files", "/", ""), false},
		{"dir: whole workspace, other tool", whole, fileCall("read_file", "a", ""), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.scope.Covers(tt.call); got != tt.want {
				t.Fatalf("%v covers %+v = %v, want %v", tt.scope, tt.call, got, tt.want)
			}
		})
	}
}

func TestScopeString(t *testing.T) {
	tests := []struct {
		scope grants.Scope
		want  string
	}{
		{must(t)(grants.ScopeFor(bashCall("npm test", "/ws/app"))), `bash: exactly "npm test" in /ws/app`},
		{must(t)(grants.PrefixScope("git log", "/ws")), `bash: commands starting with "git log" in /ws (known options only; files in the workspace, not .git)`},
		{must(t)(grants.ScopeFor(fileCall("write_file", "src/main.go", ""))), `write_file: src/main.go`},
		{must(t)(grants.DirScope("read_file", "docs", ws)), `read_file: anything under docs/`},
		{must(t)(grants.DirScope("read_file", ".", ws)), `read_file: anything in the workspace`},
		{must(t)(grants.ScopeFor(fileCall("list_files", "", ""))), `list_files: the workspace root`},
		{must(t)(grants.ScopeFor(bashCall("echo hi\nrm -rf /", "/ws/my dir"))), `bash: exactly "echo hi\nrm -rf /" in "/ws/my dir"`},
		{must(t)(grants.ScopeFor(fileCall("read_file", "a b.txt", ""))), `read_file: "a b.txt"`},
	}
	for _, tt := range tests {
		if got := tt.scope.String(); got != tt.want {
			t.Errorf("String() = %s, want %s", got, tt.want)
		}
	}
	if strings.ContainsAny(must(t)(grants.ScopeFor(bashCall("a\rb\x1b[2J", "/ws"))).String(), "\r\x1b") {
		t.Error("String lets control characters through")
	}
}
