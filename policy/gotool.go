package policy

import (
	"path"
	"strings"
)

// The go command reads its flags with Go's flag package: -name=value,
// --name=value, -name value and --name value are one flag, and -nameVALUE
// is not (it is the flag "nameVALUE"). `go test` passes the test binary's
// own flags through, spelt -name or -test.name, and the test binary writes
// its profiles under -outputdir.

// goFlag is one flag as the go command reads it.
type goFlag struct {
	name  string // without dashes and without a leading "test."
	value word   // the value, when hasValue
	has   bool
}

// goValued lists the go flags whose value matters here and that take the
// next word when not written -name=value.
func goValued(name string) bool {
	switch name {
	case "o", "coverprofile", "cpuprofile", "memprofile", "blockprofile", "mutexprofile", "trace", "outputdir",
		"pkgdir", "testlogfile", "gocoverdir", "fuzzcachedir", "debug-trace", "debug-actiongraph",
		"debug-runtime-trace", "ldflags", "gcflags", "asmflags", "gccgoflags", "exec", "toolexec", "vettool",
		"overlay", "modfile", "C", "pgo", "run", "skip", "bench", "count", "timeout", "tags", "p", "parallel",
		"cpu", "covermode", "coverpkg", "benchtime", "fuzz", "fuzztime", "fuzzminimizetime", "list", "shuffle",
		"vet", "mod", "buildmode", "compiler", "installsuffix":
		return true
	}
	return false
}

// goFlags reads the flags of a go command line (after "go"), wherever
// they stand: flags after -args go to the test binary, which reads the
// profile flags too.
func goFlags(args []word) []goFlag {
	var out []goFlag
	for i := 0; i < len(args); i++ {
		w := args[i]
		l := w.loose
		if len(l) < 2 || l[0] != '-' || l == "--" {
			continue
		}
		body := strings.TrimPrefix(strings.TrimPrefix(l, "-"), "-")
		name, v, has := strings.Cut(body, "=")
		name = strings.TrimPrefix(name, "test.")
		f := goFlag{name: name, has: has}
		switch {
		case has:
			f.value = word{loose: v, lit: v, ok: w.ok}
		case goValued(name) && i+1 < len(args):
			i++
			f.value, f.has = args[i], true
		}
		out = append(out, f)
	}
	return out
}

// goWrites records the files and directories a go command writes through
// its flags: -o, the profiles (relative ones under -outputdir), -pkgdir,
// the test log and coverage directories, the debug traces.
func (z *analyzer) goWrites(args []word) {
	flags := goFlags(args)
	var outputdir *word
	for _, f := range flags {
		if f.name == "outputdir" && f.has {
			v := f.value
			outputdir = &v
		}
	}
	for _, f := range flags {
		if !f.has {
			continue
		}
		how := "go -" + f.name
		switch f.name {
		case "coverprofile", "cpuprofile", "memprofile", "blockprofile", "mutexprofile", "trace":
			v := f.value
			if outputdir != nil && !strings.HasPrefix(v.loose, "/") {
				if !outputdir.known() || !v.known() {
					z.a.cannotRead(how + " under an -outputdir that is not literal")
					continue
				}
				joined := path.Join(outputdir.loose, v.loose)
				v = word{loose: joined, lit: joined, ok: v.ok && outputdir.ok}
			}
			z.writeWord(v, how)
		case "o", "outputdir", "pkgdir", "testlogfile", "gocoverdir", "fuzzcachedir", "debug-trace",
			"debug-actiongraph", "debug-runtime-trace":
			z.writeWord(f.value, how)
		}
	}
}

