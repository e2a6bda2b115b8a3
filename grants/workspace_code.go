package grants

import (
	"path"
	"strings"
)

// workspaceCode says why a command starting with words runs code that the
// workspace holds — and so the agent can rewrite before the next call — or
// "" if it does not. A prefix grant on such a command would allow
// anything: `echo '{"scripts":{"test":"rm -rf ~"}}' > package.json` and
// then the granted `npm test`. Exact-command grants stay possible; the
// approver saw that command.
//
// Tools whose every invocation loads workspace code (Makefile, build.gradle,
// Gemfile, conftest.py, eslint.config.js, …) are refused whatever follows;
// package managers and language tools are refused unless the subcommand is
// one that only reads (npm ls, go vet, cargo tree, pip list).
func workspaceCode(words []string) string {
	if len(words) == 0 {
		return ""
	}
	if strings.Contains(words[0], "/") && !path.IsAbs(words[0]) {
		return words[0] + " is a program in the workspace"
	}
	name := path.Base(words[0])
	if name == "git" {
		return gitCode(words)
	}
	if kind := workspaceRunner(name); kind != "" {
		return name + " is " + kind + " and runs what the workspace configures"
	}
	if strings.HasPrefix(name, "python") || strings.HasPrefix(name, "pypy") {
		for _, w := range words[1:] {
			if w == "-m" || strings.HasPrefix(w, "-m") {
				return name + " -m runs a module (pytest, unittest, pip, tox, …) that loads code from the workspace"
			}
		}
		return ""
	}
	readOnly, kind := packageTool(name)
	if kind == "" {
		return ""
	}
	if len(words) < 2 {
		return name + " is " + kind + " and the prefix covers every subcommand, including " + runExample(name)
	}
	sub := words[1]
	if strings.HasPrefix(sub, "-") {
		// An option before the subcommand may take the next word as its
		// value, so the subcommand cannot be told: refuse.
		return name + " is " + kind + " and the prefix does not name a subcommand that only reads"
	}
	for _, ok := range readOnly {
		if sub == ok {
			return ""
		}
	}
	return name + " " + sub + " runs " + codeOf(kind)
}

// gitCode says why a git prefix runs code the repository configures: hooks
// (.git/hooks, core.hooksPath) and programs named in its config (gpg,
// merge drivers, filters) run on commit, merge, rebase, checkout and the
// like. git with no subcommand, or an option first (-c can set any of
// them), covers those too.
func gitCode(words []string) string {
	if len(words) < 2 {
		return "git alone covers every subcommand, including git commit, which runs the repository's hooks"
	}
	sub := words[1]
	if strings.HasPrefix(sub, "-") {
		return "an option before git's subcommand (-c, -C, --exec-path) can set hooks or programs, and the subcommand cannot be told"
	}
	switch sub {
	case "commit", "merge", "rebase", "am", "pull", "checkout", "switch", "cherry-pick", "revert",
		"worktree", "clone", "gc", "maintenance", "stash", "bisect", "filter-branch", "submodule", "difftool", "mergetool":
		return "git " + sub + " runs the repository's hooks and the programs its config names"
	}
	return ""
}

// workspaceRunner names the kind of tools that load code from the
// workspace on every run.
func workspaceRunner(name string) string {
	switch name {
	case "make", "gmake", "bmake", "cmake", "ctest", "ninja", "meson", "bazel", "bazelisk", "buck", "buck2",
		"pants", "scons", "waf", "gradle", "gradlew", "mvn", "mvnw", "ant", "sbt", "lein", "mix", "xcodebuild",
		"autoreconf", "configure", "premake", "premake5", "earthly", "dagger":
		return "a build tool"
	case "just", "task", "mage", "rake", "invoke", "inv", "fab", "gulp", "grunt", "turbo", "nx", "lerna",
		"rush", "pre-commit", "husky", "lefthook", "direnv", "tox", "nox", "bundle", "bundler", "foreman",
		"honcho", "overmind", "nodemon":
		return "a task or environment runner"
	case "pytest", "py.test", "jest", "vitest", "mocha", "karma", "jasmine", "ava", "tap", "playwright",
		"cypress", "rspec", "cucumber", "behave", "phpunit", "pest", "codecept", "nosetests", "nose2",
		"ward", "hypothesis", "stestr", "testr":
		return "a test runner"
	case "eslint", "prettier", "stylelint", "webpack", "webpack-cli", "vite", "rollup", "parcel", "babel",
		"tsx", "ts-node", "next", "nuxt", "astro", "svelte-kit", "remix", "expo", "ng", "vue-cli-service",
		"react-scripts", "tsup", "unbuild", "esbuild-register", "npx", "bunx", "pnpx", "corepack":
		return "a JavaScript tool whose configuration is code"
	case "composer", "dotnet", "swift", "flutter", "dart", "stack", "cabal", "hatch", "rye", "elm", "zig",
		"nimble", "shards", "opam", "dune", "rebar3", "conan":
		return "a package manager or build tool"
	}
	return ""
}

// packageTool returns, for a package manager or language tool, its
// subcommands that only read, and its kind; kind is "" for other programs.
func packageTool(name string) (readOnly []string, kind string) {
	switch name {
	case "npm":
		return []string{"ls", "list", "ll", "la", "view", "v", "info", "show", "outdated", "doctor", "whoami",
			"search", "s", "prefix", "root", "help", "explain", "why", "fund", "query", "ping"}, "a package manager"
	case "yarn", "pnpm":
		return []string{"why", "list", "ls", "info", "view", "outdated", "licenses", "help"}, "a package manager"
	case "bun":
		return []string{"outdated", "help"}, "a package manager"
	case "deno":
		return []string{"fmt", "info", "doc", "types", "help"}, "a JavaScript runtime"
	case "go":
		return []string{"build", "install", "vet", "list", "fmt", "mod", "version", "doc", "clean", "help", "work"}, "the Go tool"
	case "cargo":
		return []string{"tree", "metadata", "version", "locate-project", "pkgid", "verify-project",
			"read-manifest", "help", "search"}, "the Rust build tool"
	case "pip", "pip3", "pipx":
		return []string{"list", "show", "freeze", "check", "help", "hash", "index", "inspect", "debug", "search", "cache"}, "a package manager"
	case "uv":
		return []string{"tree", "version", "help"}, "a package manager"
	case "poetry":
		return []string{"show", "check", "about", "search", "help"}, "a package manager"
	case "pipenv", "pdm":
		return []string{"graph", "list", "show", "info"}, "a package manager"
	case "conda", "mamba", "micromamba", "pixi":
		return []string{"list", "info", "search", "tree"}, "a package manager"
	case "gem":
		return []string{"list", "query", "search", "info", "specification", "contents", "which", "environment", "help"}, "a package manager"
	}
	return nil, ""
}

func runExample(name string) string {
	switch name {
	case "go":
		return "go test, go run and go generate"
	case "cargo":
		return "cargo build, cargo test and cargo run"
	case "pip", "pip3", "pipx", "uv", "poetry", "pipenv", "pdm":
		return name + " install (setup.py, build backends)"
	}
	return name + " test, " + name + " run and " + name + " install (package scripts)"
}

func codeOf(kind string) string {
	switch kind {
	case "a package manager":
		return "package scripts, lifecycle hooks or build backends from the workspace"
	case "the Go tool":
		return "tests, programs or generators from the workspace"
	case "the Rust build tool":
		return "build scripts, procedural macros, tests or programs from the workspace"
	}
	return "code from the workspace"
}
