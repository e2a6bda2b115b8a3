package policy

import (
	"os"
	"path"
	"strings"
)

// Which repository git reads. git runs programs its repository's
// configuration names (core.fsmonitor on every status, core.pager,
// diff.external, filter and textconv drivers, credential helpers, hooks,
// aliases with !), so the repository is code the command loads. The
// workspace's own .git is the one askops guards: a write into any .git is
// a danger and the OS bound keeps .git read-only. Any other repository is
// configuration the policy has not read:
//
//   - one git is pointed at: -C DIR, --git-dir, --work-tree, --bare (the
//     working directory is the repository), --exec-path (git-NAME
//     programs from DIR), --super-prefix, --attr-source, --list-cmds and
//     any global option not in gitInertGlobals;
//   - one git finds walking up from where it runs, when that is not the
//     workspace's root: a directory with a .git, or one that is itself a
//     repository (a HEAD beside objects/ and refs/, and a config: git
//     takes a bare repository as it finds it), between it and the
//     workspace, on the
//     disk now or written by the command before git runs (mkdir, printf
//     > out/b/config);
//   - outside the workspace, any.
//
// Each keeps allow rules from covering the command (as make -C and
// cargo --manifest-path do); the environment variables that do the same
// (GIT_DIR, GIT_CONFIG_GLOBAL, GIT_EXEC_PATH …) are configVariable.
func (z *analyzer) gitRepository(args []word) {
	if z.workspace == "" {
		return // Programs: no workspace, nothing to judge against
	}
	dirs := z.cwds
	if z.cwd != "" {
		dirs = []string{z.cwd}
	}
	if dirs == nil {
		z.a.refuseAllow("git after a cd the policy cannot follow (git reads the configuration of the repository it finds there)")
		return
	}
	for i := 0; i < len(args); i++ {
		l := args[i].loose
		if !strings.HasPrefix(l, "-") || l == "--" {
			break // the subcommand
		}
		name, _, glued := strings.Cut(l, "=")
		switch {
		case gitInertGlobals[name]:
		case name == "-c" && !glued && i+1 < len(args):
			// -c KEY=VALUE is judged where it is read (danger_git.go,
			// gitConfigParameters); a value naming a file the command
			// wrote (include.path, core.hooksPath) is code unread.
			i++
			if _, v, ok := strings.Cut(args[i].loose, "="); ok {
				z.writtenConfig(word{loose: v}, "git -c "+clip(printable(args[i].loose), 60))
			}
			if k := strings.Index(args[i].loose, "ext::"); k >= 0 {
				// remote.NAME.url=ext::CMD, url.ext::CMD.insteadOf=…: a
				// remote that is a command line.
				z.gitRemoteAs(word{loose: args[i].loose[k:]}, "git -c "+clip(printable(args[i].loose[:k]), 40))
			}
		case name == "-c" || name == "--config-env" || name == "--namespace":
			// --config-env is judged in danger_git.go; --namespace names
			// refs, not files.
			if !glued {
				i++
			}
		case name == "-C" && !glued:
			// The analysis is already in DIR (gitChdir); one it cannot
			// read left the directory unknown (dirs nil, above), and
			// gitFinds looks for writes in it.
			if i+1 >= len(args) {
				return
			}
			i++
		default:
			z.a.refuseAllow("git " + clip(printable(l), 60) + " (it points git at another repository, configuration or program directory, which the policy has not read)")
			if v, ok := gitGlobalValue(args, &i, glued); ok {
				z.writtenConfig(v, "git "+name)
			}
			return
		}
	}
	for _, d := range dirs {
		why, written := z.gitFinds(d)
		switch {
		case written:
			// As a script the command writes and then runs
			// (writtenScript): the policy judged the write, not the
			// configuration git makes of it.
			z.a.cannotRead("git in " + clip(printable(d), 80) + ": " + why)
			return
		case why != "":
			z.a.refuseAllow("git in " + clip(printable(d), 80) + ": " + why)
			return
		}
	}
}

