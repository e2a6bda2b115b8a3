package policy

import (
	"net/url"
	"path"
	"slices"
	"strings"
)

// Effects is what a command does, in the classes an approver reads before
// the command itself: the files it writes and deletes, the hosts it
// reaches, what runs with more privilege, and what the reading could not
// see. It is read by the same analysis Evaluate judges with (and Programs
// lists from), run once more when an Ask is made: the verdict does not
// carry its reading yet (the intake issue's step). Like Programs it names
// only what the reading found, so an empty class means "none found", and Unread says
// when the reading was incomplete.
type Effects struct {
	Writes, Deletes []Target
	// Hosts are the network hosts the command names (a URL's host,
	// ssh's and scp's host); Unnamed the network commands whose host the
	// reading cannot name ("git push to origin", "curl").
	Hosts, Unnamed []string
	// Privilege is what runs with more privilege or grants it: "sudo",
	// "setuid or setgid bit (chmod u+s)", "makes files executable (chmod
	// +x)", "file capabilities (setcap)".
	Privilege []string
	// Unread is what the command can run that the reading could not see
	// (Verdict.Unread).
	Unread []string
}

// Target is one file a command writes or deletes, as written, with where
// it lands called out.
type Target struct {
	Path string
	// InGit: inside the workspace's .git (hooks and config run code);
	// Outside: outside the workspace; ThroughLink: a symlink on the way
	// leads it elsewhere.
	InGit, Outside, ThroughLink bool
}

// CommandEffects is command's Effects when it runs in cwd within
// workspace (both absolute; either may be "", and then where a relative
// path lands is not called out).
func CommandEffects(command, cwd, workspace string) Effects {
	a := analyzeCommand(command, cwd, workspace, nil)
	unsafeCommand(command, a, cwd, workspace, nil)
	return effectsOf(a, workspace)
}

// Reading is what the policy read of a command, as it judged it: the
// programs it runs (as Programs lists them) and its effects (as
// CommandEffects gives them). A verdict on a command carries it
// (Verdict.Reading), so an approver is shown the reading that was judged,
// not a second parse.
type Reading struct {
	Programs []string
	Effects  Effects
}

// readingOf is the Reading of an analysed command.
func readingOf(a *analysis, workspace string) *Reading {
	return &Reading{Programs: programsOf(a), Effects: effectsOf(a, workspace)}
}

// effectsOf is CommandEffects of an analysed command.
func effectsOf(a *analysis, workspace string) Effects {
	var e Effects
	seen := map[string]bool{}
	for _, w := range a.writes {
		key := w.how + "\x00" + w.shown
		if seen[key] || noFile(w.shown) {
			continue
		}
		seen[key] = true
		if remoteOperand(w) {
			continue // on another machine: a host, below
		}
		t := Target{Path: printable(w.shown)}
		if w.abs != "" && path.IsAbs(workspace) {
			// Where it lands: a link may lead out of the workspace.
			t.Outside = !within(w.abs, path.Clean(workspace)) || w.real != "" && !within(w.real, path.Clean(workspace))
			t.InGit = !t.Outside && isGitInternal(w.abs, workspace)
		}
		t.ThroughLink = w.real != "" && w.abs != "" && w.real != w.abs
		if strings.HasSuffix(w.how, " deletes") {
			if !slices.Contains(e.Deletes, t) {
				e.Deletes = append(e.Deletes, t)
			}
		} else if !slices.Contains(e.Writes, t) {
			e.Writes = append(e.Writes, t)
		}
	}
	add := func(list *[]string, s string) {
		if s != "" && !slices.Contains(*list, s) {
			*list = append(*list, s)
		}
	}
	for _, c := range a.cmds {
		if len(c.words) == 0 || c.transport {
			continue // a transport's host is its carrier's
		}
		name := cmdName(c.words[0])
		args := c.words[1:]
		named := false
		for _, w := range args {
			if h := urlHost(w); h != "" {
				add(&e.Hosts, h)
				named = true
			}
		}
		switch name {
		case "sudo", "doas", "su", "pkexec", "runuser", "run0", "sudoedit":
			add(&e.Privilege, name)
		case "setcap":
			add(&e.Privilege, "file capabilities (setcap)")
		case "chmod":
			mode, _ := modeArgs(name, args)
			add(&e.Privilege, chmodPrivilege(mode))
		case "ssh", "scp", "sftp", "rsync", "mosh", "sshfs":
			for _, h := range remoteHosts(name, args) {
				add(&e.Hosts, h)
				named = true
			}
			if !named && name != "rsync" {
				add(&e.Unnamed, name)
			}
		case "git":
			sub, rest := runnerSub(args, nil)
			switch sub {
			case "archive":
				for _, v := range longOptionValues(rest, "--remote", 5) {
					if l := v.loose; v.known() && gitNetworkURL(l) && !strings.Contains(l, "://") {
						add(&e.Hosts, hostOf(l[:strings.IndexByte(l, ':')]))
					}
				}
			case "push", "pull", "fetch", "clone", "ls-remote":
				for _, w := range rest {
					if l := w.loose; w.known() && !strings.HasPrefix(l, "-") && gitNetworkURL(l) && !strings.Contains(l, "://") {
						add(&e.Hosts, hostOf(l[:strings.IndexByte(l, ':')]))
						named = true
					}
				}
				if !named {
					remote := "its remote"
					for _, w := range rest {
						if w.known() && !strings.HasPrefix(w.loose, "-") {
							remote = clip(printable(w.loose), 40)
							break
						}
					}
					add(&e.Unnamed, "git "+sub+" to "+remote)
				}
			}
		default:
			if isDownloader(name) && !named {
				add(&e.Unnamed, name)
			}
		}
	}
	e.Unread = slices.Clone(a.unread)
	return e
}

