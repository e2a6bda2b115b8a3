package policy

import (
	"path"
	"strings"
)

// Closed-world option tables for docker build/save/cp, npm's script
// commands, go test, systemctl's start verbs, bat, rsync, and the files
// gcc writes without being told where: an option the table does not know
// keeps allow rules off, as make's and cargo watch's do (tooloptions.go).

// localCode refuses allow rules unless w names a literal path that stays
// inside the workspace, links resolved: a Dockerfile, a build context, a
// package a test runs. what says what it is.
func (z *analyzer) localCode(w word, what string) {
	switch {
	case !w.ok:
		z.a.refuseAllow(what + " that is not literal")
		return
	case w.lit == "-":
		z.a.refuseAllow(what + " read from standard input")
		return
	case strings.Contains(w.lit, "://") || strings.HasPrefix(w.lit, "git@") || strings.HasPrefix(w.lit, "github.com/"):
		z.a.refuseAllow(what + " fetched from " + clip(printable(w.lit), 40) + " (code from elsewhere)")
		return
	}
	if z.cwd == "" {
		z.a.refuseAllow(what + " after a cd the policy cannot follow")
		return
	}
	p, inside := z.resolve(w.lit)
	if !inside {
		z.a.refuseAllow(what + " outside the workspace (" + clip(printable(w.lit), 40) + "): code from elsewhere")
		return
	}
	if real, ok := realPath(p); ok && !within(real, z.realWorkspace()) {
		z.a.refuseAllow(what + " through a link that leads outside the workspace (" + clip(printable(w.lit), 40) + ")")
	}
}

// pflagArg is one option of a command that parses with spf13/pflag (the
// docker CLI): --name=value, --name value, -n value, -nvalue, -n=value,
// and clusters of one-letter flags.
type pflagArg struct {
	name  string // "--name" or "-n"
	value word
	has   bool
}

// readPflag reads args with the tables long and short (kind 'b' is a
// flag, any other kind takes a value). It returns the options, the
// operands, and the first option neither table knows ("" if none).
func readPflag(args []word, long, short map[string]byte) (opts []pflagArg, ops []word, unknown string) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		l := a.loose
		switch {
		case l == "--":
			return opts, append(ops, args[i+1:]...), ""
		case strings.HasPrefix(l, "--"):
			n, v, eq := strings.Cut(l, "=")
			kind, ok := long[n]
			if !ok {
				return opts, ops, l
			}
			o := pflagArg{name: n}
			switch {
			case eq:
				o.value, o.has = word{loose: v, lit: strings.TrimPrefix(a.lit, n+"="), ok: a.ok}, true
			case kind != 'b' && i+1 < len(args):
				i++
				o.value, o.has = args[i], true
			}
			opts = append(opts, o)
		case strings.HasPrefix(l, "-") && len(l) > 1:
			for k := 1; k < len(l); k++ {
				n := "-" + l[k:k+1]
				kind, ok := short[n]
				if !ok {
					return opts, ops, l
				}
				o := pflagArg{name: n}
				if kind != 'b' {
					v := strings.TrimPrefix(l[k+1:], "=")
					switch {
					case k+1 < len(l):
						o.value, o.has = word{loose: v, lit: v, ok: a.ok}, true
					case i+1 < len(args):
						i++
						o.value, o.has = args[i], true
					}
					opts = append(opts, o)
					break
				}
				opts = append(opts, o)
			}
		default:
			ops = append(ops, a)
		}
	}
	return opts, ops, ""
}

// dockerBuildLong is docker build's options (the legacy builder's and
// buildx's): 'b' a flag and 'v' a value that run, load and write
// nothing; 'f' the Dockerfile, 'o' an output, 'w' a file written, 's' a
// secret, 'c' a named build context, 'n' the network, 'a' attestations,
// 'k' a cache source, 't' a cache destination, 'g' a build argument.
// Not here, so not allowed: --allow (security.insecure runs steps as
// root on the host, network.host), --ssh (lends the SSH agent or a key),
// --security-opt (seccomp=unconfined), --cgroup-parent, --isolation,
// --builder (another builder, configured elsewhere), --policy, --invoke,
// --debug, --root, --detach, --server-config.
var dockerBuildLong = map[string]byte{
	"--compress": 'b', "--disable-content-trust": 'b', "--force-rm": 'b', "--no-cache": 'b', "--pull": 'b', "--quiet": 'b',
	"--rm": 'b', "--squash": 'b', "--load": 'b', "--push": 'b', "--check": 'b', "--help": 'b',
	"--add-host": 'v', "--annotation": 'v', "--cpu-period": 'v', "--cpu-quota": 'v', "--cpu-shares": 'v', "--cpuset-cpus": 'v',
	"--cpuset-mems": 'v', "--label": 'v', "--memory": 'v', "--memory-swap": 'v', "--platform": 'v', "--progress": 'v',
	"--shm-size": 'v', "--tag": 'v', "--target": 'v', "--ulimit": 'v', "--no-cache-filter": 'v', "--call": 'v',
	"--file": 'f', "--output": 'o', "--iidfile": 'w', "--metadata-file": 'w', "--secret": 's', "--build-context": 'c',
	"--network": 'n', "--attest": 'a', "--sbom": 'a', "--provenance": 'a', "--cache-from": 'k', "--cache-to": 't',
	"--build-arg": 'g',
}

