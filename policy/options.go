package policy

import "strings"

// Long options that run code or name a file are also accepted abbreviated
// by GNU getopt_long, git's parse-options and npm (--compress-prog=…,
// --rec=…): a written option counts as the full one when it is a prefix of
// it at least min characters long, which over-matches only in favour of
// looking closer.

// longOption reports whether the word l (before any '=') is full or an
// abbreviation of it, and returns the value written after '=', if any.
func longOption(l, full string, min int) (value string, hasValue, ok bool) {
	name, v, has := strings.Cut(l, "=")
	if len(name) < min || !strings.HasPrefix(full, name) {
		return "", false, false
	}
	return v, has, true
}

// longOptionValues returns the values of the long option full (or its
// abbreviations) in ws: --opt=VALUE and --opt VALUE.
func longOptionValues(ws []word, full string, min int) []word {
	var out []word
	for i := 0; i < len(ws); i++ {
		l := ws[i].loose
		if l == "--" {
			break
		}
		v, has, ok := longOption(l, full, min)
		switch {
		case !ok:
		case has:
			out = append(out, word{loose: v, lit: strings.TrimPrefix(ws[i].lit, l[:len(l)-len(v)]), ok: ws[i].ok})
		case i+1 < len(ws):
			out = append(out, ws[i+1])
			i++
		}
	}
	return out
}

// codeOptions refuses allow rules for options that make an allowed runner
// take its code from somewhere else: npm's --prefix (another package.json),
// --userconfig/--globalconfig/--node-options; go's are in gotool.go.
func (z *analyzer) codeOptions(name string, ws []word) {
	var risky []string
	switch name {
	case "npm", "pnpm", "yarn":
		// --shell, --editor, --browser, --viewer and --git name programs
		// npm runs; --init-module and --use-yarnrc/--yarn-path load code.
		risky = []string{"--prefix", "--userconfig", "--globalconfig", "--node-options", "--script-shell", "--dir", "--cwd",
			"--shell", "--editor", "--browser", "--viewer", "--git", "--init-module", "--use-yarnrc", "--yarn-path",
			"--rc-filename", "--npmrc-path", "--config"}
		for _, w := range ws[1:] {
			if w.loose == "--" {
				break
			}
			if w.loose == "-C" || strings.HasPrefix(w.loose, "-C") && !strings.HasPrefix(w.loose, "--") {
				z.a.refuseAllow(name + " -C (it runs another package's scripts)")
			}
		}
	case "go":
		z.goCodeFlags(ws[1:])
		return
	default:
		return
	}
	for _, w := range ws[1:] {
		if w.loose == "--" {
			break
		}
		for _, o := range risky {
			min := len(o)
			if strings.HasPrefix(o, "--") && name != "go" {
				min = 5 // npm accepts abbreviations
			}
			if _, _, ok := longOption(w.loose, o, min); !ok {
				continue
			}
			switch o {
			case "--prefix", "--dir", "--cwd":
				// Another package's scripts: code, as the workspace's own
				// are, that the program runs by itself.
				z.a.refuseAllow(name + " " + o + " (it takes code from elsewhere)")
			default:
				// A program it runs, code it loads or a configuration that
				// names them, which the approver is not shown.
				z.a.cannotRead(name + " " + o + " (it runs a program, loads code or reads a configuration the policy does not read)")
			}
		}
	}
	if name == "npm" {
		z.npmScripts(name, ws[1:])
	}
	z.packageManagerWrites(name, ws[1:])
}

// packageManagerWrites records the directories npm, pnpm and yarn write
// through options: the debug logs, the cache, packed tarballs, the module
// and store folders. npm takes any abbreviation of a long option.
func (z *analyzer) packageManagerWrites(name string, args []word) {
	for _, o := range []string{"--logs-dir", "--cache", "--pack-destination", "--cache-folder", "--modules-folder",
		"--global-folder", "--link-folder", "--preferred-cache-folder", "--store-dir", "--virtual-store-dir",
		"--modules-dir", "--global-dir", "--global-bin-dir", "--cache-dir", "--state-dir", "--lockfile-dir"} {
		for _, v := range longOptionValues(args, o, 5) {
			z.writeWord(v, name+" "+o)
		}
	}
	// Arguments passed on to the script (npm test -- --outputFile=…):
	// the test runner writes where they say (jest's --outputFile and
	// --coverageDirectory, vitest's --outputFile.json=…). A long option
	// whose name says output, file, dir, report, log, cache or dest,
	// written with =VALUE, is judged as a write of VALUE when the value
	// looks like a path (a / or a .) or the name says file.
	for _, w := range args {
		l := w.loose
		if !strings.HasPrefix(l, "--") {
			continue
		}
		n, v, has := strings.Cut(l[2:], "=")
		if !has || v == "" {
			continue
		}
		lower := strings.ReplaceAll(strings.ToLower(n), "-", "")
		switch lower {
		case "loglevel", "logsmax", "cachemin", "cachemax", "reporter", "reporters", "rootdir", "logheapusage":
			continue
		}
		if !strings.ContainsAny(v, "/.") && !strings.Contains(lower, "file") {
			continue
		}
		for _, k := range []string{"out", "file", "dir", "report", "log", "cache", "dest"} {
			if strings.Contains(lower, k) {
				z.writeWord(word{loose: v, lit: v, ok: w.ok}, name+" --"+n)
				break
			}
		}
	}
}

// scriptsOf turns option values that are command lines into inners.
func scriptsOf(vals []word) []inner {
	out := make([]inner, 0, len(vals))
	for _, v := range vals {
		out = append(out, scriptOf(v))
	}
	return out
}

// shortOptionValues returns the values of the short option want in ws,
// reading clusters as getopt does: in -rt DIR or -rtDIR, t takes DIR.
// valued lists every short option that takes a value, so a cluster stops
// at the first of them.
func shortOptionValues(ws []word, valued string, want byte) []word {
	var out []word
	for i := 0; i < len(ws); i++ {
		l := ws[i].loose
		if l == "--" {
			break
		}
		if len(l) < 2 || l[0] != '-' || l[1] == '-' {
			continue
		}
		for k := 1; k < len(l); k++ {
			if strings.IndexByte(valued, l[k]) < 0 {
				continue
			}
			var v word
			if k+1 < len(l) {
				v = word{loose: l[k+1:], ok: ws[i].ok, lit: l[k+1:]}
			} else if i+1 < len(ws) {
				i++
				v = ws[i]
			}
			if l[k] == want {
				out = append(out, v)
			}
			break
		}
	}
	return out
}
