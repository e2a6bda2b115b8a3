package policy

import "strings"

// runnerDangers flags package runners and installers that download code
// and run it on this machine: npx and its kin, npm/yarn/pnpm/bun
// exec/dlx/create and installs of a package named on the command line
// (its install scripts run), go run of module@version, pip install of a
// named requirement (setup.py runs), uv and pipx tools, docker run of an
// image, deno run of a remote module, cargo install (build.rs runs), gem
// install and nix run. Installing what the workspace itself declares
// (npm install, pip install -r requirements.txt, pip install .) is the
// workspace's code, which allow rules already judge, and is not flagged.
func (z *analyzer) runnerDangers(name string, args []word) {
	why := ""
	switch {
	case name == "npx" || name == "pnpx" || name == "bunx" || name == "uvx":
		why = name + " downloads a package and runs it"
	case name == "pipx":
		if sub, _ := runnerSub(args, nil); sub == "run" || sub == "install" || sub == "inject" || sub == "upgrade" || sub == "runpip" {
			why = "pipx " + sub + " downloads a package and runs it"
		}
	case name == "npm" || name == "yarn" || name == "pnpm" || name == "bun":
		why = jsRunner(name, args)
	case name == "corepack":
		// corepack pnpm dlx …, corepack yarn add …: the package manager
		// it runs is judged as itself.
		if sub, rest := runnerSub(args, nil); sub == "npm" || sub == "pnpm" || sub == "yarn" || sub == "npx" || sub == "pnpx" {
			z.runnerDangers(sub, rest)
		}
	case name == "go":
		why = goRunsModule(args)
	case name == "pip" || name == "pip3" || strings.HasPrefix(name, "pip3.") || name == "pipenv":
		why = pipInstalls(name, args)
	case strings.HasPrefix(name, "python") || strings.HasPrefix(name, "pypy"):
		for i, a := range args {
			if a.loose == "-m" && i+1 < len(args) && args[i+1].loose == "pip" {
				why = pipInstalls(name+" -m pip", args[i+2:])
				break
			}
			if a.loose == "-mpip" {
				why = pipInstalls(name+" -m pip", args[i+1:])
				break
			}
		}
	case name == "uv":
		why = uvRunner(args)
	case name == "poetry" || name == "pdm" || name == "rye":
		if sub, rest := runnerSub(args, nil); sub == "add" && len(operands(rest)) > 0 {
			why = name + " add downloads and installs a package"
		}
	case name == "docker" || name == "podman" || name == "nerdctl":
		sub, rest := runnerSub(args, func(o string) bool { return takesValue("docker", o) || o == "--url" || o == "--connection" })
		if sub == "container" || sub == "image" {
			sub, _ = runnerSub(rest, nil)
		}
		if sub == "run" || sub == "create" {
			why = name + " " + sub + " runs a container image, pulled if it is not here"
		}
	case name == "deno":
		why = denoRunner(args)
	case name == "cargo":
		if sub, rest := runnerSub(args, nil); sub == "install" && !hasLong(rest, "--path") {
			why = "cargo install builds a downloaded crate (its build.rs runs)"
		}
	case name == "gem":
		if sub, _ := runnerSub(args, nil); sub == "install" || sub == "i" || sub == "update" {
			why = "gem " + sub + " installs a downloaded gem (its extensions build)"
		}
	case name == "nix":
		if sub, _ := runnerSub(args, nil); sub == "run" {
			why = "nix run downloads and runs a package"
		}
	}
	if why != "" {
		z.a.danger(why)
	}
}

// runnerSub returns the first operand (the subcommand) and what follows;
// valued says which options take the next word.
func runnerSub(args []word, valued func(string) bool) (string, []word) {
	for i := 0; i < len(args); i++ {
		l := args[i].loose
		switch {
		case l == "--":
			if i+1 < len(args) {
				return args[i+1].loose, args[i+2:]
			}
			return "", nil
		case strings.HasPrefix(l, "-") && l != "-":
			if valued != nil && !strings.Contains(l, "=") && valued(l) {
				i++
			}
		default:
			return l, args[i+1:]
		}
	}
	return "", nil
}