var dockerBuildShort = map[string]byte{"-q": 'b', "-t": 'v', "-m": 'v', "-c": 'v', "-f": 'f', "-o": 'o'}

// csvFields splits a buildx key=value list; ok is false where quoting
// (which buildx reads as CSV) or a key spelt in another case could hide
// what a field says from the policy.
func csvFields(v string) (map[string]string, bool) {
	if strings.ContainsAny(v, "\"'") {
		return nil, false
	}
	out := map[string]string{}
	for _, f := range strings.Split(v, ",") {
		k, val, has := strings.Cut(f, "=")
		if !has {
			continue
		}
		if k != strings.ToLower(strings.TrimSpace(k)) {
			return nil, false
		}
		out[k] = val
	}
	return out, true
}

// dockerClosed reads docker build, save and cp closed-world.
func (z *analyzer) dockerClosed(name, sub string, rest []word) {
	refuse := func(l, why string) {
		z.a.refuseAllow(name + " " + sub + " " + clip(printable(l), 40) + " (" + why + ")")
	}
	// refuseUnknown: an option the table does not know, so what the
	// command writes is not modelled either (unknownOption).
	refuseUnknown := func(l, why string) {
		refuse(l, why)
		z.optionUnknown = true
	}
	for _, w := range rest {
		if !w.known() {
			z.a.refuseAllow(name + " " + sub + " with an argument not known until run time")
			return
		}
	}
	switch sub {
	case "save":
		_, _, unknown := readPflag(rest, map[string]byte{"--output": 'o', "--platform": 'v', "--help": 'b'}, map[string]byte{"-o": 'o'})
		if unknown != "" {
			refuseUnknown(unknown, "an option the policy does not know")
		}
		return
	case "cp":
		_, _, unknown := readPflag(rest, map[string]byte{"--archive": 'b', "--follow-link": 'b', "--quiet": 'b', "--help": 'b'},
			map[string]byte{"-a": 'b', "-L": 'b', "-q": 'b'})
		if unknown != "" {
			refuseUnknown(unknown, "an option the policy does not know")
		}
		return
	case "build":
	default:
		return
	}
	opts, ops, unknown := readPflag(rest, dockerBuildLong, dockerBuildShort)
	if unknown != "" {
		refuseUnknown(unknown, "an option the policy does not know: it may run steps as root or on the host network, lend credentials, or take code from elsewhere")
		return
	}
	for _, o := range opts {
		v := o.value.loose
		switch kind := dockerBuildLong[o.name] | dockerBuildShort[o.name]; kind {
		case 'f':
			z.localCode(o.value, name+" build -f: a Dockerfile")
		case 'o', 't':
			if !strings.Contains(v, "=") {
				continue // a directory, judged as a write (containerOptions)
			}
			f, ok := csvFields(v)
			if !ok {
				refuse(o.name+" "+v, "a quoted or upper-case field the policy does not read")
				continue
			}
			switch f["type"] {
			case "local", "tar", "docker", "oci", "image", "registry", "cacheonly", "inline", "gha", "s3", "azblob", "":
			default:
				refuseUnknown(o.name+" "+v, "an exporter the policy does not know")
			}
		case 's':
			f, ok := csvFields(v)
			if !ok {
				refuse(o.name+" "+v, "a quoted or upper-case field the policy does not read")
				continue
			}
			src := f["src"]
			if src == "" {
				src = f["source"]
			}
			if src == "" && f["env"] == "" && f["type"] != "env" {
				// Neither src nor env: buildx reads the variable named id,
				// or else the file named id.
				src = f["id"]
			}
			if src != "" {
				z.mention(src)
			}
		case 'c':
			_, ctx, _ := strings.Cut(v, "=")
			if strings.Contains(ctx, ":") {
				refuse(o.name+" "+v, "a named context from an image, a URL or another target: code the Dockerfile does not name")
				continue
			}
			z.localCode(word{loose: ctx, lit: ctx, ok: o.value.ok}, name+" build --build-context")
		case 'n':
			switch v {
			case "default", "none", "bridge":
			default:
				refuse(o.name+" "+v, "build steps on the host's or another network: they reach local services")
			}
		case 'a':
			if strings.Contains(v, "generator") || strings.ContainsAny(v, "\"'") {
				refuse(o.name+" "+v, "an SBOM generator is an image the build runs")
			}
		case 'k':
			if f, ok := csvFields(v); !ok {
				refuse(o.name+" "+v, "a quoted or upper-case field the policy does not read")
			} else if f["src"] != "" {
				// A local cache: layers the Dockerfile did not build.
				z.mention(f["src"])
				z.localCode(word{loose: f["src"], lit: f["src"], ok: o.value.ok}, name+" build --cache-from")
			}
		case 'g':
			if k, _, _ := strings.Cut(v, "="); k == "BUILDKIT_SYNTAX" {
				refuse(o.name+" "+v, "it replaces the frontend that reads the Dockerfile: code from elsewhere")
			}
		}
	}
	if len(ops) != 1 {
		refuse(sub, "no single build context the policy can place")
		return
	}
	// Without -f the Dockerfile is PATH/Dockerfile: judged with the context.
	z.localCode(ops[0], name+" build context")
}