// goCodeFlags keeps allow rules off go commands whose flags make the build
// run another program or take its code from elsewhere, and shows deny
// rules the programs named: -exec, -toolexec and -vettool run one;
// -ldflags/-gcflags/-asmflags/-gccgoflags pass options to the tools, and
// the linker's -extld, -extldflags (the C linker's -fuse-ld=, -B, -wrapper)
// and -tmpdir, or the compiler's profiles, run or write what nobody saw:
// only flags known to be harmless pass. -C, -overlay and -modfile take the
// code from elsewhere.
func (z *analyzer) goCodeFlags(args []word) {
	if sub, rest := runnerSub(args, nil); sub == "env" {
		for _, a := range rest {
			if a.loose == "-w" || a.loose == "-u" || a.loose == "--w" || a.loose == "--u" {
				// go env -w GOFLAGS=-toolexec=… (or CC, GOTOOLCHAIN) is
				// kept in go's env file and runs in every later build.
				z.a.danger("go env " + a.loose + " (it changes go's settings for every later build: GOFLAGS=-toolexec=… runs a program in each)")
			}
		}
	}
	if sub, rest := runnerSub(args, nil); sub == "test" {
		z.goTestClosed(rest)
	}
	for _, f := range goFlags(args) {
		switch f.name {
		case "exec", "toolexec", "vettool":
			z.a.refuseAllow("go -" + f.name + " (it runs another program)")
			if f.name == "vettool" && f.has {
				z.command(simple{words: []word{f.value, {loose: anyText, splat: true}}, guess: true}, 1)
			}
		case "C", "overlay", "modfile":
			z.a.refuseAllow("go -" + f.name + " (it takes code from elsewhere)")
		case "ldflags", "gcflags", "asmflags", "gccgoflags":
			if !f.has {
				continue
			}
			if why := goToolFlags(f.name, f.value); why != "" {
				// Not only kept from allow rules: -extld runs a program
				// the approver is not shown, and an option the policy
				// does not know may too.
				z.a.cannotRead("go -" + f.name + " " + why)
			}
		}
	}
}

// goToolFlags says why the value of -ldflags (or -gcflags, …) is not known
// to be harmless, or "". The value may start with a package pattern and
// '=' (all=-N -l); its words are split at spaces.
func goToolFlags(flag string, v word) string {
	if !v.known() {
		return "with options not known until run time"
	}
	s := v.loose
	if i := strings.IndexByte(s, '='); i > 0 && !strings.HasPrefix(s, "-") && !strings.ContainsAny(s[:i], " \t") {
		s = s[i+1:] // pattern=flags
	}
	fields := strings.Fields(s)
	for i := 0; i < len(fields); i++ {
		f := fields[i]
		if strings.ContainsAny(f, `"'`) {
			return "with quoting the policy does not read"
		}
		name, _, has := strings.Cut(strings.TrimPrefix(strings.TrimPrefix(f, "-"), "-"), "=")
		if !strings.HasPrefix(f, "-") {
			return "with " + clip(f, 40) + ", which is not an option"
		}
		valued, ok := goToolFlagKnown(flag, name)
		if !ok {
			return "with " + clip(f, 40) + " (only options known to be harmless are allowed; -extld runs a program)"
		}
		if valued && !has {
			i++ // -X main.v=1
		}
	}
	return ""
}

// goToolFlagKnown reports a tool option known to neither run nor write
// anything, and whether it takes the next word as its value.
func goToolFlagKnown(flag, name string) (valued, ok bool) {
	switch flag {
	case "ldflags":
		switch name {
		case "s", "w", "race", "msan", "asan", "v", "checklinkname", "compressdwarf", "strictdups", "linkshared":
			return false, true
		case "X", "B", "buildid", "linkmode", "buildmode":
			return true, true
		}
	case "gcflags":
		switch name {
		case "N", "l", "m", "S", "B", "C", "e", "race", "std", "complete", "dwarf", "smallframes", "shared",
			"dynlink", "wb", "live", "c", "lang", "spectre", "trimpath":
			return false, true
		}
	case "asmflags":
		switch name {
		case "S", "shared", "dynlink", "trimpath":
			return false, true
		case "D":
			return true, true
		}
	}
	return false, false
}
