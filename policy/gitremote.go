package policy

import (
	"os"
	"slices"
	"strings"
)

// A push to a repository on this machine runs that repository's hooks
// (pre-receive, update, post-receive) with the pusher's rights: a bare
// repository is only a HEAD file and two directories, which echo and mkdir
// make in out/, and cp gives a hook its executable bit (cp /bin/true
// out/r/hooks/pre-receive, then a redirection truncates it and keeps the
// mode). So `git push out/r` runs code nobody was shown, though git push is
// allowed. The ext:: transport runs its argument as a command line.
// Neither is ever allowed by rules; ext::'s command is analysed so deny
// rules see it.

// gitPushRemote judges the repository git push sends to: the first
// positional word and --repo's value.
func (z *analyzer) gitPushRemote(args []word, p gitPushIntent) {
	var remotes []word
	if len(p.refspecs) > 0 {
		remotes = append(remotes, p.refspecs[0])
	}
	remotes = append(remotes, longOptionValues(args, "--repo", 5)...)
	for _, r := range remotes {
		if z.gitRemoteAs(r, "git push") && r.known() {
			// A push writes that repository: its objects, refs and
			// logs (git push .git/hooks writes in the hooks), by names
			// git picks.
			if p, ok := cutFileURL(r.loose); ok {
				r = word{loose: p, lit: p, ok: r.ok}
			}
			z.treeWrite(r, "git push")
		}
	}
}

// gitRemoteAs judges the repository what (git push, git archive --remote,
// git clone's source) reaches: ext:: runs a command line, NAME::URL runs
// git-remote-NAME, and a repository on this machine its own hooks or
// configuration. local says r is, or may be, a path on this machine.
func (z *analyzer) gitRemoteAs(r word, what string) (local bool) {
	l := r.loose
	if !r.known() {
		z.a.refuseGrant(what + " to a repository not known until run time (a local one runs its own hooks)")
		return true
	}
	if cmd, ok := strings.CutPrefix(l, "ext::"); ok {
		z.a.refuseGrant(what + " to an ext:: remote (it runs a command)")
		z.script(gitExtCommand(cmd), 1, false)
		return false
	}
	if strings.Contains(l, "::") {
		// git-remote-<scheme>, a program found on PATH, which the
		// approver is not shown.
		z.a.cannotRead(what + " through a remote helper (" + clip(l, 60) + "): git runs git-remote-" + clip(l[:strings.Index(l, "::")], 20))
		return false
	}
	if !strings.HasPrefix(strings.ToLower(l), "file:") && gitNetworkURL(l) {
		return false
	}
	if localRepoWord(l) {
		z.a.refuseGrant(what + " to a repository on this machine (" + clip(l, 60) + "): it runs that repository's hooks")
		return true
	}
	// A bare name is a configured remote, or else a path: git tries the
	// name as a directory when no remote has it.
	if z.cwd == "" {
		z.a.refuseGrant(what + " to " + clip(l, 60) + " after cd (it may name a local repository, whose hooks run)")
		return true
	}
	if p, _ := z.resolve(l); p != "" {
		if _, err := os.Lstat(p); err == nil {
			z.a.refuseGrant(what + " to " + clip(l, 60) + ", a path on this machine: it runs that repository's hooks")
			return true
		}
	}
	if len(z.a.writes) > 0 || z.madeDirs {
		// Made earlier in this very command line: mkdir -p r/refs …; git push r.
		z.a.refuseGrant(what + " to " + clip(l, 60) + " after the command writes files (it may have made a local repository, whose hooks run)")
		if p, _ := z.resolve(l); p != "" {
			return slices.ContainsFunc(z.a.writes, func(w writeTarget) bool { return within(w.abs, p) })
		}
	}
	return false
}

// gitNetworkURL: a remote on another machine (its hooks are not ours):
// a URL with a network scheme, or ssh's host:path form.
func gitNetworkURL(l string) bool {
	for _, s := range []string{"https://", "http://", "ssh://", "git://", "git+ssh://", "ssh+git://"} {
		if len(l) > len(s) && strings.EqualFold(l[:len(s)], s) {
			return true
		}
	}
	// user@host:path or host:path; git reads it so when a colon comes
	// before any slash.
	colon, slash := strings.IndexByte(l, ':'), strings.IndexByte(l, '/')
	return colon > 0 && (slash < 0 || colon < slash)
}

// cutFileURL is the path of a file:// URL (file:///tmp/r is /tmp/r).
func cutFileURL(l string) (string, bool) {
	if len(l) > len("file://") && strings.EqualFold(l[:len("file://")], "file://") {
		return l[len("file://"):], true
	}
	return l, false
}

// localRepoWord: a word git reads as a path on this machine.
func localRepoWord(l string) bool {
	return strings.Contains(l, "/") || strings.HasPrefix(l, ".") || strings.HasPrefix(l, "~") ||
		strings.HasPrefix(strings.ToLower(l), "file:") || l == ""
}

// gitExtCommand is the command line of an ext:: remote (what follows
// "ext::"), in git's syntax: "% " is a space, "%%" a percent sign.
func gitExtCommand(s string) string {
	return strings.NewReplacer("% ", " ", "%%", "%").Replace(s)
}