// chmodPrivilege says what of a chmod mode grants privilege: a setuid or
// setgid bit, or execution.
func chmodPrivilege(mode string) string {
	if mode == "" || strings.Contains(mode, anyText) {
		return ""
	}
	if isDigits(mode) {
		if len(mode) == 4 && (mode[0]-'0')&6 != 0 {
			return "setuid or setgid bit (chmod " + mode + ")"
		}
		for _, d := range mode[max(0, len(mode)-3):] {
			if (d-'0')&1 != 0 {
				return "makes files executable (chmod " + mode + ")"
			}
		}
		return ""
	}
	for _, clause := range strings.Split(mode, ",") {
		i := strings.IndexAny(clause, "+=")
		if i < 0 {
			continue
		}
		if strings.ContainsRune(clause[i:], 's') {
			return "setuid or setgid bit (chmod " + clip(mode, 20) + ")"
		}
	}
	for _, clause := range strings.Split(mode, ",") {
		if i := strings.IndexAny(clause, "+="); i >= 0 && strings.ContainsRune(clause[i:], 'x') {
			return "makes files executable (chmod " + clip(mode, 20) + ")"
		}
	}
	return ""
}

// urlHost is the host of a word that is a URL with a network scheme, ""
// otherwise.
func urlHost(w word) string {
	l := w.loose
	i := strings.Index(l, "://")
	if i <= 0 || strings.Contains(l[:i], anyText) {
		return ""
	}
	switch strings.ToLower(strings.TrimLeft(l[:i], "@")) {
	case "file":
		return ""
	}
	start := strings.IndexFunc(l, isSchemeStart)
	if start < 0 || start >= i {
		return ""
	}
	u, err := url.Parse(strings.ReplaceAll(l[start:], anyText, "…"))
	if err != nil || u.Host == "" {
		// A host the shell decides at run time, or no URL after all.
		rest := l[i+3:]
		if j := strings.IndexAny(rest, "/?#"); j >= 0 {
			rest = rest[:j]
		}
		return hostOf(printable(rest))
	}
	return hostOf(u.Host)
}

func isSchemeStart(r rune) bool { return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' }

// hostOf is host without a user and a port, cut to a name's length.
func hostOf(host string) string {
	if i := strings.LastIndexByte(host, '@'); i >= 0 {
		host = host[i+1:]
	}
	if strings.HasPrefix(host, "[") {
		if j := strings.IndexByte(host, ']'); j > 0 {
			return clip(host[1:j], 80)
		}
	}
	if i := strings.LastIndexByte(host, ':'); i >= 0 && strings.Count(host, ":") == 1 {
		host = host[:i]
	}
	return clip(host, 80)
}

// remoteOperand: a write scp or rsync makes on another machine
// (host:path, read as git reads it), which the policy judges as a local
// path to be safe.
func remoteOperand(w writeTarget) bool {
	return (strings.HasPrefix(w.how, "scp") || strings.HasPrefix(w.how, "rsync")) && gitNetworkURL(w.shown)
}

// remoteHosts are the hosts ssh-like commands name: ssh's first operand
// (and -J's jump hosts), scp's, rsync's and sshfs' host:path operands.
func remoteHosts(name string, args []word) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		w := args[i]
		l := w.loose
		if strings.HasPrefix(l, "-") {
			if name == "ssh" || name == "mosh" || name == "sftp" || name == "scp" {
				if len(l) == 2 && strings.ContainsRune("bcDEeFIiJLlmOoPpQRSWw", rune(l[1])) && i+1 < len(args) {
					if l == "-J" {
						for _, h := range strings.Split(args[i+1].loose, ",") {
							out = append(out, hostOf(printable(h)))
						}
					}
					i++
				}
			}
			continue
		}
		if !w.known() {
			if name == "ssh" || name == "mosh" {
				out = append(out, "a host not known until run time")
				return out
			}
			continue
		}
		if name == "ssh" || name == "mosh" {
			return append(out, hostOf(l))
		}
		if colon, slash := strings.IndexByte(l, ':'), strings.IndexByte(l, '/'); colon > 0 && (slash < 0 || colon < slash) && !strings.Contains(l, "://") {
			out = append(out, hostOf(l[:colon]))
		}
	}
	return out
}
