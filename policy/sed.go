package policy

import (
	"path"
	"strings"
)

// sedEffect is what a sed script does beyond printing its input.
type sedEffect struct {
	writes    []string // files the w and W commands and the s///w flag write
	reads     []string // files the r and R commands read into the output
	runs      []string // commands e COMMAND runs
	runsInput bool     // e alone or s///e runs the pattern space (text from the input) as a command
}

// sedEffects reads a GNU sed script for what it does beyond printing. ok
// is false when the script is not understood; such a script is never
// allowed.
func sedEffects(script string) (eff sedEffect, ok bool) {
	s := script
	i := 0
	restOfLine := func() string {
		j := strings.IndexByte(s[i:], '\n')
		if j < 0 {
			j = len(s) - i
		}
		v := s[i : i+j]
		i += j
		return strings.TrimLeft(v, " \t")
	}
	// skipDelimited moves past text up to the next unescaped d.
	skipDelimited := func(d byte) bool {
		for ; i < len(s); i++ {
			switch s[i] {
			case '\\':
				i++
			case d:
				i++
				return true
			}
		}
		return false
	}
	for i < len(s) {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == ';' || c == '{' || c == '}' || c == '!':
			i++
			continue
		case c >= '0' && c <= '9' || c == '$' || c == ',' || c == '~' || c == '+':
			i++ // an address
			continue
		case c == '/':
			i++
			if !skipDelimited('/') {
				return sedEffect{}, false
			}
			for i < len(s) && (s[i] == 'I' || s[i] == 'M') {
				i++
			}
			continue
		case c == '\\' && i+1 < len(s):
			d := s[i+1]
			i += 2
			if !skipDelimited(d) {
				return sedEffect{}, false
			}
			continue
		}
		i++
		switch c {
		case '#':
			restOfLine()
		case ':', 'b', 't', 'T', 'a', 'i', 'c', 'r', 'R', 'q', 'Q', 'l', 'L':
			// Labels, text and numbers run to the end of the line; GNU
			// sed ends a label or a number at ';' too, which the loop
			// above then skips.
			switch c {
			case ':', 'b', 't', 'T', 'q', 'Q', 'l', 'L':
				for i < len(s) && s[i] != ';' && s[i] != '\n' && s[i] != '}' {
					i++
				}
			case 'r', 'R':
				eff.reads = append(eff.reads, restOfLine())
			default:
				restOfLine()
			}
		case 'w', 'W':
			eff.writes = append(eff.writes, restOfLine())
		case 'e':
			if cmd := restOfLine(); cmd != "" {
				eff.runs = append(eff.runs, cmd)
			} else {
				eff.runsInput = true
			}
		case 's', 'y':
			// Both take two parts after a delimiter of their choosing:
			// the pattern (for y, the source characters), then the
			// replacement.
			if i >= len(s) {
				return sedEffect{}, false
			}
			d := s[i]
			i++
			for range 2 {
				if !skipDelimited(d) {
					return sedEffect{}, false
				}
			}
			if c == 'y' {
				break // y takes no flags
			}
			for i < len(s) {
				f := s[i]
				if f == 'w' {
					i++
					eff.writes = append(eff.writes, restOfLine())
					break
				}
				if f == 'e' {
					eff.runsInput = true
				}
				if !strings.ContainsRune("gpiIme0123456789", rune(f)) {
					break
				}
				i++
			}
		case '=', 'd', 'D', 'g', 'G', 'h', 'H', 'n', 'N', 'p', 'P', 'x', 'z', 'F', 'v':
		default:
			return sedEffect{}, false
		}
	}
	return eff, true
}