// npmScriptVerbs run a package.json script; their options are read
// closed-world (npmScripts).
func npmScriptVerb(v string) bool {
	switch v {
	case "test", "t", "tst", "start", "stop", "restart", "run", "run-script", "rum", "urn":
		return true
	}
	return false
}

// npmKnown is npm's options that change only what npm prints or which
// workspace's script runs: 'b' a flag, 'v' one that takes the next word.
// Every other option sets one of npm's configuration keys, which npm reads
// in any case and with _ for - (script-shell, node-options, onload-script,
// node-gyp, git, userconfig, prefix, cache …: programs it runs, code it
// loads, places it writes): not allowed.
var npmKnown = map[string]byte{
	"--silent": 'b', "--quiet": 'b', "--verbose": 'b', "--if-present": 'b', "--workspaces": 'b', "--ws": 'b',
	"--include-workspace-root": 'b', "--color": 'b', "--no-color": 'b', "--offline": 'b', "--prefer-offline": 'b',
	"--prefer-online": 'b', "--foreground-scripts": 'b', "--progress": 'b', "--no-progress": 'b', "--no-update-notifier": 'b',
	"--no-fund": 'b', "--no-audit": 'b', "--json": 'b', "--parseable": 'b', "--no-workspaces": 'b',
	"-s": 'b', "-q": 'b', "-d": 'b', "-dd": 'b', "-ddd": 'b', "-ws": 'b',
	"--workspace": 'v', "-w": 'v', "--loglevel": 'v',
	// Places npm writes, judged as writes by packageManagerWrites.
	"--logs-dir": 'v', "--cache": 'v',
}

// npmScripts reads npm test (start, run …) closed-world: npm's own
// options must be in npmKnown; the words passed on to the script (after
// --, or operands) may not name a path outside the workspace or a URL,
// where a test runner would load its code or config from (jest
// --config=/tmp/x.js, --require ../x.js).
func (z *analyzer) npmScripts(name string, args []word) {
	verb := ""
	passed := false
	for i := 0; i < len(args); i++ {
		a := args[i]
		l := a.loose
		if !a.known() {
			z.a.refuseAllow(name + " with an argument not known until run time")
			return
		}
		switch {
		case passed || !strings.HasPrefix(l, "-"):
			if verb == "" {
				verb = l
				if !npmScriptVerb(verb) {
					return
				}
				continue
			}
			if verb == "run" || verb == "run-script" || verb == "rum" || verb == "urn" {
				verb = "run " + l // the script's name
				continue
			}
			z.scriptArgument(name, a)
		case l == "--":
			passed = true
		default:
			n, v, eq := strings.Cut(l, "=")
			kind, ok := npmKnown[n]
			switch {
			case !ok:
				z.unknownOption(name + " " + clip(printable(l), 40) + " (npm reads it as a configuration key the policy does not know: some run programs or load code)")
				return
			case kind == 'v' && !eq:
				i++
			case n == "--loglevel" && strings.ContainsAny(v, "/."):
				z.a.refuseAllow(name + " " + clip(printable(l), 40) + " (not a log level)")
			}
		}
	}
}

// scriptArgument judges a word npm hands the script: a path outside the
// workspace or a URL, as the word or a value after '=', is code or
// configuration from elsewhere for the test runner.
func (z *analyzer) scriptArgument(name string, a word) {
	for _, p := range strings.Split(a.loose, "=") {
		p = strings.Trim(p, `"'`)
		switch {
		case strings.HasPrefix(p, "/") || strings.HasPrefix(p, "~") || p == ".." || strings.HasPrefix(p, "../") ||
			strings.Contains(p, "/../") || strings.HasSuffix(p, "/.."):
		case strings.Contains(p, ":") && (strings.HasPrefix(p, "data:") || strings.HasPrefix(p, "http:") ||
			strings.HasPrefix(p, "https:") || strings.HasPrefix(p, "file:")):
		default:
			continue
		}
		z.a.refuseAllow(name + " passes " + clip(printable(a.loose), 40) + " to the script (a path outside the workspace or a URL: code or configuration from elsewhere)")
		return
	}
}