// gitInertGlobals are git's global options that change neither which
// repository, configuration nor programs git uses.
var gitInertGlobals = map[string]bool{
	"--no-pager": true, "-P": true, "-p": true, "--paginate": true, "--no-replace-objects": true,
	"--literal-pathspecs": true, "--glob-pathspecs": true, "--noglob-pathspecs": true, "--icase-pathspecs": true,
	"--no-optional-locks": true, "--no-lazy-fetch": true, "--no-advice": true, "--version": true, "-v": true,
	"--help": true, "-h": true, "--html-path": true, "--man-path": true, "--info-path": true,
}

// gitFinds says why the repository git finds starting in the absolute
// directory d is not the workspace's own .git ("" when it is), and
// whether that is because the command itself writes where git looks.
func (z *analyzer) gitFinds(d string) (why string, written bool) {
	if d == "" || !within(d, z.workspace) {
		return "a repository outside the workspace, whose configuration the policy has not read", false
	}
	ws := path.Clean(z.workspace)
	for p := d; p != ws && within(p, ws); p = path.Dir(p) {
		// Before git runs: what git itself writes (--output) it writes
		// after reading its configuration.
		for _, w := range z.a.writes[:min(z.gitBefore, len(z.a.writes))] {
			if w.abs == "" || within(w.abs, p) {
				return "the command writes in " + clip(printable(p), 80) + " before git looks for its repository there (a config it writes there is code git runs)", true
			}
		}
		for _, n := range []string{".git", "HEAD"} {
			if _, err := os.Lstat(path.Join(p, n)); err == nil {
				return "git may take " + clip(printable(p), 80) + " (it holds " + n + ") for a repository whose configuration the policy has not read", false
			}
		}
	}
	return "", false
}

// gitGlobalValue is the value of the global option at args[*i] that names
// a path (--git-dir, --work-tree, --exec-path), glued (=) or the next word,
// moving *i past it.
func gitGlobalValue(args []word, i *int, glued bool) (word, bool) {
	name, v, _ := strings.Cut(args[*i].loose, "=")
	switch name {
	case "--git-dir", "--work-tree", "--exec-path":
	default:
		return word{}, false
	}
	if glued {
		return word{loose: v}, true
	}
	if *i+1 < len(args) {
		*i++
		return args[*i], true
	}
	return word{}, false
}

// gitFetchRemotes judges the repositories fetch, pull, ls-remote and
// submodule add reach, as push's and clone's are (gitremote.go): with
// protocol.ext.allow set, git -c protocol.ext.allow=always fetch
// 'ext::rm -f zz' ran rm. Every word that names a transport (ext::,
// NAME::) is judged, wherever it stands among the options' values.
func (z *analyzer) gitFetchRemotes(args []word) {
	sub, rest := gitSubcommand(args)
	switch sub {
	case "fetch", "pull", "ls-remote", "submodule", "fetch-pack", "remote-ext":
	default:
		return
	}
	for _, w := range rest {
		if w.loose == "--" {
			continue
		}
		if strings.HasPrefix(w.loose, "ext::") || !strings.HasPrefix(w.loose, "-") && strings.Contains(w.loose, "::") {
			z.gitRemoteAs(w, "git "+sub)
		}
	}
}

// gitChdir moves the analysis into the directories git -C names, as a cd
// would, for this git command alone: git resolves every relative path it
// is given there (its options' files, its operands, --work-tree) and
// looks for its repository there, so git -C .git/hooks log
// --output=pre-commit writes .git/hooks/pre-commit. A directory the
// policy cannot read leaves where git runs unknown. It returns what
// moves the analysis back: the shell itself stays where it was.
func (z *analyzer) gitChdir(args []word) (back func()) {
	dirs, before := z.keepDirs(), z.gitBefore
	back = func() { dirs(); z.gitBefore = before }
	z.gitBefore = len(z.a.writes)
	for i := 0; i < len(args); i++ {
		l := args[i].loose
		if !strings.HasPrefix(l, "-") || l == "--" {
			break // the subcommand
		}
		switch {
		case l == "-C" && i+1 < len(args):
			i++
			if d := args[i]; !d.ok || d.lit != "" { // git -C "" stays where it is
				cd := []word{{loose: "cd", lit: "cd", ok: true}, d}
				z.noteDir("cd", cd)
				z.changeDir("cd", cd[1:])
			}
		case l == "-c" || takesValue("git", l):
			i++
		}
	}
	return back
}