// sedCommand judges sed's scripts (-e, --expression, or the first operand)
// and its in-place files.
func (z *analyzer) sedCommand(name string, args []word, depth int, target func(word, string)) {
	inPlace, haveScript, opts, sandbox := false, false, true, false
	var scripts, files, suffixes []word
	for i := 0; i < len(args); i++ {
		l := args[i].loose
		// GNU sed accepts any unambiguous abbreviation of a long option.
		long := func(full string, min int) (value word, ok bool) {
			v, has, ok := longOption(l, full, min)
			switch {
			case !ok:
				return word{}, false
			case has:
				return word{loose: v}, true
			case i+1 < len(args):
				i++
				return args[i], true
			}
			return word{loose: anyText}, true
		}
		switch {
		case opts && l == "--":
			opts = false
		case opts && strings.HasPrefix(l, "--"):
			if v, has, ok := longOption(l, "--in-place", 3); ok {
				inPlace = true
				if has {
					suffixes = append(suffixes, word{loose: v, lit: v, ok: args[i].ok})
				}
			} else if v, ok := long("--expression", 3); ok {
				scripts = append(scripts, v)
				haveScript = true
			} else if v, ok := long("--file", 4); ok {
				z.a.refuseAllow(name + " reads its script from a file")
				// A script's e command runs programs, its w writes:
				// one the command wrote itself, or a descriptor, is
				// code the policy has not read.
				z.scriptPath(v, name+" --file")
				haveScript = true
			} else if _, ok := long("--line-length", 3); ok {
			} else if _, has, ok := longOption(l, "--sandbox", 4); ok && !has {
				sandbox = true
			} else if !sedFlag(l) {
				z.unknownOption(name + " option " + clip(l, 40) + " the policy does not know")
			}
		case opts && strings.HasPrefix(l, "-") && l != "-":
			// Clustered short options; -e and -f take the rest or the next word.
			for k := 1; k < len(l); k++ {
				switch l[k] {
				case 'i':
					inPlace = true
					if k+1 < len(l) {
						// -i.bak: the rest is the backup suffix.
						suffixes = append(suffixes, word{loose: l[k+1:], lit: l[k+1:], ok: args[i].ok})
					}
					k = len(l)
				case 'e', 'f':
					v := l[k+1:]
					vw := word{loose: v, lit: v, ok: args[i].ok}
					if v == "" && i+1 < len(args) {
						i++
						v = args[i].loose
						vw = args[i]
					}
					if l[k] == 'e' {
						scripts = append(scripts, word{loose: v})
					} else {
						z.a.refuseAllow(name + " reads its script from a file")
						z.scriptPath(vw, name+" -f")
					}
					haveScript = true
					k = len(l)
				case 'l':
					if k+1 == len(l) {
						i++
					}
					k = len(l)
				case 'n', 'E', 'r', 's', 'u', 'z', 'b':
				default:
					// -I (BSD sed's in-place with a suffix in the next
					// word) and anything else GNU sed does not take.
					z.unknownOption(name + " option -" + string(l[k]) + " the policy does not know")
				}
			}
		case opts && strings.HasPrefix(l, "-") && l != "-":
		case !haveScript:
			scripts = append(scripts, args[i])
			haveScript = true
		default:
			files = append(files, args[i])
		}
	}
	for _, sc := range scripts {
		if !sc.known() {
			if sandbox {
				// --sandbox refuses e, w and r: the script can only
				// print.
				z.a.refuseAllow(name + " script that is not literal")
			} else {
				// Its e and s///e run programs, its w writes files
				// (S='1e id'; sed "$S" ran id): code the policy cannot
				// read, as an awk program that is not literal is.
				z.a.cannotRead(name + " script that is not literal (its e runs programs, its w writes files)")
			}
			continue
		}
		eff, ok := sedEffects(sc.loose)
		if !ok {
			z.a.refuseAllow(name + " script the policy does not understand")
		}
		for _, w := range eff.writes {
			z.write(w, name+" w")
		}
		for _, r := range eff.reads {
			z.mention(r) // read_file rules hold for sed 'R .env' as for cat .env
		}
		for _, r := range eff.runs {
			z.script(r, depth+1, false)
		}
		if eff.runsInput {
			z.unknown(name + "'s e runs text from its input as a command")
		}
	}
	if inPlace {
		for _, f := range files {
			target(f, name+" -i")
			for _, suf := range suffixes {
				z.sedBackup(name, f, suf)
			}
		}
	}
}

// sedBackup judges the backup GNU sed -iSUFFIX makes of the file f: it
// renames f to SUFFIX with every '*' replaced by f as written, or to f
// followed by SUFFIX when there is no '*'; the result is a path from the
// working directory (sed -i'.git/*' p config moves config to .git/config).
// A suffix of just "*" keeps no backup. Some builds put the backup beside
// the file (the directory of f, then SUFFIX with '*' as f's base name):
// that place is judged too.
func (z *analyzer) sedBackup(name string, f, suf word) {
	if suf.loose == "*" {
		return
	}
	if !f.known() || !suf.known() {
		// Where the backup lands is decided when bash runs (an unquoted
		// -i.git/hooks/pre-commi* stays as written when nothing
		// matches): a write the policy cannot place.
		z.a.cannotRead(name + " -i with a backup whose name is not literal")
		return
	}
	how := name + " -i backup"
	var names []string
	if strings.Contains(suf.loose, "*") {
		names = append(names, strings.ReplaceAll(suf.loose, "*", f.loose))
		if dir := path.Dir(f.loose); dir != "." {
			names = append(names, path.Join(dir, strings.ReplaceAll(suf.loose, "*", path.Base(f.loose))))
		}
	} else {
		names = append(names, f.loose+suf.loose)
	}
	for _, n := range names {
		z.writeWord(word{loose: n, lit: n, ok: f.ok && suf.ok}, how)
	}
}

// sedFlag reports a GNU sed long option that takes no value, or an
// abbreviation of one.
func sedFlag(l string) bool {
	for _, f := range []string{"--quiet", "--silent", "--regexp-extended", "--separate", "--sandbox", "--unbuffered",
		"--posix", "--debug", "--follow-symlinks", "--null-data", "--zero-terminated", "--help", "--version"} {
		if _, has, ok := longOption(l, f, 3); ok && !has {
			return true
		}
	}
	return false
}