// goTestFlags is go test's flags (build flags, test flags, and the test
// binary's -test.* flags) with how each is judged: 'b' a flag, 'v' a
// value that runs, loads and writes nothing, 'w' a file or directory
// written (goWrites judges it), 'c' one goCodeFlags judges, and 'm',
// 'p', 'k' whose values are checked below. Not here, so not allowed:
// -exec, -toolexec, -vettool (run programs), -C, -overlay, -modfile (code
// from elsewhere), -linkshared (loads shared libraries built elsewhere),
// -fuzz (writes failing inputs under the package's testdata/fuzz),
// -test.fuzzworker, and any flag a newer go adds.
var goTestFlags = map[string]byte{
	"a": 'b', "n": 'b', "race": 'b', "msan": 'b', "asan": 'b', "cover": 'b', "v": 'b', "work": 'b', "x": 'b',
	"trimpath": 'b', "modcacherw": 'b', "json": 'b', "c": 'b', "failfast": 'b', "short": 'b', "benchmem": 'b',
	"fullpath": 'b', "paniconexit0": 'b', "buildvcs": 'b',
	"p": 'v', "covermode": 'v', "coverpkg": 'v', "tags": 'v', "installsuffix": 'v', "run": 'v', "skip": 'v',
	"bench": 'v', "benchtime": 'v', "count": 'v', "cpu": 'v', "fuzztime": 'v', "fuzzminimizetime": 'v', "list": 'v',
	"parallel": 'v', "shuffle": 'v', "timeout": 'v', "vet": 'v', "memprofilerate": 'v', "blockprofilerate": 'v',
	"mutexprofilefraction": 'v',
	"o":                    'w', "outputdir": 'w', "coverprofile": 'w', "cpuprofile": 'w', "memprofile": 'w', "blockprofile": 'w',
	"mutexprofile": 'w', "trace": 'w', "pkgdir": 'w', "fuzzcachedir": 'w', "testlogfile": 'w', "gocoverdir": 'w',
	"debug-trace": 'w', "debug-actiongraph": 'w', "debug-runtime-trace": 'w',
	"ldflags": 'c', "gcflags": 'c', "asmflags": 'c', "gccgoflags": 'c',
	"mod": 'm', "compiler": 'm', "buildmode": 'm', "pgo": 'k',
}

// goTestClosed reads go test's command line closed-world: flags by
// goTestFlags (before -args; after it, only the -test.* flags, the rest
// being the tests' own), packages and files inside the workspace, and
// -c's default output (PKG.test in the working directory) as a write.
func (z *analyzer) goTestClosed(args []word) {
	refuse := func(l, why string) { z.a.refuseAllow("go test " + clip(printable(l), 40) + " (" + why + ")") }
	// refuseUnknown: an option the table does not know, so what the
	// command writes is not modelled either (unknownOption).
	refuseUnknown := func(l, why string) {
		refuse(l, why)
		z.optionUnknown = true
	}
	var pkgs []word
	compile, output := false, false
	for i := 0; i < len(args); i++ {
		a := args[i]
		l := a.loose
		if !a.known() {
			z.a.refuseAllow("go test with an argument not known until run time")
			return
		}
		if l == "-args" || l == "--args" {
			for _, b := range args[i+1:] {
				n, _, _ := strings.Cut(strings.TrimLeft(b.loose, "-"), "=")
				if t, ok := strings.CutPrefix(n, "test."); ok && strings.HasPrefix(b.loose, "-") && goTestFlags[t] == 0 {
					refuseUnknown(b.loose, "a test binary flag the policy does not know")
					return
				}
			}
			break
		}
		if !strings.HasPrefix(l, "-") || l == "-" {
			pkgs = append(pkgs, a)
			continue
		}
		body := strings.TrimPrefix(strings.TrimPrefix(l, "-"), "-")
		n, v, eq := strings.Cut(body, "=")
		n = strings.TrimPrefix(n, "test.")
		kind := goTestFlags[n]
		if kind == 0 {
			refuseUnknown(l, "a flag the policy does not know: it may run a program, take code from elsewhere or write files")
			return
		}
		if kind != 'b' && !eq && i+1 < len(args) {
			i++
			v = args[i].loose
		}
		switch n {
		case "c":
			compile = v != "false" && v != "0"
		case "o":
			output = true
		}
		switch kind {
		case 'm':
			ok := n == "mod" && (v == "readonly" || v == "vendor") || n == "compiler" && v == "gc" ||
				n == "buildmode" && (v == "default" || v == "exe" || v == "pie")
			if !ok {
				// -mod=mod rewrites go.mod and go.sum; gccgo is another
				// compiler; other build modes write shared objects.
				refuse(n+"="+v, "it writes go.mod, runs another compiler or builds a mode the policy does not read")
			}
		case 'k':
			if v != "auto" && v != "off" && v != "default.pgo" {
				z.mention(v)
			}
		}
	}
	for _, p := range pkgs {
		if strings.HasPrefix(p.loose, ".") || strings.HasPrefix(p.loose, "/") || strings.HasSuffix(p.loose, ".go") {
			z.localCode(word{loose: strings.TrimSuffix(p.loose, "/..."), lit: strings.TrimSuffix(p.lit, "/..."), ok: p.ok}, "go test of a package")
		}
	}
	if compile && !output {
		// PKG.test in the working directory.
		switch {
		case len(pkgs) == 0 && z.cwd != "":
			z.write(path.Base(z.cwd)+".test", "go test -c")
		case len(pkgs) == 1 && !strings.Contains(pkgs[0].loose, "..."):
			z.write(path.Base(pkgs[0].loose)+".test", "go test -c")
		default:
			z.a.refuseAllow("go test -c writes test binaries whose names the policy does not place")
		}
	}
}

