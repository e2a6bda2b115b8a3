package policy

import (
	"strings"
)

// gitPushLongOptions are git push's long options (git 2.4x). parse-options
// accepts any unique prefix of one (--del is --delete, --mirr is --mirror),
// so options are matched by prefix against this list, not by equality.
// Each is marked: ! force, D delete, M mirror, P prune, A all branches,
// = takes a value in the next word when not written --opt=value.
const gitPushLongOptions = `all:A branches:A mirror:M delete:D tags follow-tags signed no-signed atomic no-atomic
dry-run porcelain prune:P force:! force-with-lease:! no-force-with-lease force-if-includes:!
no-force-if-includes repo:= receive-pack:= exec:= push-option:= set-upstream thin no-thin quiet
verbose progress no-progress recurse-submodules:= no-recurse-submodules verify no-verify ipv4
ipv6 no-verbose no-quiet no-tags no-follow-tags no-porcelain no-dry-run no-set-upstream`

// gitPushOption resolves a long option name (without "--" or "=value") the
// way git does, and returns the union of the marks of every option it may
// be: an ambiguous abbreviation is an error in this git, but may be unique
// in another version, so it counts as all of them.
func gitPushOption(name string) (marks string, known bool) {
	for _, f := range strings.Fields(gitPushLongOptions) {
		opt, m, _ := strings.Cut(f, ":")
		if opt == name {
			return m, true
		}
		if strings.HasPrefix(opt, name) {
			marks += m
			known = true
		}
	}
	return marks, known
}

// gitPushIntent is what one git push will do, as far as its words say.
type gitPushIntent struct {
	force, del, mirror, prune, all bool
	unknown                        string // a word that is not known until run time
	refspecs                       []word
}

// gitPush flags pushes that overwrite or delete a protected branch (or may,
// when the target is not literal): force flags however abbreviated, +refspecs,
// :deletions, --mirror, --prune, configuration that changes what push does
// (-c remote.*.mirror, push.*, alias.*, --config-env), aliases given with
// -c, and subcommands git's autocorrect may turn into push.
func (z *analyzer) gitPush(args []word) {
	var config []string // keys given with -c
	configEnv := false
	i := 0
	for ; i < len(args); i++ {
		w := args[i]
		l := w.loose
		if !w.known() && strings.HasPrefix(l, anyText) {
			// $OPTS before the subcommand could hold "push --force".
			z.a.danger("git with words not known until run time before its subcommand")
			return
		}
		if !strings.HasPrefix(l, "-") {
			break
		}
		switch {
		case l == "-c" && i+1 < len(args):
			i++
			k, _, _ := strings.Cut(args[i].loose, "=")
			config = append(config, strings.ToLower(k))
			configEnv = configEnv || !args[i].known() // -c "$X" could be anything
		case strings.HasPrefix(l, "-c") && len(l) > 2:
			k, _, _ := strings.Cut(l[2:], "=")
			config = append(config, strings.ToLower(k))
		case l == "--config-env":
			configEnv = true
			i++
		case strings.HasPrefix(l, "--config-env="):
			configEnv = true
		case l == "-C" || l == "--git-dir" || l == "--work-tree" || l == "--namespace" || l == "--super-prefix" ||
			l == "--attr-source" || l == "--list-cmds":
			i++
		}
	}
	if i >= len(args) {
		return
	}
	sub := args[i].loose
	rest := args[i+1:]
	// An alias given on the command line: git -c alias.p='push -f' p.
	for j := 0; j < len(args) && j < i; j++ {
		if v, ok := strings.CutPrefix(args[j].loose, "alias."+sub+"="); ok && !strings.HasPrefix(v, "!") {
			fields := strings.Fields(v)
			if len(fields) > 0 {
				sub = fields[0]
				expanded := make([]word, 0, len(fields)-1+len(rest))
				for _, f := range fields[1:] {
					expanded = append(expanded, word{lit: f, ok: true, loose: f})
				}
				rest = append(expanded, rest...)
			}
		}
	}
	if !gitMayPush(sub) {
		return
	}
	for _, k := range config {
		if strings.HasPrefix(k, "push.") || strings.HasPrefix(k, "remote.") || strings.HasPrefix(k, "alias.") ||
			strings.HasPrefix(k, "branch.") || strings.HasPrefix(k, "url.") || strings.HasPrefix(k, "include") {
			z.a.danger("git push with " + k + " set on the command line (it can change what is pushed where, or force it)")
			return
		}
	}
	if configEnv {
		z.a.danger("git push with --config-env or -c \"$…\" (configuration not known until run time)")
		return
	}
	p := parseGitPush(rest)
	z.gitPushRemote(rest, p)
	switch {
	case p.unknown != "":
		z.a.danger("git push with " + printable(p.unknown) + ", not known until run time (it could force or delete a protected branch)")
		return
	case p.mirror:
		z.a.danger("git push --mirror (overwrites and deletes every remote branch)")
		return
	case p.prune:
		z.a.danger("git push --prune (deletes remote branches, which may be protected)")
		return
	}
	var refspecs []word
	if len(p.refspecs) > 1 {
		refspecs = p.refspecs[1:] // the first positional word is the remote
	}
	if (p.force || p.del) && (p.all || len(refspecs) == 0) {
		z.a.danger("git push --force of the current or every branch (may be protected: " + strings.Join(z.protected, ", ") + ")")
		return
	}
	for _, r := range refspecs {
		z.gitRefspec(r.loose, p.force, p.del)
	}
}

