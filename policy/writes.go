package policy

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"
)

// A command that writes a file is judged as a write_file call on that
// file, with the same rules: `echo … > package.json; npm test` must not be
// allowed where `write_file package.json` would ask. The analysis records
// every file a command writes (redirections, tee, dd of=, cp/mv/install
// destinations, sed -i) and decideBash checks each against the write_file
// rules: a deny rule denies the bash call, an ask rule asks, and without an
// allow rule the bash call cannot be allowed by bash rules alone.

// writeTarget is one file a command writes.
type writeTarget struct {
	shown string // as written, for the reason
	how   string // what writes it ("a redirection", "rm deletes"), for Effects
	abs   string // absolute and clean; resolved against the workspace when the cwd is unknown
	real  string // abs with symlinks resolved; "" when unknown
	// implied: a write the command makes by what it is, not by a name
	// it was given to write: a delete (rm, find -delete), a package
	// manager's own files. Deny and ask rules on write_file apply; the
	// bash rule that allows the command needs no write_file allow rule
	// beside it.
	implied bool
	// pieces: the program writes every file next to abs whose base name
	// this glob accepts (split's PREFIX*), abs being the first; deny and
	// ask rules that may name any of them apply.
	pieces string
	// tree: the program writes, deletes or changes the files under abs,
	// not abs alone, and their names are not on the line: a recursive
	// delete, chmod or copy, an extraction, git writing the work tree
	// from commits. Deny and ask rules that may name any file under it
	// apply (a deny on **/.env meets rm -r sub and git checkout main), as
	// they do to a tree read (unnamed.go). Set only where abs is or may
	// be a directory (treeWrite).
	tree bool
	// rest: for a pattern written (rm out/*.o), the pattern's segments
	// under abs: only the files they match are written, judged as a
	// pattern read is (unnamed.go). nil: every file under abs.
	rest []string
	// flat: a directory the pattern matches is not written whole (rm
	// without -r removes no directory's files).
	flat bool
	// follows: a link the tree holds is written where it leads (shred
	// overwrites what a link names), not as itself.
	follows bool
	// here: the tree's files are the ones under abs when the command
	// starts (a delete, chmod -R), and nothing earlier in the line wrote
	// there: where the call was resolved here, they are listed and each
	// judged as written (writeTreeVerdict), not the rules alone.
	here bool
	// from: the directory a copy or move takes the tree's files from, as
	// they are there now, where abs is not there yet (so no link in it
	// leads a file elsewhere) and nothing earlier in the line wrote either:
	// listed like here, each file judged at its new name.
	from string
}

// noFile: names a redirection may write without writing a file.
func noFile(p string) bool {
	switch p {
	case "/dev/null", "/dev/stdout", "/dev/stderr", "/dev/stdin", "/dev/tty", "/dev/fd/1", "/dev/fd/2":
		return true
	}
	return false
}

// write judges a literal path the command writes; how says what writes it
// ("a redirection", "tee").
func (z *analyzer) write(p, how string) {
	if noFile(p) {
		return
	}
	cwd := z.cwd
	if cwd == "" {
		// After cd: allow rules cannot apply (below). The write is judged
		// in every directory the command may be in; after a cd the policy
		// cannot follow, where it lands is unknown. The rules are still
		// checked as if it were the workspace so a deny rule on a name is
		// not dodged by a cd.
		cwd = z.workspace
		if !path.IsAbs(p) {
			if z.cwds == nil {
				z.a.cannotRead(how + " to a relative path after a cd the policy cannot follow (" + printable(p) + ")")
			}
			for _, d := range z.cwds {
				if d != z.workspace {
					z.recordWrite(p, how, d)
				}
			}
		}
	}
	z.recordWrite(p, how, cwd)
	if z.implied {
		return
	}
	if z.cwd == "" {
		z.a.refuseAllow(how + " to a relative path after cd (" + p + ")")
		if !path.IsAbs(p) {
			return
		}
	}
	z.judgeWrite(p, how)
}

// changeDir follows cd, pushd and popd: a cd to a literal directory adds
// the directories the command may then be in; any other forgets them.
func (z *analyzer) changeDir(name string, args []word) {
	from := z.cwds
	if z.cwd != "" {
		from = []string{z.cwd}
	}
	z.cwd = ""
	var dirs []word
	for _, w := range args {
		if len(dirs) == 0 && (w.loose == "-L" || w.loose == "-P" || w.loose == "--") {
			continue
		}
		dirs = append(dirs, w)
	}
	if (name != "cd" && name != "pushd") || len(dirs) != 1 || !dirs[0].ok || dirs[0].lit == "-" || from == nil {
		z.cwds = nil
		return
	}
	to := slices.Clone(from)
	for _, c := range from {
		d, _ := resolveIn(dirs[0].lit, c, z.workspace)
		if c == "" && !path.IsAbs(dirs[0].lit) {
			continue // from a directory not known (Programs), to one not known
		}
		if raw := path.Clean(dirs[0].lit); d == "" || within(d, "/dev") || within(d, "/proc") || within(raw, "/dev") || within(raw, "/proc") {
			// /dev/fd/3 and /proc/self/cwd are whatever directory the
			// running shell holds open there, not a place the policy can
			// name: bash keeps /proc/self/cwd as its PWD, and a later
			// cd .. goes to /proc/self.
			z.cwds = nil
			return
		}
		if !slices.Contains(to, d) {
			to = append(to, d)
		}
	}
	if len(to) > maxCwds {
		to = nil
	}
	z.cwds = to
}

// maxCwds bounds the directories followed through cds.
const maxCwds = 8

