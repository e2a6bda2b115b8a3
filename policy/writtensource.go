package policy

import (
	"path"
	"strings"
)

// Test runners and build tools run the project's own code: go test
// compiles and runs the package's _test.go files, npm test and make run
// whatever the scripts and recipes start, cargo build runs build.rs and
// proc macros. Code the workspace held before the command is the
// project's (what a rule for `go test` means); code the same command
// wrote just before is not: printf '…exec.Command("rm", …)…' >
// out/x_test.go; go test ./out ran rm, a program no reading named, as
// echo … > run.sh; bash run.sh does (writtenScript).

// writtenSources makes the reading incomplete when name runs project code
// and the command, before it, wrote a file in the workspace that may be
// such code (anything but plain text, logs and diffs), or a file whose
// name the policy could not place. writes is how many writes were
// recorded before this command's own (its -o, its profiles).
func (z *analyzer) writtenSources(name string, args []word, writes int) {
	if z.workspace == "" || writes == 0 || !runsProjectCode(name, args) {
		return
	}
	for i, t := range z.a.writes[:writes] {
		if i >= z.ownWrites[0] && i < z.ownWrites[1] {
			continue // its own > out/log: opened before it runs, written by it
		}
		if t.abs != "" && (!within(t.abs, z.workspace) || dataFile(t.abs)) || t.how == "touch" || t.how == "mkdir" {
			continue // data, a time stamp or an empty file, a directory
		}
		z.a.cannotRead(name + " runs the project's code, and the command itself writes " +
			clip(printable(t.shown), 60) + " before it (code the policy has not read)")
		return
	}
}

// runsProjectCode reports a command that builds and runs the code of the
// project it is in: test runners, build tools, package scripts.
func runsProjectCode(name string, args []word) bool {
	sub := ""
	for _, a := range args {
		if !strings.HasPrefix(a.loose, "-") {
			sub = a.loose
			break
		}
	}
	switch name {
	case "go":
		switch sub {
		case "test", "run", "generate", "tool":
			return true
		}
	case "npm", "pnpm", "yarn", "bun", "deno":
		switch sub {
		case "view", "info", "ls", "list", "outdated", "search", "help", "version", "whoami", "config", "fmt", "lint", "explain", "why":
			return false
		}
		return true
	case "cargo":
		switch sub {
		case "build", "b", "test", "t", "run", "r", "bench", "check", "c", "clippy", "doc", "d", "install", "watch", "nextest", "miri":
			return true
		}
	case "make", "gmake", "bmake", "npx", "pnpx", "bunx", "nodemon", "jest", "vitest", "mocha", "ava", "tap", "pytest",
		"py.test", "tox", "nox", "gradle", "gradlew", "mvn", "mvnw", "rake", "ctest", "ninja", "cmake", "meson", "bazel",
		"bazelisk", "just", "task", "mage", "sbt", "mix", "dotnet", "swift", "zig", "tsc", "webpack", "vite", "esbuild":
		return true
	case "node":
		for _, a := range args {
			if a.loose == "--test" || strings.HasPrefix(a.loose, "--test=") {
				return true
			}
		}
	}
	return false
}

// dataFile reports a file no build or test runner takes as code: plain
// text, logs, diffs, profiles, and a name with no extension (runners find
// their code by extension: _test.go, .test.js, build.rs) unless it is a
// build file (Makefile, BUILD) or a hidden one (.babelrc, .mocharc).
func dataFile(p string) bool {
	base := path.Base(p)
	if path.Ext(base) == "" && !strings.HasPrefix(base, ".") {
		switch base {
		case "Makefile", "makefile", "GNUmakefile", "BUILD", "WORKSPACE", "Justfile", "justfile", "Rakefile",
			"Gemfile", "Dockerfile", "Jenkinsfile", "Vagrantfile", "Taskfile", "Earthfile", "Tiltfile":
			return false
		}
		return true
	}
	switch strings.ToLower(path.Ext(base)) {
	case ".txt", ".log", ".md", ".csv", ".tsv", ".out", ".err", ".diff", ".patch", ".prof", ".pprof", ".cov", ".lcov",
		".html", ".svg", ".png":
		return true
	}
	return false
}