// gitMayPush reports a subcommand that pushes: push, its plumbing
// send-pack, or a misspelling git's help.autocorrect may run as push.
func gitMayPush(sub string) bool {
	switch sub {
	case "push", "send-pack":
		return true
	case "pull":
		return false
	}
	return len(sub) >= 3 && len(sub) <= 6 && editDistance(sub, "push") <= 2
}

// parseGitPush reads git push's arguments: options (anywhere before "--",
// abbreviated or clustered) and the positional words.
func parseGitPush(args []word) gitPushIntent {
	var p gitPushIntent
	mark := func(marks string) {
		p.force = p.force || strings.Contains(marks, "!")
		p.del = p.del || strings.Contains(marks, "D")
		p.mirror = p.mirror || strings.Contains(marks, "M")
		p.prune = p.prune || strings.Contains(marks, "P")
		p.all = p.all || strings.Contains(marks, "A")
	}
	for j := 0; j < len(args); j++ {
		w := args[j]
		l := w.loose
		switch {
		case !w.known() && (w.splat || strings.HasPrefix(l, anyText)):
			// Could be --force, +main or several words.
			if p.unknown == "" {
				p.unknown = l
			}
		case l == "--":
			p.refspecs = append(p.refspecs, args[j+1:]...)
			for _, r := range args[j+1:] {
				if !r.known() && p.unknown == "" {
					p.unknown = r.loose
				}
			}
			return p
		case strings.HasPrefix(l, "--") && len(l) > 2:
			name, _, hasValue := strings.Cut(l[2:], "=")
			marks, _ := gitPushOption(name)
			mark(marks)
			if strings.Contains(marks, "=") && !hasValue {
				j++
			}
		case strings.HasPrefix(l, "-") && len(l) > 1:
			for k := 1; k < len(l); k++ {
				switch l[k] {
				case 'f':
					p.force = true
				case 'd':
					p.del = true
				case 'o':
					if k+1 == len(l) {
						j++ // -o VALUE
					}
					k = len(l) // -oVALUE
				}
			}
		default:
			if !w.known() && p.unknown == "" && len(p.refspecs) > 0 {
				p.unknown = l // a refspec with unknown parts: +$B, :$B
			}
			p.refspecs = append(p.refspecs, w)
		}
	}
	return p
}