// recordWrite records a write of p resolved in cwd.
func (z *analyzer) recordWrite(p, how, cwd string) {
	abs, _ := resolveIn(p, cwd, z.workspace)
	if processView(abs) {
		z.a.cannotRead(how + " through a process's entry in /proc (" + clip(printable(p), 60) + "), which the policy cannot place")
	}
	t := writeTarget{shown: p, how: how, abs: abs, implied: z.implied}
	t.tree = z.tree && mayBeDir(p, abs) && !remoteOperand(t)
	t.here = t.tree && z.treeHere && z.cwd != "" && abs != "" && z.untouched(abs)
	if t.tree && z.treeFrom != "" && z.cwd != "" && abs != "" && z.untouched(abs) && z.untouched(z.treeFrom) {
		if _, err := os.Lstat(abs); errors.Is(err, fs.ErrNotExist) {
			t.from = z.treeFrom
		}
	}
	for _, m := range z.madePaths {
		if abs != m && within(abs, m) {
			z.a.cannotRead(how + " through " + clip(printable(m), 60) + ", which an earlier command made (it may be a link, leading anywhere)")
			break
		}
	}
	if abs != "" {
		if real, ok := landing(abs); ok {
			// Rules are written against the workspace as given; a link
			// that stays inside is judged at the file it reaches.
			if rw := z.realWorkspace(); within(real, rw) {
				real = path.Join(z.workspace, strings.TrimPrefix(real, rw))
			}
			t.real = real
		}
	}
	z.a.writes = append(z.a.writes, t)
	z.configWrite(how, p, t.abs, t.real)
}

// untouched reports that nothing the line wrote or made before lies in or
// around the tree at abs: its files are still the ones there now.
func (z *analyzer) untouched(abs string) bool {
	for _, w := range z.a.writes {
		if w.abs == "" || within(w.abs, abs) || w.tree && within(abs, w.abs) {
			return false
		}
	}
	for _, m := range z.madePaths {
		if within(m, abs) || within(abs, m) {
			return false
		}
	}
	return true
}

// writePieces records a write of every file beside first whose base name
// the glob pieces accepts, first among them (writeTarget.pieces), shown
// to the approver as shown.
func (z *analyzer) writePieces(first, shown, pieces, how string) {
	before := len(z.a.writes)
	z.write(first, how)
	for i := before; i < len(z.a.writes); i++ {
		z.a.writes[i].shown, z.a.writes[i].pieces = shown, pieces
	}
}

// treeWrite records w as written whole: the files under it too
// (writeTarget.tree).
func (z *analyzer) treeWrite(w word, how string) {
	tree := z.tree
	z.tree = true
	z.writeWord(w, how)
	z.tree = tree
}

// mayBeDir reports whether the path p, at abs, is or may become a
// directory: its spelling says so (".", a trailing "/"), one is there
// (through links), or nothing is there yet. A regular file has no files
// under it.
func mayBeDir(p, abs string) bool {
	if dotsOnly(p) || strings.HasSuffix(p, "/") || abs == "" {
		return true
	}
	fi, err := os.Stat(abs)
	return err != nil || fi.IsDir()
}

// judgeWrite judges a write of p (absolute, or relative to the known cwd)
// for allow rules: inside the workspace, not through a link out of it or
// into .git, not to a hard-linked file.
func (z *analyzer) judgeWrite(p, how string) {
	p2, inside := z.resolve(p)
	if !inside {
		z.a.refuseAllow(how + " outside the workspace (" + p + ")")
		return
	}
	// Judged where it lands: a link inside the workspace (a repository can
	// ship one) may lead out of it, or into .git.
	real, ok := realPath(p2)
	if !ok || !within(real, z.realWorkspace()) {
		z.a.refuseAllow(how + " through a symlink that leads outside the workspace (" + p + ")")
		return
	}
	if isGitInternal(p2, z.workspace) || isGitInternal(real, z.realWorkspace()) {
		z.a.refuseAllow(how + " into .git (hooks and config run code)")
	}
	if hardLinked(real) {
		// The same file lives under another name, perhaps .git/config
		// or ~/.bashrc: where the write lands cannot be told from here.
		z.a.refuseGrant(how + " to a file with more than one hard link (" + p + ")")
	}
}