// remotePackages returns the operands of an install that name something
// to download: not a path in the workspace (., /, ~, file:). valued lists
// options whose value is the next word.
func remotePackages(args []word, valued func(string) bool) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		l := args[i].loose
		switch {
		case l == "--":
			continue
		case strings.HasPrefix(l, "-") && l != "-":
			if !strings.Contains(l, "=") && valued(l) {
				i++
			}
		case strings.HasPrefix(l, ".") || strings.HasPrefix(l, "/") || strings.HasPrefix(l, "file:"):
		default:
			out = append(out, l)
		}
	}
	return out
}

// jsRunner judges npm, yarn, pnpm and bun.
func jsRunner(name string, args []word) string {
	valued := func(o string) bool {
		switch o {
		case "-w", "--workspace", "--prefix", "-C", "--dir", "--cwd", "--registry", "--tag", "--omit",
			"--include", "--install-strategy", "--loglevel", "--cache", "--filter", "-F", "--save-prefix":
			return true
		}
		return false
	}
	sub, rest := runnerSub(args, valued)
	if name == "yarn" && sub == "global" {
		sub, rest = runnerSub(rest, nil)
	}
	switch sub {
	case "exec", "x", "dlx":
		if name == "pnpm" && sub == "exec" {
			return "" // pnpm exec runs what the workspace installed
		}
		return name + " " + sub + " downloads a package and runs it"
	case "create":
		return name + " create downloads an initializer and runs it"
	case "init", "innit":
		if name == "npm" && len(remotePackages(rest, valued)) > 0 {
			return "npm init <initializer> downloads create-<initializer> and runs it"
		}
	case "install", "i", "in", "ins", "inst", "insta", "instal", "isnt", "isnta", "isntal", "isntall", "add",
		"install-test", "it", "install-ci-test":
		if pkgs := remotePackages(rest, valued); len(pkgs) > 0 {
			return name + " " + sub + " " + clip(printable(pkgs[0]), 60) + " downloads a package whose install scripts run"
		}
	}
	return ""
}

// goRunsModule flags go run of a package at a module version
// (golang.org/x/tools/cmd/stringer@latest): it is downloaded and run.
func goRunsModule(args []word) string {
	sub, rest := runnerSub(args, nil)
	if sub != "run" {
		return ""
	}
	for i := 0; i < len(rest); i++ {
		l := rest[i].loose
		if strings.HasPrefix(l, "-") {
			name, _, has := strings.Cut(strings.TrimLeft(l, "-"), "=")
			if !has && goValued(name) {
				i++
			}
			continue
		}
		if strings.Contains(l, "@") || !rest[i].known() {
			return "go run " + clip(printable(l), 60) + " downloads a module and runs it"
		}
		return ""
	}
	return ""
}

// pipValued reports pip install's options that take the next word.
func pipValued(o string) bool {
	switch o {
	case "-r", "--requirement", "-c", "--constraint", "-t", "--target", "--prefix", "--root",
		"-i", "--index-url", "--extra-index-url", "-f", "--find-links", "--trusted-host", "--cache-dir", "--src",
		"--log", "-d", "--dest", "-w", "--wheel-dir", "--platform", "--python-version", "--implementation", "--abi",
		"--upgrade-strategy", "--progress-bar", "-C", "--config-settings", "--global-option", "--report",
		"--root-user-action", "--python", "--proxy", "--retries", "--timeout", "--exists-action", "--cert",
		"--client-cert", "--use-feature", "--use-deprecated", "--no-binary", "--only-binary", "--group":
		return true
	}
	return false
}