// systemctlStartVerb: the verbs that start units.
func systemctlStartVerb(v string) bool {
	switch v {
	case "start", "restart", "try-restart", "reload", "reload-or-restart", "try-reload-or-restart", "force-reload", "condrestart":
		return true
	}
	return false
}

// systemctlLong is systemctl's options as getopt_long reads them
// (abbreviations included): 'f' a flag and 'v' a value that only change
// what is printed or how long it waits, 'j' --job-mode, 'x' one that
// reaches another machine or container (-H runs ssh), another root, or
// anything else, whatever the verb.
var systemctlLong = map[string]byte{
	"--no-block": 'f', "--quiet": 'f', "--no-ask-password": 'f', "--wait": 'f', "--show-transaction": 'f', "--no-pager": 'f',
	"--no-legend": 'f', "--system": 'f', "--user": 'f', "--no-warn": 'f', "--help": 'f', "--version": 'f', "--full": 'f',
	"--job-mode": 'j', "--host": 'x', "--machine": 'x', "--root": 'x', "--image": 'x', "--image-policy": 'x',
	"--global": 'x', "--runtime": 'x', "--force": 'x', "--capsule": 'x',
}

// systemctlClosed: -H (ssh to another host), -M (another container) and
// --root keep allow rules off any systemctl command. The start verbs are
// read closed-world: their options by systemctlLong, their units plain
// service, socket or timer names. A target pulls in whatever it wants
// (emergency, rescue, factory-reset), a template's instance is data the
// policy does not read (modprobe@X loads module X, user@0 starts root's
// manager), a path names a mount or a device unit, a glob matches units
// nobody listed, and debug-shell, systemd-* and initrd-* are the
// system's own.
func (z *analyzer) systemctlClosed(name string, args []word) {
	refuse := func(l, why string) { z.a.refuseAllow(name + " " + clip(printable(l), 40) + " (" + why + ")") }
	// refuseUnknown: an option the table does not know, so what the
	// command writes is not modelled either (unknownOption).
	refuseUnknown := func(l, why string) {
		refuse(l, why)
		z.optionUnknown = true
	}
	verb := ""
	start := false
	for i := 0; i < len(args); i++ {
		a := args[i]
		l := a.loose
		if !a.known() {
			z.a.refuseAllow(name + " with an argument not known until run time")
			return
		}
		switch {
		case l == "--":
		case strings.HasPrefix(l, "--"):
			n, v, eq := strings.Cut(l, "=")
			opt, kind := gnuLong(n, systemctlLong)
			switch {
			case kind == 'x':
				refuse(l, "another machine, container or root, or a change that outlives the command")
				return
			case kind == 'j':
				if !eq && i+1 < len(args) {
					i++
					v = args[i].loose
				}
				if v != "fail" && v != "replace" {
					refuse(opt+"="+v, "a job mode that stops other units")
					return
				}
			case kind == 0 && (start || verb == ""):
				if systemctlValued(n) && !eq {
					i++
				}
				if start {
					refuseUnknown(l, "an option the policy does not know")
					return
				}
			}
		case strings.HasPrefix(l, "-") && len(l) > 1:
			for k := 1; k < len(l); k++ {
				c := l[k]
				switch {
				case c == 'H' || c == 'M':
					refuse(l, "another machine or container: -H runs ssh")
					return
				case c == 'q' || c == 'T' || c == 'l' || c == 'h':
				default:
					if strings.IndexByte("pPtnos", c) >= 0 && k == len(l)-1 {
						i++
					}
					if start || verb == "" {
						refuseUnknown(l, "an option the policy does not know")
						return
					}
					k = len(l)
				}
			}
		case verb == "":
			verb = l
			start = systemctlStartVerb(verb)
		case start:
			if !plainUnit(l) {
				refuse(verb+" "+l, "a unit the policy does not read as a plain service: a target, a template instance, a path, a glob or the system's own")
				return
			}
		}
	}
}