// commandWrites records the files a command writes through its operands.
func (z *analyzer) commandWrites(name string, ws []word, depth int) {
	args := ws[1:]
	target := func(w word, how string) {
		z.writeWord(w, how)
	}
	switch name {
	case "tree":
		// tree -o FILE writes the listing there.
		z.optionWrites(name, args, []string{"-o"})
	case "file":
		// file -C compiles each -m magic file into FILE.mgc (magic.mgc
		// without -m), beside it.
		if hasFlag(args, 'C', 'C', "--compile") {
			mags := append(shortOptionValues(args, "efFmP", 'm'), longOptionValues(args, "--magic-file", 4)...)
			if len(mags) == 0 {
				mags = []word{{loose: "magic", lit: "magic", ok: true}}
			}
			for _, m := range mags {
				for _, part := range strings.Split(m.loose, ":") {
					z.writeWord(word{loose: part + ".mgc", lit: part + ".mgc", ok: m.ok}, "file -C")
				}
			}
		}
	case "ssh-agent":
		// -a binds the agent's socket at that path.
		for _, v := range shortOptionValues(args, "aEOPt", 'a') {
			z.writeWord(v, "ssh-agent -a")
		}
	case "tee":
		opts := true
		for _, w := range args {
			if opts && w.loose == "--" {
				opts = false
				continue
			}
			if opts && strings.HasPrefix(w.loose, "-") && w.loose != "-" {
				continue
			}
			target(w, "tee")
		}
	case "dd":
		for _, w := range args {
			if strings.HasPrefix(w.loose, "of=") {
				z.writeWord(word{lit: strings.TrimPrefix(w.lit, "of="), ok: w.ok, loose: strings.TrimPrefix(w.loose, "of=")}, "dd")
			}
		}
	case "cp", "mv", "install", "ln", "rsync", "scp":
		before := len(z.a.writes)
		// A directory copied or moved puts its files under the
		// destination, by names the line does not give.
		z.tree = z.copiesTrees(name, args)
		z.copyDestination(name, args, target)
		z.tree = false
		// What these make may be a link (ln -s, or one cp -r copied):
		// a later write below it lands wherever the link leads.
		for _, t := range z.a.writes[before:] {
			if t.abs != "" {
				z.madePaths = append(z.madePaths, t.abs)
				if copiesLinks(name, args) {
					z.linkedPaths = append(z.linkedPaths, t.abs)
				}
			}
		}
		if ops := operands(args); name == "rsync" && copiesLinks(name, args) && len(ops) > 0 && ops[len(ops)-1].ok {
			// rsync -a src/ out/: the source's entries go into out itself.
			if abs, _ := resolveIn(ops[len(ops)-1].lit, z.cwd, z.workspace); abs != "" && z.cwd != "" {
				z.linkedPaths = append(z.linkedPaths, abs)
			}
		}
		if name == "mv" {
			// A move deletes its sources' names: mv dist/x out/ takes
			// dist/x away past a write_file rule on dist/**.
			z.tree, z.treeHere = true, true // a directory moved takes its files' names away too
			for _, o := range copySources(name, args) {
				z.deletes(o, "mv", false)
			}
			z.tree, z.treeHere = false, false
		}
		if name == "ln" && lnSymbolic(args) {
			z.linkTargets(args)
		}
		if name == "cp" && z.cpLinks(args) || name == "ln" && !lnSymbolic(args) {
			// A hard link is the file itself under a new name: a later
			// write to the link writes the original (.git/config), so
			// every file linked is a write.
			for _, w := range operandsOf(args, "St", []string{"--suffix", "--target-directory"}) {
				target(w, name+" (a hard link)")
			}
		}
	case "gpg", "gpg2":
		// gpg -o/--output FILE (a decrypted secret, a signature), and the
		// files and directories its other options name; gpg takes a long
		// option's unique abbreviation (--outp is --output).
		z.optionWrites(name, args, []string{"-o"})
		for _, o := range []string{"--output", "--status-file", "--attribute-file", "--logger-file", "--log-file", "--homedir",
			"--trustdb-name", "--keyring", "--primary-keyring", "--secret-keyring"} {
			for _, v := range longOptionValues(args, o, 5) {
				z.writeWord(v, name+" "+o)
			}
		}
	case "npm", "pnpm", "yarn":
		// An install writes the dependencies and the lock file.
		if sub, _ := runnerSub(args, nil); sub == "install" || sub == "i" || sub == "ci" || sub == "add" || sub == "update" || sub == "upgrade" || sub == "remove" || sub == "uninstall" {
			z.implied = true
			for _, f := range []string{"node_modules", "package-lock.json", "yarn.lock", "pnpm-lock.yaml", "npm-shrinkwrap.json"} {
				z.tree = f == "node_modules" // the packages' files, by their names
				z.write(f, name+" "+sub)
			}
			z.implied, z.tree = false, false
		}
		if sub, _ := runnerSub(args, nil); name == "npm" && sub == "pack" && !hasLong(args, "--dry-run") {
			// npm pack writes NAME-VERSION.tgz, named from package.json,
			// in --pack-destination or here (npm pack wrote ws-1.0.0.tgz).
			dir := word{loose: ".", lit: ".", ok: true}
			for _, v := range longOptionValues(args, "--pack-destination", 6) {
				dir = v
			}
			if !dir.ok {
				z.writeWord(dir, "npm pack --pack-destination")
				break
			}
			z.implied = true
			z.writePieces(path.Join(dir.lit, "package.tgz"), path.Join(dir.lit, "*.tgz"), "*.tgz", "npm pack")
			z.implied = false
		}
	case "chmod", "chown", "chgrp", "setfacl", "chattr", "truncate":
		// The mode, owner or size of each file named: a write of it (chmod
		// on .git/config or a hook makes it run).
		z.attributeWrites(name, args, target)
	case "script":
		// script [FILE]: the typescript is written (typescript by default),
		// and -O/-B/-I/-T/--log-* name logs.
		ops := operandsOf(args, "cEIOBTo", []string{"--command", "--echo", "--log-in", "--log-out", "--log-io",
			"--log-timing", "--logging-format", "--output-limit"})
		for _, o := range ops {
			target(o, "script")
		}
		if len(ops) == 0 {
			z.write("typescript", "script")
		}
		for _, c := range []byte("OBIT") {
			for _, v := range shortOptionValues(args, "cEIOBTo", c) {
				target(v, "script -"+string(c))
			}
		}
		for _, o := range []string{"--log-in", "--log-out", "--log-io", "--log-timing"} {
			for _, v := range longOptionValues(args, o, len(o)) {
				target(v, "script "+o)
			}
		}
	case "time":
		// GNU time -o FILE (--output): its report, over FILE (-a appends);
		// only time's own options, before the command it runs.
		own := args
		if spec, ok := wrapperSpec(name); ok {
			if _, start := spec.parse(ws); start > 0 {
				own = ws[1:start]
			}
		}
		for _, v := range append(shortOptionValues(own, "fo", 'o'), longOptionValues(own, "--output", 5)...) {
			target(v, "time -o")
		}
	case "less":
		// less -o FILE / -O FILE (--log-file, --LOG-FILE) copies what it
		// shows into FILE.
		for _, c := range []byte("oO") {
			for _, v := range shortOptionValues(args, "bhjkoOpPtTxyz", c) {
				target(v, "less -"+string(c))
			}
		}
		for _, o := range []string{"--log-file", "--LOG-FILE"} {
			for _, v := range longOptionValues(args, o, len(o)) {
				target(v, "less "+o)
			}
		}
	case "uniq":
		// uniq [INPUT [OUTPUT]]: the second operand is written.
		if ops := operandsOf(args, "fsw", []string{"--skip-fields", "--skip-chars", "--check-chars"}); len(ops) >= 2 {
			target(ops[1], "uniq")
		}
	case "touch":
		// touch creates every operand that does not exist (touch .env,
		// touch /etc/cron.d/x): each is a write.
		for _, w := range operandsOf(args, "drt", []string{"--date", "--reference", "--time"}) {
			target(w, "touch")
		}
	case "mkdir":
		// A directory made is a write to its path; a local repository
		// (HEAD, objects/, refs/) is made with mkdir and echo.
		z.madeDirs = true
		for _, w := range operandsOf(args, "mZ", []string{"--mode", "--context"}) {
			target(w, "mkdir")
		}
	case "sed", "gsed":
		z.sedCommand(name, args, depth, target)
	case "sort":
		for _, v := range shortOptionValues(args, "ktoST", 'o') {
			z.writeWord(v, "sort -o")
		}
		for _, v := range longOptionValues(args, "--output", 3) {
			z.writeWord(v, "sort --output")
		}
		// -T DIR: sort spills to temporary files in DIR (strace saw
		// sort -S 100K -T .git/hooks make hundreds there).
		for _, v := range append(shortOptionValues(args, "ktoST", 'T'), longOptionValues(args, "--temporary-directory", 3)...) {
			z.writeWord(v, "sort -T")
		}
	case "go":
		z.goWrites(args)
	case "find", "gfind":
		z.optionWrites(name, args, []string{"-fprint", "-fprint0", "-fprintf", "-fls"})
	case "git":
		// git diff/log/show/format-patch --output=FILE, format-patch -o DIR.
		for _, v := range longOptionValues(args, "--output", 5) {
			z.writeWord(v, "git --output")
		}
		for _, v := range longOptionValues(args, "--output-directory", 10) {
			z.writeWord(v, "git --output-directory")
		}
		for i, w := range args {
			if w.loose == "format-patch" {
				z.optionWrites(name, args[i:], []string{"-o"})
			}
		}
	}
	z.dependencyTrees(name, args)
	z.toolOptions(name, args, depth)
}

