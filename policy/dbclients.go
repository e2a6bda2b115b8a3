package policy

import "strings"

// Database clients' own file access: sqlite3's, psql's and mysql's SQL
// and commands open files and run programs the shell never sees.
//
// sqlite3 :memory: "select readfile('.env')" and
// ".import .env t" printed .env past a read_file deny rule, fsdir('.')
// printed every file below the directory, writefile() wrote a hook
// (mode 0755 if asked) into .git, and the database operand is a file
// sqlite3 creates and writes. What the policy reads here is closed: a
// dot-command it knows opens nothing, or opens the literal file it names
// (judged as a read or a write); SQL with none of the functions and
// statements that reach files; and the database, a write. Anything else,
// and SQL that comes from stdin, is code the policy does not read.

// sqliteQuiet lists the dot-commands that open no file and run nothing.
// sqlite3 also takes abbreviations; those are not listed, so they are not
// read (closed world).
var sqliteQuiet = map[string]bool{
	".tables": true, ".schema": true, ".fullschema": true, ".headers": true, ".header": true,
	".mode": true, ".dump": true, ".indexes": true, ".indices": true, ".quit": true, ".exit": true,
	".help": true, ".show": true, ".timer": true, ".width": true, ".nullvalue": true,
	".separator": true, ".print": true, ".databases": true, ".dbinfo": true, ".changes": true,
	".echo": true, ".bail": true, ".eqp": true, ".stats": true, ".version": true, ".explain": true,
	".limit": true, ".timeout": true, ".prompt": true, ".sha3sum": true,
}

// sqliteFileCommands are the dot-commands that open the file named by
// their last word: true for a write.
var sqliteFileCommands = map[string]bool{
	".read": false, ".import": false, ".restore": false, ".open": true,
	".save": true, ".backup": true, ".output": true, ".once": true, ".log": true,
	".trace": true, ".iotrace": true, ".clone": true,
}

// sqliteFileSQL are the SQL functions and statements of the sqlite3 shell
// (its built-in fileio, zipfile and sqlar extensions) that open files.
var sqliteFileSQL = []string{"readfile", "writefile", "fsdir", "lsdir", "zipfile", "sqlar",
	"attach", "vacuum", "edit(", "load_extension"}

// sqliteLine is sqlite3's command line read: its database operand, the
// SQL and dot-commands it was given, and an option that makes it open
// files the policy does not read ("" if none).
type sqliteLine struct {
	db     *word
	texts  []word
	opaque string
	init   bool // -init FILE: commands from a file
}

// sqliteValued are sqlite3's options that take the next word.
var sqliteValued = []string{"-separator", "-nullvalue", "-newline", "-mmap", "-lookaside", "-pagecache", "-heap",
	"-maxsize", "-vfs", "-escape"}

func readSqliteLine(args []word) sqliteLine {
	var sl sqliteLine
	for i := 0; i < len(args); i++ {
		w := args[i]
		l := w.loose
		switch {
		case (l == "-cmd" || l == "--cmd") && i+1 < len(args):
			i++
			sl.texts = append(sl.texts, args[i])
		case (l == "-init" || l == "--init") && i+1 < len(args):
			i++
			sl.init = true
		case sl.db == nil && (contains(sqliteValued, l) || contains(sqliteValued, strings.TrimPrefix(l, "-"))) && i+1 < len(args):
			i++
		case sl.db == nil && (strings.HasPrefix(l, "-A") || l == "-archive" || l == "--archive" ||
			l == "-zip" || l == "--zip" || l == "-deserialize" || l == "--deserialize"):
			// -A reads and writes the files an archive command names.
			sl.opaque = clip(l, 20)
		case strings.HasPrefix(l, "-") && sl.db == nil:
		case sl.db == nil:
			sl.db = &args[i]
		default:
			sl.texts = append(sl.texts, w)
		}
	}
	return sl
}