// plainUnit reports a unit name a rule allowing systemctl start covers.
func plainUnit(u string) bool {
	base, suffix := u, ""
	if i := strings.LastIndexByte(u, '.'); i > 0 {
		base, suffix = u[:i], u[i:]
	}
	switch suffix {
	case "", ".service", ".socket", ".timer":
	default:
		return false
	}
	if base == "" || strings.HasPrefix(base, "-") {
		return false
	}
	for _, c := range base {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.' || c == ':') {
			return false // @ (a template), /, \, globs
		}
	}
	switch {
	case base == "debug-shell" || base == "emergency" || base == "rescue" || strings.HasPrefix(base, "systemd-") ||
		strings.HasPrefix(base, "initrd-") || strings.HasPrefix(base, "getty") || strings.HasPrefix(base, "serial-getty") ||
		strings.HasPrefix(base, "console-getty") || strings.HasPrefix(base, "container-getty") || strings.HasPrefix(base, "autovt") ||
		strings.HasPrefix(base, "user-runtime-dir") || base == "user" || strings.HasPrefix(base, "factory-reset"):
		return false
	}
	return true
}

// batLong is bat's options: 'f' a flag, 'v' a value that runs and writes
// nothing (--pager's program is judged by pagerOptions). Not here, so not
// allowed: --lessopen (runs $LESSOPEN's command), --generate-config-file
// (writes bat's configuration outside the workspace: its --pager runs in
// every later bat), and the cache subcommand (builds or clears the cache
// outside the workspace).
var batLong = map[string]byte{
	"--show-all": 'f', "--show-nonprintable": 'f', "--plain": 'f', "--diff": 'f', "--number": 'f', "--force-colorization": 'f',
	"--no-paging": 'f', "--no-pager": 'f', "--list-themes": 'f', "--list-languages": 'f', "--chop-long-lines": 'f',
	"--squeeze-blank": 'f', "--unbuffered": 'f', "--no-config": 'f', "--no-custom-assets": 'f', "--no-lessopen": 'f',
	"--config-file": 'f', "--config-dir": 'f', "--cache-dir": 'f', "--diagnostic": 'f', "--acknowledgements": 'f',
	"--set-terminal-title": 'f', "--help": 'f', "--version": 'f',
	"--language": 'v', "--highlight-line": 'v', "--file-name": 'v', "--diff-context": 'v', "--tabs": 'v', "--wrap": 'v',
	"--terminal-width": 'v', "--color": 'v', "--italic-text": 'v', "--decorations": 'v', "--paging": 'v', "--pager": 'v',
	"--map-syntax": 'v', "--ignored-suffix": 'v', "--theme": 'v', "--theme-dark": 'v', "--theme-light": 'v', "--style": 'v',
	"--line-range": 'v', "--completion": 'v', "--nonprintable-notation": 'v', "--binary": 'v', "--squeeze-limit": 'v',
	"--strip-ansi": 'v',
}

// batClosed reads bat's options closed-world (clap: no abbreviations).
func (z *analyzer) batClosed(name string, args []word) {
	refuse := func(l, why string) { z.a.refuseAllow(name + " " + clip(printable(l), 40) + " (" + why + ")") }
	// refuseUnknown: an option the table does not know, so what the
	// command writes is not modelled either (unknownOption).
	refuseUnknown := func(l, why string) {
		refuse(l, why)
		z.optionUnknown = true
	}
	first := true
	for i := 0; i < len(args); i++ {
		l := args[i].loose
		switch {
		case l == "--":
			return
		case strings.HasPrefix(l, "--"):
			n, _, eq := strings.Cut(l, "=")
			kind := batLong[n]
			if kind == 0 {
				refuseUnknown(l, "an option the policy does not know")
				return
			}
			if kind == 'v' && !eq {
				i++
			}
		case strings.HasPrefix(l, "-") && len(l) > 1:
			for k := 1; k < len(l); k++ {
				c := l[k]
				switch {
				case strings.IndexByte("ApdnfPLSsuVh", c) >= 0:
				case strings.IndexByte("lHmr", c) >= 0:
					if k == len(l)-1 {
						i++
					}
					k = len(l)
				default:
					refuseUnknown(l, "an option the policy does not know")
					return
				}
			}
		case first && l == "cache":
			refuse(l, "it builds or clears bat's cache outside the workspace")
			return
		}
		first = false
	}
}