// dependencyTrees: commands that write a tree of other people's files by
// their own names, under a directory of their own (npm install's
// node_modules is above): go mod vendor and cargo vendor (vendor/, or the
// directory given), composer's vendor/, git lfs pull and checkout and git
// submodule update (the work tree), helm pull --untar (the chart's
// directory). They meet every write_file rule that may name a file there,
// as an extraction does: mode full allowed them under a deny on **/.env.
func (z *analyzer) dependencyTrees(name string, args []word) {
	ops := leadingOperands(args, 3)
	verb := func(i int) string { return operandText(ops, i) }
	dir := word{loose: "vendor", lit: "vendor", ok: true}
	how := ""
	switch {
	case name == "go" && verb(0) == "mod" && verb(1) == "vendor":
		how = "go mod vendor"
		for _, f := range goFlags(args) {
			if f.name == "o" && f.has {
				dir = f.value
			}
		}
	case name == "cargo" && verb(0) == "vendor":
		how = "cargo vendor"
		if len(ops) > 1 {
			dir = ops[1]
		}
	case name == "composer" && slices.Contains([]string{"install", "i", "update", "u", "upgrade", "require", "r", "reinstall"}, verb(0)):
		how = "composer " + verb(0)
	case name == "git":
		sub, rest := gitSubcommand(args)
		r := leadingOperands(rest, 1)
		if len(r) > 0 && (sub == "lfs" && (r[0].loose == "pull" || r[0].loose == "checkout") || sub == "submodule" && r[0].loose == "update") {
			how, dir = "git "+sub+" "+r[0].loose, word{loose: ".", lit: ".", ok: true}
		}
	case name == "helm" && verb(0) == "pull" && (hasLong(args, "--untar") || slices.ContainsFunc(args, func(w word) bool { return strings.HasPrefix(w.loose, "--untar=") })):
		how, dir = "helm pull --untar", word{loose: ".", lit: ".", ok: true}
		for _, d := range longOptionValues(args, "--untardir", len("--untardir")) {
			dir = d
		}
	}
	if how == "" {
		return
	}
	z.implied = true
	z.treeWrite(dir, how)
	z.implied = false
}

// operandsOf returns the operands of a command with GNU option syntax:
// valued lists the short options that take a value (in -d DATE or
// -dDATE) and long the long options that do (--date DATE, --date=DATE;
// abbreviations count, down to four characters past the dashes).
func operandsOf(args []word, valued string, long []string) []word {
	var out []word
	for i := 0; i < len(args); i++ {
		l := args[i].loose
		switch {
		case l == "--":
			return append(out, args[i+1:]...)
		case strings.HasPrefix(l, "--"):
			for _, o := range long {
				if _, has, ok := longOption(l, o, min(len(o), 6)); ok && !has {
					i++
					break
				}
			}
		case strings.HasPrefix(l, "-") && l != "-":
			for k := 1; k < len(l); k++ {
				if strings.IndexByte(valued, l[k]) >= 0 {
					if k == len(l)-1 {
						i++
					}
					break
				}
			}
		default:
			out = append(out, args[i])
		}
	}
	return out
}