// sqliteFiles judges what sqlite3's command line opens.
func (z *analyzer) sqliteFiles(name string, args []word) {
	sl := readSqliteLine(args)
	if sl.opaque != "" {
		z.a.cannotRead(name + " " + sl.opaque + " opens files of an archive the policy does not read")
	}
	if sl.db != nil && sl.db.loose != ":memory:" && sl.db.loose != "" {
		z.writeWord(*sl.db, name+" database")
	}
	for _, w := range sl.texts {
		z.sqliteOpens(name, w)
	}
}

// sqliteOpens judges what one SQL or dot-command argument of sqlite3
// opens.
func (z *analyzer) sqliteOpens(name string, w word) {
	if !w.known() {
		z.a.cannotRead(name + " SQL the policy cannot see")
		return
	}
	for _, line := range strings.Split(w.loose, "\n") {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, ".") {
			lower := strings.ToLower(line)
			for _, f := range sqliteFileSQL {
				if strings.Contains(lower, f) {
					z.a.cannotRead(name + " SQL that opens files (" + strings.TrimSuffix(f, "(") + ")")
				}
			}
			continue
		}
		fields := sqliteArgs(line)
		dot := fields[0]
		writes, opens := sqliteFileCommands[dot]
		switch {
		case sqliteQuiet[dot], (dot == ".output" || dot == ".once") && len(fields) == 1:
			// Nothing opened (.output alone is stdout again).
		case strings.Contains(line, "|") && opens, sqliteRunsCommand(dot):
			// A command sqlite3 runs: judged as a command (sqliteCommands).
		case !opens || len(fields) < 2:
			z.a.cannotRead(name + " " + clip(dot, 20) + " (a dot-command the policy does not read)")
		default:
			f := fields[len(fields)-1]
			if dot == ".import" && len(fields) >= 3 {
				f = fields[len(fields)-2] // .import [OPTIONS] FILE TABLE
			}
			switch {
			case strings.HasPrefix(f, "-"):
				// .once -x opens a spreadsheet program, -e an editor.
				z.a.cannotRead(name + " " + dot + " " + clip(f, 20) + " (an option the policy does not read)")
			case writes:
				z.write(f, name+" "+dot)
			default:
				z.mention(f)
			}
		}
	}
}

// sqliteArgs splits a dot-command line as the sqlite3 shell does: words
// apart at blanks, '…' and "…" one word without their quotes.
func sqliteArgs(line string) []string {
	var out []string
	for line = strings.TrimLeft(line, " \t"); line != ""; line = strings.TrimLeft(line, " \t") {
		if q := line[0]; q == '\'' || q == '"' {
			end := strings.IndexByte(line[1:], q)
			if end < 0 {
				return append(out, line[1:])
			}
			out = append(out, line[1:1+end])
			line = line[2+end:]
			continue
		}
		end := strings.IndexAny(line, " \t")
		if end < 0 {
			end = len(line)
		}
		out = append(out, line[:end])
		line = line[end:]
	}
	return out
}

// psqlQuiet lists psql's meta-commands that open no file and run nothing
// (describing, listing, formatting, connection facts); any other (\copy,
// \i, \o, \g FILE, \w, \s, \lo_import, \e, \setenv, \pset pager, \!)
// is not read.
var psqlQuiet = map[string]bool{
	`\d`: true, `\d+`: true, `\dt`: true, `\dt+`: true, `\dn`: true, `\df`: true, `\dv`: true, `\di`: true,
	`\du`: true, `\dx`: true, `\ds`: true, `\l`: true, `\l+`: true, `\list`: true, `\x`: true, `\timing`: true,
	`\conninfo`: true, `\echo`: true, `\q`: true, `\quit`: true, `\encoding`: true, `\a`: true, `\t`: true,
}

