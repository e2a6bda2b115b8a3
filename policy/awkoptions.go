package policy

import "strings"

// awk's options, read closed-world. gawk and mawk take more than -f, -e,
// -v and -F, and the analysis passed every other option over:
//   - gawk -d[FILE], -p[FILE], -o[FILE] (--dump-variables, --profile,
//     --pretty-print) write FILE, or awkvars.out / awkprof.out;
//   - a cluster ends in -f FILE as well as starting with it (gawk -bf
//     prog.awk ran prog.awk's system());
//   - mawk -W exec FILE runs FILE as the program (mawk is Debian's awk:
//     awk -W exec out/x ran out/x's system() under a rule for awk).
// An option the table does not know keeps allow rules off.

// awkFlags are the one-letter options that take no value (gawk's and
// mawk's): they change how the program runs, not what it runs or writes.
const awkFlags = "bcCghMNnOPrsStV"

// awkCluster reads a word of one-letter options (not -v, -F, -f, -e, -i,
// -l, -E, which awkOptions reads when they lead the word) and reports
// whether it gave the program (an -f or -E inside the cluster).
func (z *analyzer) awkCluster(name, l string) (program bool) {
	for k := 1; k < len(l); k++ {
		c := l[k]
		rest := l[k+1:]
		switch {
		case strings.IndexByte(awkFlags, c) >= 0:
			continue
		case c == 'd' || c == 'p' || c == 'o':
			def := "awkprof.out"
			if c == 'd' {
				def = "awkvars.out"
			}
			if rest == "" {
				rest = def
			}
			z.writeWord(word{lit: rest, ok: true, loose: rest}, name+" -"+string(c))
			return false
		case c == 'L' || c == 'D':
			if c == 'D' {
				// The debugger reads its commands from the file.
				z.a.cannotRead(name + " -D (the debugger, which runs commands)")
			}
			return false
		case c == 'f' || c == 'E' || c == 'e' || c == 'i' || c == 'l':
			z.a.cannotRead(name + " " + clip(l, 40) + " (-" + string(c) + " inside a cluster: code from a file or the next word)")
			return c == 'f' || c == 'E' || c == 'e'
		default:
			z.unknownOption(name + " -" + string(c) + " (an option the policy's table for awk does not know)")
			return false
		}
	}
	return false
}

// awkLong reads gawk's long options other than those awkOptions reads.
func (z *analyzer) awkLong(name, l string) {
	n, v, has := strings.Cut(l, "=")
	writes := func(full, def string) bool {
		if !longMatches(n, full) {
			return false
		}
		if !has {
			v = def
		}
		z.writeWord(word{lit: v, ok: true, loose: v}, name+" "+full)
		return true
	}
	switch {
	case writes("--dump-variables", "awkvars.out"), writes("--profile", "awkprof.out"), writes("--pretty-print", "awkprof.out"):
	case longMatches(n, "--debug"):
		z.a.cannotRead(name + " --debug (the debugger, which runs commands)")
	default:
		for _, o := range []string{"--characters-as-bytes", "--traditional", "--copyright", "--gen-pot", "--usage", "--help",
			"--lint", "--bignum", "--use-lc-numeric", "--non-decimal-data", "--optimize", "--posix", "--re-interval",
			"--no-optimize", "--sandbox", "--lint-old", "--version", "--csv"} {
			if longMatches(n, o) {
				return
			}
		}
		z.unknownOption(name + " " + clip(printable(n), 40) + " (an option the policy's table for awk does not know)")
	}
}

// awkW reads mawk's -W OPTION; it reports whether it gave the program
// (-W exec FILE, -W file=FILE … the program comes from a file).
func (z *analyzer) awkW(name, v string) (program bool) {
	k, _, _ := strings.Cut(v, "=")
	switch k {
	case "version", "v", "usage", "u", "dump", "d", "interactive", "i", "posix_space", "posix", "sprintf", "random",
		"traditional", "repetitions", "r":
		return false
	case "exec", "e", "file", "f", "include", "usage-file":
		z.a.cannotRead(name + " -W " + clip(printable(v), 40) + " (the program comes from a file)")
		return true
	}
	z.unknownOption(name + " -W " + clip(printable(v), 40) + " (an option the policy's table for awk does not know)")
	return false
}