// cpLinks refuses cp -l/--link: a hard link is the original file under a
// second name, so `cp -l .git/config out/c` then `echo … >> out/c`
// rewrites .git/config (core.fsmonitor runs on the next git status)
// through a path every write rule would allow; no symlink check sees it.
func (z *analyzer) cpLinks(args []word) bool {
	for _, w := range args {
		l := w.loose
		if l == "--" {
			return false
		}
		if _, _, ok := longOption(l, "--link", 4); ok {
			z.a.refuseGrant("cp --link (a hard link writes through to the original file)")
			return true
		}
		if len(l) > 1 && l[0] == '-' && l[1] != '-' {
			// The cluster up to the first option that takes a value.
			cluster := l[1:]
			if i := strings.IndexAny(cluster, "St"); i >= 0 {
				cluster = cluster[:i]
			}
			if strings.ContainsRune(cluster, 'l') {
				z.a.refuseGrant("cp -l (a hard link writes through to the original file)")
				return true
			}
		}
	}
	return false
}

// lnSymbolic reports ln -s (--symbolic): a link by name, not the file.
// linkTargets judges what ln -s links to as a tree the command may read:
// a later read through the link (ln -s ../secrets out/s; cat out/s/token)
// reaches whatever lies below the target. A relative target is where the
// link's directory leads, not the working directory.
func (z *analyzer) linkTargets(args []word) {
	ops := operandsOf(args, "St", []string{"--suffix", "--target-directory"})
	dirs := append(shortOptionValues(args, "St", 't'), longOptionValues(args, "--target-directory", 5)...)
	linkDir := "."
	switch {
	case len(dirs) > 0:
		linkDir = dirs[len(dirs)-1].lit
		if !dirs[len(dirs)-1].ok {
			return // a link directory the policy cannot see: the write already asks
		}
	case len(ops) >= 2:
		last := ops[len(ops)-1]
		if !last.ok {
			return
		}
		ops = ops[:len(ops)-1]
		linkDir = path.Dir(last.lit)
		if z.isDir(last.lit) {
			linkDir = last.lit
		}
	}
	for _, t := range ops {
		if t.ok && !path.IsAbs(t.lit) { // an absolute target is judged as written (mentionWords)
			z.addRead(readMention{p: path.Join(linkDir, t.lit), cwd: z.cwd, cwds: z.cwds, tree: true})
		}
	}
}

func lnSymbolic(args []word) bool {
	for _, w := range args {
		l := w.loose
		if l == "--" {
			return false
		}
		if _, _, ok := longOption(l, "--symbolic", 4); ok {
			return true
		}
		if len(l) > 1 && l[0] == '-' && l[1] != '-' && strings.ContainsRune(strings.SplitN(l[1:], "S", 2)[0], 's') {
			return true
		}
	}
	return false
}

// attributeWrites records the files chmod, chown, chgrp, setfacl, chattr
// and truncate change.
func (z *analyzer) attributeWrites(name string, args []word, target func(word, string)) {
	var ops []word
	switch name {
	case "truncate":
		ops = operandsOf(args, "sr", []string{"--size", "--reference"})
	case "setfacl":
		ops = operandsOf(args, "mxMX", []string{"--modify", "--remove", "--modify-file", "--remove-file", "--set", "--set-file"})
	default:
		ops = modeOperands(name, args)
	}
	z.tree = name != "truncate" && hasFlag(args, 'R', 'R', "--recursive")
	z.treeHere = true // the files there get the mode, owner or attributes
	for _, w := range ops {
		target(w, name)
	}
	z.tree, z.treeHere = false, false
}

// modeOperands are the files of chmod, chown, chgrp and chattr: every word
// after the mode, owner or attributes that is not one of the program's
// flags. The mode may look like an option (chmod -x a, chattr -i a), so
// it is the first word that is not a flag; --reference=FILE names it.
func modeOperands(name string, args []word) []word {
	_, files := modeArgs(name, args)
	return files
}

// modeArgs splits the arguments of chmod, chown, chgrp and chattr into
// the mode (owner, attributes; "" when --reference names it or there is
// none) and the files (modeOperands).
func modeArgs(name string, args []word) (mode string, files []word) {
	haveMode := false
	for i := 0; i < len(args); i++ {
		l := args[i].loose
		switch {
		case l == "--":
			rest := args[i+1:]
			if !haveMode && len(rest) > 0 {
				mode, rest = rest[0].loose, rest[1:]
			}
			return mode, append(files, rest...)
		case strings.HasPrefix(l, "--"):
			if strings.HasPrefix(l, "--ref") {
				haveMode = true
			}
			if !strings.Contains(l, "=") && (strings.HasPrefix(l, "--ref") || strings.HasPrefix(l, "--from")) {
				i++ // --reference FILE, --from OWNER
			}
		case l == "-R" || l == "-v" || l == "-c" || l == "-f" || l == "-h" || l == "-H" || l == "-L" || l == "-P" ||
			name == "chattr" && (l == "-V" || l == "-p"):
			if name == "chattr" && l == "-p" {
				i++ // chattr -p PROJECT
			}
		case !haveMode:
			haveMode, mode = true, l
		default:
			files = append(files, args[i])
		}
	}
	return mode, files
}