// gccValued is the compiler options that take the next word as their
// value (so it is not an input file).
func gccValued(l string) bool {
	switch l {
	case "-o", "-x", "-I", "-L", "-D", "-U", "-include", "-imacros", "-isystem", "-idirafter", "-iprefix", "-iwithprefix",
		"-iwithprefixbefore", "-iquote", "-isysroot", "-imultilib", "-MF", "-MT", "-MQ", "-Xlinker", "-Xassembler",
		"-Xpreprocessor", "-Xclang", "-T", "-u", "-z", "--param", "-aux-info", "-dumpdir", "-dumpbase", "-dumpbase-ext",
		"-wrapper", "-e", "-l", "-A", "-target", "-arch", "--sysroot", "-G", "--output", "-std", "-B":
		return true
	}
	return false
}

// gccDefaultWrites judges the files a compiler writes where no -o names
// them: a.out, or each source's .o (-c) or .s (-S), in the working
// directory; and the side files of -MD/-MMD (.d), -gsplit-dwarf (.dwo),
// -fstack-usage (.su) and -ftest-coverage/--coverage (.gcno), next to the
// output or, without -o, in the working directory.
func (z *analyzer) gccDefaultWrites(name string, args []word) {
	var srcs []word
	out, mf := "", false
	stage := "link"
	var sides []string
	for i := 0; i < len(args); i++ {
		l := args[i].loose
		switch {
		case l == "-o" || l == "--output":
			if i+1 < len(args) {
				out = args[i+1].loose
			}
			i++
		case strings.HasPrefix(l, "--output="):
			out = strings.TrimPrefix(l, "--output=")
		case strings.HasPrefix(l, "-o") && len(l) > 2:
			out = l[2:]
		case gccValued(l):
			if l == "-MF" {
				mf = true
			}
			i++
		case strings.HasPrefix(l, "-MF"):
			mf = true
		case l == "-c" && stage != "none":
			stage = "c"
		case l == "-S" && stage != "none":
			stage = "S"
		case l == "-E" || l == "-M" || l == "-MM" || l == "-fsyntax-only" || l == "--version" || l == "--help" ||
			strings.HasPrefix(l, "-print-") || strings.HasPrefix(l, "-dump") && !strings.HasPrefix(l, "-dumpdir") && !strings.HasPrefix(l, "-dumpbase") ||
			l == "-###":
			stage = "none"
		case l == "-MD" || l == "-MMD":
			sides = append(sides, ".d")
		case l == "-gsplit-dwarf":
			sides = append(sides, ".dwo")
		case l == "-fstack-usage":
			sides = append(sides, ".su")
		case l == "-ftest-coverage" || l == "--coverage":
			sides = append(sides, ".gcno")
		case strings.HasPrefix(l, "-") && l != "-":
		default:
			srcs = append(srcs, args[i])
		}
	}
	if len(srcs) == 0 {
		return
	}
	var sources []word
	for _, s := range srcs {
		switch path.Ext(s.loose) {
		case ".o", ".a", ".so", ".obj", ".lo", ".la":
		default:
			sources = append(sources, s)
		}
	}
	dir := "."
	if out != "" {
		dir = path.Dir(out)
	}
	for _, s := range sources {
		if !s.ok || s.lit == "-" {
			if len(sides) > 0 || out == "" && (stage == "c" || stage == "S") {
				z.a.refuseAllow(name + " writes files named after an input the policy cannot name")
			}
			continue
		}
		base := strings.TrimSuffix(path.Base(s.lit), path.Ext(s.lit))
		for _, ext := range sides {
			if ext == ".d" && mf {
				continue
			}
			z.write(path.Join(dir, base+ext), name+" "+ext+" file")
		}
		if out == "" && (stage == "c" || stage == "S") {
			ext := ".o"
			if stage == "S" {
				ext = ".s"
			}
			z.write(base+ext, name+" -"+stage)
		}
	}
	if out == "" && stage == "link" {
		z.write("a.out", name)
	}
}