// gitRefspec flags one refspec that force-updates or deletes a protected
// branch: +src:dst, +branch, :dst, a pattern that covers one, or HEAD.
func (z *analyzer) gitRefspec(l string, force, del bool) {
	plus := strings.HasPrefix(l, "+")
	l = strings.TrimPrefix(l, "+")
	src, dst, hasColon := strings.Cut(l, ":")
	if !hasColon {
		dst = src
	}
	deleting := del || (hasColon && src == "")
	if !(force || plus || deleting) {
		return
	}
	if !hasColon && !deleting && (src == "" || strings.ContainsAny(src, "~^@") || src == "HEAD") {
		z.a.danger("git push --force of " + printable(src) + " (the current branch, which may be protected)")
		return
	}
	dst = strings.TrimPrefix(dst, "refs/")
	dst = strings.TrimPrefix(dst, "heads/")
	if dst == "HEAD" || dst == "@" || dst == "" {
		z.a.danger("git push --force of HEAD (may be a protected branch)")
		return
	}
	pattern := strings.ReplaceAll(dst, "*", anyText)
	verb := "force push to"
	if deleting {
		verb = "deletion of"
	}
	for _, b := range z.protected {
		// refs/remotes/x/main, tags/main: git matches the short name too.
		// A protected entry may itself be a pattern (release/*).
		if globMatchText(pattern, b) || strings.HasSuffix(dst, "/"+b) ||
			(strings.Contains(b, "*") && globMatchText(strings.ReplaceAll(b, "*", anyText), dst)) {
			z.a.danger("git " + verb + " the protected branch " + b)
		}
	}
}

// editDistance is the Levenshtein distance of two short ASCII strings.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// ghBranches flags the GitHub CLI's ways of overwriting or deleting a
// branch on the server: gh repo sync --force, and gh api writing to
// git/refs or branches (a method other than GET, or fields, which make
// gh api POST).
func (z *analyzer) ghBranches(args []word) {
	z.ghDeletesRepo(args)
	if len(args) >= 2 && args[0].loose == "repo" && args[1].loose == "sync" {
		for _, a := range args[2:] {
			if a.loose == "--force" || a.loose == "-f" {
				z.a.danger("gh repo sync --force (overwrites the destination branch, which may be protected)")
				return
			}
		}
		return
	}
	if len(args) == 0 || args[0].loose != "api" {
		return
	}
	writes, refs := false, false
	for i := 1; i < len(args); i++ {
		l := args[i].loose
		switch {
		case l == "-X" || l == "--method":
			if i+1 < len(args) && !strings.EqualFold(args[i+1].loose, "GET") {
				writes = true
			}
		case strings.HasPrefix(l, "-X") && len(l) > 2, strings.HasPrefix(l, "--method="):
			v := strings.TrimPrefix(strings.TrimPrefix(l, "--method="), "-X")
			writes = writes || !strings.EqualFold(v, "GET")
		case l == "-f" || l == "-F" || l == "--field" || l == "--raw-field" || l == "--input":
			writes = true
		case strings.Contains(l, "git/refs") || strings.Contains(l, "/branches/") || !args[i].known():
			refs = true
		}
	}
	if writes && refs {
		z.a.danger("gh api writing to branch refs (may overwrite or delete a protected branch)")
	}
}

// ghDeletesRepo flags deleting a whole repository: gh repo delete, and gh
// api with the DELETE method on repos/OWNER/REPO.
func (z *analyzer) ghDeletesRepo(args []word) {
	ops := operands(args)
	if len(ops) >= 2 && ops[0].loose == "repo" && (ops[1].loose == "delete" || !ops[1].known()) {
		z.a.danger("gh repo delete (deletes the repository, its issues and history)")
		return
	}
	if len(args) == 0 || args[0].loose != "api" {
		return
	}
	del, repo := false, false
	for i := 1; i < len(args); i++ {
		l := args[i].loose
		switch {
		case (l == "-X" || l == "--method") && i+1 < len(args):
			i++
			del = del || !strings.EqualFold(args[i].loose, "GET") && !strings.EqualFold(args[i].loose, "POST") &&
				!strings.EqualFold(args[i].loose, "PATCH") && !strings.EqualFold(args[i].loose, "PUT")
		case strings.HasPrefix(l, "-X") || strings.HasPrefix(l, "--method="):
			v := strings.TrimPrefix(strings.TrimPrefix(l, "--method="), "-X")
			del = del || strings.EqualFold(v, "DELETE") || !args[i].known()
		case !args[i].known():
			repo = true
		default:
			parts := strings.Split(strings.Trim(l, "/"), "/")
			repo = repo || len(parts) == 3 && parts[0] == "repos"
		}
	}
	if del && repo {
		z.a.danger("gh api DELETE of a repository")
	}
}