// inHome reports a word whose leading ~ bash expands (~/x, not '~/x'): a
// home directory the policy cannot place, where it would put a "~" in the
// working directory. A write there may be of any file: a tree of "/",
// which every write_file deny and ask rule meets, as an unseen name's
// delete is (unnamedDelete).
func inHome(w word) bool {
	return !w.ok && strings.HasPrefix(w.loose, "~")
}

// writeWord judges a word naming a file the command writes. A name that
// is not literal is never allowed, but when its text is still known
// ($'…', braces) the rules on that path apply.
func (z *analyzer) writeWord(w word, how string) {
	switch {
	case w.ok:
		z.write(w.lit, how)
	case inHome(w):
		z.treeWrite(word{loose: "/", lit: "/", ok: true}, how)
		if w.known() {
			z.write(w.loose, how) // and the rules on its name (~/.env)
		}
	case w.known() && !w.splat && w.loose != "" && !strings.ContainsAny(w.loose, "*?["):
		z.a.refuseAllow("a write (" + how + ") to a path that is not literal")
		z.write(w.loose, how)
	default:
		// $HOME/x, out/*: where it lands is decided when bash runs.
		z.a.cannotRead("a write (" + how + ") to a path the policy cannot see (" + clip(printable(w.loose), 60) + ")")
	}
}

// optionWrites records the values of options that name a file written, in
// the forms -o FILE, -oFILE (short), --output FILE, --output=FILE.
func (z *analyzer) optionWrites(name string, args []word, opts []string) {
	for i := 0; i < len(args); i++ {
		l := args[i].loose
		for _, o := range opts {
			long := strings.HasPrefix(o, "--") || len(o) > 2
			switch {
			case l == o && i+1 < len(args):
				z.writeWord(args[i+1], name+" "+o)
			case long && strings.HasPrefix(l, o+"="):
				z.writeWord(word{loose: l[len(o)+1:], lit: strings.TrimPrefix(args[i].lit, o+"="), ok: args[i].ok}, name+" "+o)
			case !long && strings.HasPrefix(l, o) && len(l) > len(o):
				z.writeWord(word{loose: l[len(o):], lit: strings.TrimPrefix(args[i].lit, o), ok: args[i].ok}, name+" "+o)
			}
		}
	}
}

// copyDestination: the last operand, or -t DIR; a directory receives the
// sources under their own names.
func (z *analyzer) copyDestination(name string, args []word, target func(word, string)) {
	var operands []word
	var dir *word
	opts := true
	parents, noTarget := false, false // --parents keeps the source path; -T writes into DEST itself
	for i := 0; i < len(args); i++ {
		w := args[i]
		l := w.loose
		if opts {
			if _, _, ok := longOption(l, "--parents", 4); ok {
				parents = true
			}
			if _, _, ok := longOption(l, "--relative", 5); ok && name == "rsync" {
				parents = true
			}
			if _, _, ok := longOption(l, "--no-target-directory", 5); ok {
				noTarget = true
			}
			if len(l) > 1 && l[0] == '-' && l[1] != '-' {
				noTarget = noTarget || strings.ContainsRune(strings.SplitN(l, "t", 2)[0], 'T')
				parents = parents || name == "rsync" && strings.ContainsRune(l, 'R')
			}
		}
		switch {
		case opts && l == "--":
			opts = false
		case opts && l == "-t" && i+1 < len(args):
			d := args[i+1]
			dir = &d
			i++
		case opts && strings.HasPrefix(l, "--t"):
			// --target-directory, or any abbreviation of it (--target=DIR).
			if v, has, ok := longOption(l, "--target-directory", 3); ok {
				d := word{loose: v, ok: w.ok, lit: v}
				if !has && i+1 < len(args) {
					i++
					d = args[i]
				}
				dir = &d
			}
		case opts && len(l) > 1 && l[0] == '-' && l[1] != '-':
			// A cluster: -rt DIR, -tDIR, -S SUFFIX, install's -m MODE.
			valued := "St"
			if name == "install" {
				valued = "gmoSt"
			}
			if name == "rsync" || name == "scp" {
				valued = "eBcFiJlOoPST"
			}
			for k := 1; k < len(l); k++ {
				if strings.IndexByte(valued, l[k]) < 0 {
					continue
				}
				var v word
				if k+1 < len(l) {
					v = word{loose: l[k+1:], ok: w.ok, lit: l[k+1:]}
				} else if i+1 < len(args) {
					i++
					v = args[i]
				}
				if l[k] == 't' && name != "scp" && name != "rsync" {
					dir = &v
				}
				break
			}
		case opts && strings.HasPrefix(l, "-") && l != "-":
			if name == "rsync" && l == "--rsh" {
				i++
			}
		default:
			operands = append(operands, w)
		}
	}
	if dir == nil {
		if len(operands) < 2 {
			if name == "ln" && len(operands) == 1 {
				target(word{lit: ".", ok: true, loose: "."}, name)
			}
			return
		}
		d := operands[len(operands)-1]
		operands = operands[:len(operands)-1]
		if !d.ok || !z.isDir(d.lit) || noTarget {
			// -T copies a directory's contents into d: judged as d itself,
			// which no rule for files under it covers.
			if len(operands) == 1 {
				z.treeFrom = z.sourceDir(name, args, operands[0])
			}
			target(d, name)
			z.treeFrom = ""
			return
		}
		dir = &d
	}
	if !dir.ok {
		target(*dir, name)
		return
	}
	for _, src := range operands {
		if !src.ok {
			// Its names in dir are not on the line (cp x* secrets/).
			z.unseenNamesInto(*dir, name, "copies a file whose name is not literal")
			continue
		}
		if (name == "scp" || name == "rsync") && gitNetworkURL(src.lit) {
			z.remoteSource(name, *dir, src)
			continue
		}
		z.treeFrom = z.sourceDir(name, args, src)
		switch {
		case parents:
			z.write(path.Join(dir.lit, src.lit), name)
		case name == "rsync" && strings.HasSuffix(src.lit, "/"):
			z.write(dir.lit, name) // rsync src/ dir: src's entries go into dir itself
		default:
			z.write(path.Join(dir.lit, path.Base(src.lit)), name)
		}
		z.treeFrom = ""
	}
}