// rsyncLong is rsync's long options, which popt matches exactly (no
// abbreviations): 'f' a flag, 'v' a value, both running, loading and
// writing nothing beyond the destination; the options that write, delete
// or run are judged in toolOptions and runOptions ('w'). Not here, so not
// allowed: --config, --dparam, --daemon (a server), -M/--remote-option
// (options for the other side, this machine's in a local copy),
// --read-batch (applies a batch file's changes), --copy-as (another
// user), --trust-sender, --write-devices, --early-input, and any option a
// newer rsync adds.
var rsyncLong = map[string]byte{
	"--verbose": 'f', "--quiet": 'f', "--no-motd": 'f', "--motd": 'f', "--checksum": 'f', "--archive": 'f', "--recursive": 'f',
	"--relative": 'f', "--no-implied-dirs": 'f', "--backup": 'f', "--update": 'f', "--inplace": 'f', "--append": 'f',
	"--append-verify": 'f', "--dirs": 'f', "--old-dirs": 'f', "--mkpath": 'f', "--links": 'f', "--copy-links": 'f',
	"--copy-unsafe-links": 'f', "--safe-links": 'f', "--munge-links": 'f', "--copy-dirlinks": 'f', "--keep-dirlinks": 'f',
	"--hard-links": 'f', "--perms": 'f', "--executability": 'f', "--acls": 'f', "--xattrs": 'f', "--owner": 'f', "--group": 'f',
	"--devices": 'f', "--specials": 'f', "--times": 'f', "--atimes": 'f', "--open-noatime": 'f', "--crtimes": 'f',
	"--omit-dir-times": 'f', "--omit-link-times": 'f', "--fake-super": 'f', "--sparse": 'f', "--preallocate": 'f',
	"--dry-run": 'f', "--whole-file": 'f', "--one-file-system": 'f', "--existing": 'f', "--ignore-non-existing": 'f',
	"--ignore-existing": 'f', "--remove-source-files": 'f', "--delete": 'f', "--del": 'f', "--delete-before": 'f',
	"--delete-during": 'f', "--delete-delay": 'f', "--delete-after": 'f', "--delete-excluded": 'f', "--ignore-missing-args": 'f',
	"--delete-missing-args": 'f', "--ignore-errors": 'f', "--force": 'f', "--partial": 'f', "--delay-updates": 'f',
	"--prune-empty-dirs": 'f', "--numeric-ids": 'f', "--ignore-times": 'f', "--size-only": 'f', "--fuzzy": 'f',
	"--compress": 'f', "--old-compress": 'f', "--new-compress": 'f', "--cvs-exclude": 'f', "--from0": 'f', "--old-args": 'f',
	"--secluded-args": 'f', "--protect-args": 'f', "--blocking-io": 'f', "--stats": 'f', "--8-bit-output": 'f',
	"--human-readable": 'f', "--progress": 'f', "--itemize-changes": 'f', "--list-only": 'f', "--fsync": 'f', "--ipv4": 'f',
	"--ipv6": 'f', "--version": 'f', "--help": 'f', "--inc-recursive": 'f', "--no-inc-recursive": 'f', "--i-r": 'f',
	"--no-i-r": 'f', "--msgs2stderr": 'f', "--no-msgs2stderr": 'f', "--super": 'f',
	"--info": 'v', "--debug": 'v', "--stderr": 'v', "--chmod": 'v', "--checksum-choice": 'v', "--cc": 'v', "--block-size": 'v',
	"--max-delete": 'v', "--max-size": 'v', "--min-size": 'v', "--max-alloc": 'v', "--usermap": 'v', "--groupmap": 'v',
	"--chown": 'v', "--timeout": 'v', "--contimeout": 'v', "--modify-window": 'v', "--compare-dest": 'v', "--copy-dest": 'v',
	"--compress-choice": 'v', "--zc": 'v', "--compress-level": 'v', "--zl": 'v', "--skip-compress": 'v', "--filter": 'v',
	"--exclude": 'v', "--exclude-from": 'v', "--include": 'v', "--include-from": 'v', "--files-from": 'v', "--address": 'v',
	"--port": 'v', "--sockopts": 'v', "--outbuf": 'v', "--out-format": 'v', "--log-format": 'v', "--log-file-format": 'v',
	"--password-file": 'v', "--bwlimit": 'v', "--stop-after": 'v', "--time-limit": 'v', "--stop-at": 'v', "--protocol": 'v',
	"--iconv": 'v', "--checksum-seed": 'v', "--suffix": 'v',
	"--rsh": 'w', "--rsync-path": 'w', "--log-file": 'w', "--write-batch": 'w', "--only-write-batch": 'w', "--backup-dir": 'w',
	"--partial-dir": 'w', "--temp-dir": 'w', "--link-dest": 'w',
}

// rsyncClosed reads rsync's options closed-world.
func (z *analyzer) rsyncClosed(args []word) {
	refuse := func(l string) {
		z.unknownOption("rsync " + clip(printable(l), 40) + " (an option the policy does not know: it may run, read a configuration or write elsewhere)")
	}
	for i := 0; i < len(args); i++ {
		l := args[i].loose
		switch {
		case l == "--":
			return
		case strings.HasPrefix(l, "--"):
			n, _, eq := strings.Cut(l, "=")
			kind := rsyncLong[n]
			if kind == 0 {
				if f, ok := strings.CutPrefix(n, "--no-"); ok && rsyncLong["--"+f] == 'f' && !eq {
					continue // --no-perms …
				}
				refuse(l)
				return
			}
			if kind != 'f' && !eq {
				i++
			}
		case strings.HasPrefix(l, "-") && len(l) > 1:
			for k := 1; k < len(l); k++ {
				c := l[k]
				switch {
				case strings.IndexByte("vqcarRbulLkKHpEAXogDtUNOJSnWxCFzhPiy0468sImd", c) >= 0:
				case strings.IndexByte("BefT", c) >= 0:
					if k == len(l)-1 {
						i++
					}
					k = len(l)
				default:
					refuse(l)
					return
				}
			}
		}
	}
}