// pipInstalls flags pip install (download, wheel) of a requirement named
// on the command line, or an editable install from a URL: building it runs
// its setup.py.
func pipInstalls(name string, args []word) string {
	sub, rest := runnerSub(args, func(o string) bool { return o == "--python" || o == "--log" || o == "--cache-dir" })
	switch sub {
	case "install", "download", "wheel":
	default:
		return ""
	}
	for i := 0; i < len(rest); i++ {
		l := rest[i].loose
		var v string
		switch {
		case (l == "-e" || l == "--editable" || l == "-r" || l == "--requirement" || l == "-c" || l == "--constraint") && i+1 < len(rest):
			v = rest[i+1].loose
		case strings.HasPrefix(l, "--editable=") || strings.HasPrefix(l, "--requirement=") || strings.HasPrefix(l, "--constraint="):
			_, v, _ = strings.Cut(l, "=")
		case len(l) > 2 && (strings.HasPrefix(l, "-e") || strings.HasPrefix(l, "-r") || strings.HasPrefix(l, "-c")) && !strings.HasPrefix(l, "--"):
			v = l[2:]
		default:
			continue
		}
		editable := strings.HasPrefix(l, "-e") || strings.HasPrefix(l, "--e")
		if editable && !strings.HasPrefix(v, ".") && !strings.HasPrefix(v, "/") || strings.Contains(v, "://") || !rest[i].known() {
			// An editable install from a VCS URL, or requirements read
			// from the network: pip downloads and builds what they name.
			return name + " " + sub + " " + clip(printable(l+" "+v), 60) + " downloads and builds a package (its setup.py runs)"
		}
	}
	if pkgs := remotePackages(rest, pipValued); len(pkgs) > 0 {
		return name + " " + sub + " " + clip(printable(pkgs[0]), 60) + " downloads and builds a package (its setup.py runs)"
	}
	return ""
}

// uvRunner judges uv: uv pip install, uv add, uv tool run/install, and
// uv run with packages (--with, --from) or a remote script.
func uvRunner(args []word) string {
	sub, rest := runnerSub(args, func(o string) bool { return o == "--directory" || o == "--project" || o == "--cache-dir" })
	switch sub {
	case "pip":
		return pipInstalls("uv pip", rest)
	case "add":
		if len(operands(rest)) > 0 {
			return "uv add downloads and installs a package"
		}
	case "tool":
		if t, _ := runnerSub(rest, nil); t == "run" || t == "install" || t == "upgrade" {
			return "uv tool " + t + " downloads a package and runs it"
		}
	case "run":
		for _, a := range rest {
			l := a.loose
			if l == "--with" || l == "-w" || strings.HasPrefix(l, "--with=") || l == "--from" || strings.HasPrefix(l, "--from=") ||
				l == "--with-requirements" || strings.HasPrefix(l, "http://") || strings.HasPrefix(l, "https://") {
				return "uv run " + clip(printable(l), 40) + " downloads a package and runs it"
			}
		}
	}
	return ""
}

// denoRunner flags deno run (or x, install, compile, eval's imports) of a
// module from the network or a registry: https:, npm:, jsr:.
func denoRunner(args []word) string {
	sub, rest := runnerSub(args, nil)
	for _, s := range []string{"http://", "https://", "npm:", "jsr:"} {
		if strings.HasPrefix(strings.ToLower(sub), s) {
			// deno URL: deno runs a module given in place of a subcommand.
			return "deno " + clip(printable(sub), 60) + " downloads a module and runs it"
		}
	}
	switch sub {
	case "x":
		return "deno x downloads a package and runs it"
	case "run", "install", "i", "compile", "serve":
	default:
		return ""
	}
	for _, a := range rest {
		l := strings.ToLower(a.loose)
		if _, v, ok := strings.Cut(l, "="); ok && strings.HasPrefix(l, "-") {
			l = v
		}
		for _, s := range []string{"http://", "https://", "npm:", "jsr:"} {
			if strings.HasPrefix(l, s) {
				return "deno " + sub + " " + clip(printable(a.loose), 60) + " downloads a module and runs it"
			}
		}
	}
	return ""
}