// remotePath is the path part of a remote copy operand: host:PATH,
// user@host:PATH, or a URL's path (rsync://host/PATH, scp://host/PATH).
func remotePath(l string) string {
	if _, rest, ok := strings.Cut(l, "://"); ok {
		if _, p, ok := strings.Cut(rest, "/"); ok {
			return p
		}
		return ""
	}
	_, p, _ := strings.Cut(l, ":")
	return p
}

// remoteSource judges a copy from another machine into dir (scp h:.env .,
// rsync h:x/ out/, sftp h:.env): the file lands under the remote path's
// last name, which the line gives, unless the path is a pattern the other
// side expands, ends in a slash (its entries go into dir) or is the home
// directory: then dir is written by names the line does not give. Before,
// scp h:.env . was judged as writing ./h:.env.
func (z *analyzer) remoteSource(name string, dir, src word) {
	p := remotePath(src.lit)
	base := path.Base(p)
	if p == "" || strings.HasSuffix(p, "/") || hasWild(p) || base == "." || base == ".." || base == "~" {
		z.unseenNamesInto(dir, name, "copies files whose names the other machine gives")
		return
	}
	z.write(path.Join(dir.lit, base), name)
}

// unseenNamesInto records a copy into dir of files whose names the line
// does not give: a tree of dir, met by the rules on any file under it,
// and never allowed by rules.
func (z *analyzer) unseenNamesInto(dir word, how, why string) {
	z.a.refuseAllow(how + " " + why)
	z.treeWrite(dir, how)
}

// sourceDir is where the copy source src lies (absolute), or "" when it
// is not literal, not a path on this machine (host:path), or the copy
// follows the links in it (cp -L, rsync -L: what it writes is not what a
// listing of src shows).
func (z *analyzer) sourceDir(name string, args []word, src word) string {
	if !src.ok || z.cwd == "" || gitNetworkURL(src.lit) ||
		hasFlag(args, 'L', 'L', "--dereference") || name == "rsync" && (hasLong(args, "--copy-links") || hasLong(args, "--copy-dirlinks") || hasFlag(args, 'k', 'k', "--copy-unsafe-links")) {
		return ""
	}
	abs, _ := resolveIn(src.lit, z.cwd, z.workspace)
	return abs
}

// copiesTrees reports whether cp, mv, rsync or scp may copy or move a
// directory whole: mv always, the others when recursive, and a source is
// or may be a directory.
func (z *analyzer) copiesTrees(name string, args []word) bool {
	switch name {
	case "mv":
	case "cp":
		if !hasFlag(args, 'r', 'R', "--recursive") && !hasFlag(args, 'a', 'a', "--archive") {
			return false
		}
	case "rsync":
		if !hasFlag(args, 'r', 'a', "--recursive") && !hasLong(args, "--archive") {
			return false
		}
	case "scp":
		if !hasFlag(args, 'r', 'r', "-r") {
			return false
		}
	default:
		return false
	}
	cwd := z.cwd
	if cwd == "" {
		cwd = z.workspace
	}
	for _, w := range copySources(name, args) {
		if !w.ok {
			return true
		}
		abs, _ := resolveIn(w.lit, cwd, z.workspace)
		if mayBeDir(w.lit, abs) {
			return true
		}
	}
	return false
}

// copySources are the operands cp, mv, rsync or scp copies or moves:
// every operand but the last (the destination), or all of them where -t
// or --target-directory names it.
func copySources(name string, args []word) []word {
	valued, long := "St", []string{"--suffix", "--target-directory"}
	if name == "rsync" || name == "scp" {
		valued, long = "eBcFiJlOoPST", []string{"--rsh", "--target-directory"}
	}
	ops := operandsOf(args, valued, long)
	if len(shortOptionValues(args, valued, 't'))+len(longOptionValues(args, "--target-directory", 5)) == 0 && len(ops) > 0 {
		ops = ops[:len(ops)-1]
	}
	return ops
}

func (z *analyzer) isDir(p string) bool {
	cwd := z.cwd
	if cwd == "" {
		cwd = z.workspace
	}
	abs, _ := resolveIn(p, cwd, z.workspace)
	if abs == "" {
		return false
	}
	fi, err := os.Stat(abs)
	return err == nil && fi.IsDir()
}

// writeRule finds the first rule among rules for write_file that matches
// where t lands, as written or through its symlinks (deny and ask rules).
func (e *Engine) writeRule(rules []rule, ws string, t writeTarget) (rule, bool) {
	for _, r := range rules {
		if r.Tool == ToolWriteFile && (writeMatches(r, ws, t.abs) || writeMatches(r, ws, t.real)) {
			return r, true
		}
		if r.Tool != ToolWriteFile || t.pieces == "" || r.glob == "" {
			continue
		}
		for _, p := range []string{t.abs, t.real} {
			if p != "" && r.mayNameIn(path.Dir(p), ws, t.pieces) {
				return r, true
			}
		}
	}
	return rule{}, false
}

