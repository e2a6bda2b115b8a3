package grants_test

import (
	"strings"
	"testing"

	"github.com/askops/askops/grants"
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
	ok := []string{
		"npm ls", "npm view react", "npm outdated", "yarn why lodash", "pnpm list", "go vet", "go vet ./...",
		"go build ./...", "go list -m all", "go mod tidy", "cargo tree", "cargo metadata", "pip list", "pip show x",
		"poetry show", "gem list", "git push", "git status", "ls",
	}
	for _, p := range ok {
		if _, err := grants.PrefixScope(p, "/ws"); err != nil {
			t.Errorf("PrefixScope(%q) refused: %v", p, err)
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
// an option (any abbreviation the policy reads) or pushes to a repository
// on this machine, whose hooks run: the approver granted "git push", not
// out/r/hooks/pre-receive.
func TestPrefixGrantDoesNotCoverCodeOptions(t *testing.T) {
	for _, tc := range []struct{ prefix, cmd string }{
		{"sort", "sort --compress-program=sh x"},
		{"sort", "sort --comp=out/h x"},
		{"sort", "sort --compress-prog out/h x"},
		{"go vet", "go vet --vettool=out/h ./..."},
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
		{"sort", "sort -u x"},
		{"go vet", "go vet ./..."},
		{"git push", "git push origin feature"},
		{"git push", "git push https://github.com/acme/app feature"},
		{"git push", "git push git@github.com:acme/app.git feature"},
	} {
		s, _ := grants.PrefixScope(tc.prefix, "/ws")
		if !s.Covers(bashCall(tc.cmd, "/ws")) {
			t.Errorf("a prefix grant on %q does not cover %q", tc.prefix, tc.cmd)
		}
	}
}