// psqlFileSQL and mysqlFileText are what, in the SQL or the client's
// commands, reaches files or programs: COPY … FROM/TO a file or PROGRAM,
// the server's file functions, mysql's source, tee, pager, system, LOAD
// DATA LOCAL INFILE (the client sends the file) and INTO OUTFILE.
var (
	psqlFileSQL   = []string{"copy", "program", "pg_read", "pg_ls", "pg_file", "lo_import", "lo_export"}
	mysqlFileText = []string{"source", "tee", "pager", "system", "edit", "infile", "outfile", "dumpfile", "load_file",
		`\.`, `\t`, `\p`, `\!`, `\e`, `\o`}
)

// dbClientOptions are psql's or mysql's options whose value is commands
// (code), a file of commands (file), or a file written (writes).
func dbClientOptions(name string) (code, file, writes []string) {
	if name == "psql" {
		return []string{"-c", "--command"}, []string{"-f", "--file"}, []string{"-o", "--output", "-L", "--log-file"}
	}
	return []string{"-e", "--execute"}, nil, []string{"--tee"}
}

// dbClientGiven reports whether psql or mysql was given its commands on
// its command line or in a file (-f); without, it reads them from stdin.
func dbClientGiven(name string, args []word) bool {
	code, file, _ := dbClientOptions(name)
	for _, a := range args {
		opt, _, _ := strings.Cut(a.loose, "=")
		if contains(code, opt) || contains(file, opt) || len(opt) > 2 && opt[1] != '-' && (contains(code, opt[:2]) || contains(file, opt[:2])) {
			return true
		}
	}
	return false
}

// dbClientFiles judges psql's and mysql's command line: what -c/-e runs,
// and the files -o/-L/--tee write.
func (z *analyzer) dbClientFiles(name string, args []word) {
	code, _, writes := dbClientOptions(name)
	for i := 0; i < len(args); i++ {
		l := args[i].loose
		if l == "--" {
			break
		}
		opt, glued, eq := strings.Cut(l, "=")
		value := func() (word, bool) {
			if eq {
				return word{loose: glued, lit: glued, ok: args[i].ok}, true
			}
			if i+1 < len(args) {
				i++
				return args[i], true
			}
			return word{}, false
		}
		switch {
		case contains(code, opt):
			if v, ok := value(); ok {
				z.dbClientText(name, v)
			}
		case contains(writes, opt):
			if v, ok := value(); ok {
				z.writeWord(v, name+" "+opt)
			}
		case len(opt) > 2 && opt[0] == '-' && opt[1] != '-' && contains(code, opt[:2]):
			// -cSQL, -eSQL: the value glued to the option.
			z.dbClientText(name, word{loose: l[2:], lit: l[2:], ok: args[i].ok})
		}
	}
}

// dbClientText judges one -c/-e text of psql or mysql.
func (z *analyzer) dbClientText(name string, w word) {
	if !w.known() {
		z.a.cannotRead(name + " commands the policy cannot see")
		return
	}
	lower := strings.ToLower(w.loose)
	if name != "psql" {
		for _, f := range mysqlFileText {
			if strings.Contains(lower, f) {
				z.a.cannotRead(name + " " + strings.TrimSpace(f) + " (it opens files or runs programs, which the policy does not read)")
				return
			}
		}
		return
	}
	for rest := w.loose; ; {
		i := strings.IndexByte(rest, '\\')
		if i < 0 {
			break
		}
		rest = rest[i:]
		end := strings.IndexAny(rest, " \t\n;")
		if end < 0 {
			end = len(rest)
		}
		if meta := rest[:end]; !psqlQuiet[meta] && meta != `\\` {
			z.a.cannotRead(name + " " + clip(meta, 20) + " (a meta-command the policy does not read)")
			return
		}
		rest = rest[end:]
	}
	for _, f := range psqlFileSQL {
		if strings.Contains(lower, f) {
			z.a.cannotRead(name + " SQL that reaches files or programs (" + f + ")")
			return
		}
	}
}