// writeTreeVerdict is the verdict of the write_file deny rules (d Deny)
// or ask rules (d Ask) on the files the command's tree writes may write,
// if one applies. A tree whose files are the ones there now (here) is listed
// where the call was resolved here, and a file a rule names found in it is
// written for certain; any other tree is judged by whether a rule may name
// a file under it, which is never an allow and not a certain denial.
func (e *Engine) writeTreeVerdict(ws string, an *analysis, d Decision, resolved bool) (Verdict, bool) {
	if an.writeTreeHits == nil {
		an.writeTreeHits = e.judgeWriteTrees(ws, an, resolved)
	}
	h := an.writeTreeHits.of(d)
	if h == nil {
		return Verdict{}, false
	}
	what := shownPath(h.tree.shown)
	switch {
	case d == Deny && h.found != "":
		return Verdict{Decision: Deny, Rule: h.r.name, Reason: h.r.why(fmt.Sprintf("denied by rule: the command writes or deletes %s (under %s, %s)", shownPath(relTo(h.found, ws)), what, h.tree.how))}, true
	case d == Deny:
		return Verdict{Decision: Ask, Reason: h.r.why(fmt.Sprintf("the command writes the files under %s (%s), which may include what a write_file deny rule names: the policy cannot tell whether it writes one", what, h.tree.how))}, true
	case h.found != "":
		return Verdict{Decision: Ask, Rule: h.r.name, Reason: h.r.why(fmt.Sprintf("the rules ask before write_file of %s (%s writes it, under %s)", shownPath(relTo(h.found, ws)), h.tree.how, what))}, true
	}
	return Verdict{Decision: Ask, Rule: h.r.name, Reason: h.r.why(fmt.Sprintf("the rules ask before write_file of the files under %s, which may include what the rule names (%s writes them)", what, h.tree.how))}, true
}

// copied judges the files a copy or move puts under dest, listed at from
// (writeTarget.from), each at its new name; false when from could not be
// listed in full.
func (j *treeJudge) copied(t treeRead, dest, from string) bool {
	real, ok := landing(from)
	if !ok {
		return false
	}
	fi, err := os.Stat(real)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return true // nothing to copy
	case err != nil:
		return false
	case !fi.IsDir():
		j.file(t, dest, dest) // one file, at dest
		return true
	}
	t.mapped = true
	return j.walk(t, dest, real)
}

// judgeWriteTrees finds the first write_file deny and ask rule the
// command's tree writes meet, as judgeTrees does for its tree reads.
func (e *Engine) judgeWriteTrees(ws string, an *analysis, resolved bool) *treeHits {
	j := &treeJudge{ws: ws, resolved: resolved, budget: maxSearchWalk}
	for _, r := range e.deny {
		if r.Tool == ToolWriteFile && r.glob != "" {
			j.deny = append(j.deny, r)
		}
	}
	for _, r := range e.ask {
		if r.Tool == ToolWriteFile && r.glob != "" {
			j.ask = append(j.ask, r)
		}
	}
	if len(j.deny)+len(j.ask) == 0 {
		return &j.hits
	}
	for _, t := range an.writes {
		if !t.tree || t.abs == "" {
			continue
		}
		tr := treeRead{shown: t.shown, how: t.how, rest: t.rest, glob: t.rest != nil, descend: !t.flat, certain: true, lexical: !t.follows}
		if t.from != "" && resolved && j.copied(tr, t.abs, t.from) {
			continue
		}
		tr.unseen = !t.here
		dirs := []string{t.abs}
		if t.real != "" && t.real != t.abs {
			dirs = append(dirs, t.real) // where a link leads, too
		}
		for _, dir := range dirs {
			j.tree(tr, dir)
		}
		if j.hits.deny != nil {
			break
		}
	}
	return &j.hits
}

// writeAllowed: an allow rule must cover the file both as written and
// where its symlinks lead (out/link -> ../package.json is a write to
// package.json).
func (e *Engine) writeAllowed(ws string, t writeTarget) bool {
	if t.abs == "" {
		return false
	}
	for _, r := range e.allow {
		if r.Tool == ToolWriteFile && writeMatches(r, ws, t.abs) && (t.real == "" || t.real == t.abs || writeMatches(r, ws, t.real)) {
			return true
		}
	}
	return false
}

func writeMatches(r rule, ws, p string) bool {
	if p == "" {
		return false
	}
	abs, rel, inside := resolveFile(p, "", ws)
	return r.matchesPath(abs, rel, inside)
}

// writesNotAllowed says why the files the command writes keep bash allow
// rules from applying: a file no write_file allow rule covers. Empty when
// every write is covered (or there are none).
func (e *Engine) writesNotAllowed(ws string, an *analysis) string {
	for _, t := range an.writes {
		if !t.implied && !e.writeAllowed(ws, t) {
			return fmt.Sprintf("writes %s: no write_file rule allows it", clip(t.shown, 120))
		}
	}
	return ""
}

// landing is where a write to abs lands: realPath, and for a dangling link
// (which realPath refuses) the file it would create.
func landing(abs string) (string, bool) {
	for range maxDepth {
		if r, ok := realPath(abs); ok {
			return r, true
		}
		dest, err := os.Readlink(abs)
		if err != nil {
			return "", false
		}
		if !path.IsAbs(dest) {
			dest = path.Join(path.Dir(abs), dest)
		}
		abs = path.Clean(dest)
	}
	return "", false
}
