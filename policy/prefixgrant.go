package policy

import "strings"

// A prefix grant ("gpg --verify", "git push") lets later calls add words
// the approver never saw. It covers a call only when every word is in the
// program's model (grantmodel.go, grantprograms.go, grantgit.go): each
// option one the model knows, each file inside the workspace and outside
// .git, each git remote one the repository's config names. Programs with
// no model are not grantable by prefix. One table judges both sides: the
// prefix when it is granted (PrefixGrantRefusal, with no file system) and
// each call when it comes (PrefixNotCovered).

// PrefixGrantRefusal says why prefix (its literal words) cannot be
// granted as a prefix: its program has no model, or its own words fall
// outside it (an option the model does not know, a file in .git). Empty
// when it can. Refusals about running arbitrary or workspace code are the
// grants package's.
func PrefixGrantRefusal(prefix []string) string {
	return judgeGrant(&grantCheck{prefix: true}, prefix)
}

// PrefixNotCovered says why command (its literal words, which start with
// prefix's) is not covered by a prefix grant on prefix, run in cwd inside
// workspace: an option the model does not know, a file outside the
// workspace or in .git (as written or through symlinks), a git remote the
// repository does not configure, a repository whose config askops cannot
// trust. Empty when covered.
func PrefixNotCovered(prefix, command []string, cwd, workspace string) string {
	if len(command) < len(prefix) {
		return "the command is shorter than the prefix"
	}
	for i, w := range prefix {
		if command[i] != w {
			return "the command does not start with the prefix"
		}
	}
	if why := PrefixGrantRefusal(prefix); why != "" {
		return why
	}
	return judgeGrant(newGrantCheck(cwd, workspace), command)
}

// PrefixGrantNote is what a prefix grant on prefix covers beyond its
// words, for the approver: "only the options askops knows: …; files
// inside the workspace, outside .git".
func PrefixGrantNote(prefix []string) string {
	if len(prefix) == 0 {
		return ""
	}
	return grantNoteFor(prefix)
}

// targetOption says why the option w, added to a granted prefix of the
// program name, changes where or as whom it runs or what it writes, or "".
// Long options count in every abbreviation of three letters or more (many
// programs take them), and with one dash too (Go's flag package: vault
// -address=…).
func targetOption(name, w string) string {
	if len(w) < 2 || w[0] != '-' {
		return ""
	}
	if short := shortTargetOptions(name); short != "" && w[1] != '-' {
		// -sURL, -s=URL, -s URL, or a cluster ending in the letter.
		for _, c := range w[1:] {
			if c == '=' {
				break
			}
			if strings.ContainsRune(short, c) {
				return name + " " + clip(w, 60) + " (it changes where or as whom the command runs)"
			}
		}
	}
	opt, _, _ := strings.Cut(strings.TrimPrefix(strings.TrimPrefix(w, "-"), "-"), "=")
	opt = strings.ToLower(opt)
	if len(opt) < 2 {
		return ""
	}
	for _, t := range targetLongOptions(name) {
		if opt == t || len(opt) >= 4 && strings.HasPrefix(t, opt) {
			return name + " " + clip(w, 60) + " (it changes where or as whom the command runs, or what it writes)"
		}
	}
	if name == "git" {
		return ""
	}
	for _, p := range []string{"kube-", "impersonate", "as-", "tls", "ssl", "insecure"} {
		if strings.HasPrefix(opt, p) {
			return name + " " + clip(w, 60) + " (it changes where or as whom the command runs, or what it writes)"
		}
	}
	return ""
}

// shortTargetOptions are the one-letter options of name that choose the
// server, host, configuration or repository: kubectl -s (--server),
// docker -H (--host) and -c (--context), gh -R (--repo). (git's -c and -C
// come before the subcommand, which a grantable prefix names.)
func shortTargetOptions(name string) string {
	switch name {
	case "kubectl", "oc", "k3s", "kubecolor":
		return "s"
	case "docker", "podman", "nerdctl":
		return "Hc"
	case "gh":
		return "R"
	}
	return ""
}

// targetLongOptions lists long options (without dashes) that point a
// program at another server, cluster, account, configuration or identity,
// or make it write a log or cache: kubectl's, helm's, docker's, the
// clouds' CLIs, gh's and vault's; for git, its options that take another
// repository, work tree or configuration (its --root or --user mean
// something else). Text tools' --context is lines around a match.
func targetLongOptions(name string) []string {
	switch name {
	case "git":
		return []string{"git-dir", "work-tree", "exec-path", "config-env", "super-prefix", "attr-source", "upload-pack",
			"receive-pack", "config", "namespace"}
	case "grep", "egrep", "fgrep", "rg", "ag", "ack", "diff", "zgrep":
		return []string{"log-file"}
	}
	return []string{
		// kubectl, oc, helm
		"server", "as", "as-group", "as-uid", "token", "kubeconfig", "context", "cluster", "user", "username",
		"password", "certificate-authority", "client-certificate", "client-key", "tls-server-name",
		"insecure-skip-tls-verify", "cache-dir", "log-file", "log-dir", "log_file", "log_dir", "profile-output",
		"kuberc", "registry-config", "repository-config", "repository-cache", "post-renderer",
		// docker, podman
		"host", "config", "tlscacert", "tlscert", "tlskey", "tlsverify", "url", "connection", "identity", "remote",
		"root", "runroot", "conmon", "runtime", "hooks-dir", "storage-driver",
		// git (global options, and a repository or work tree elsewhere)
		"git-dir", "work-tree", "exec-path", "config-env",
		// aws, gcloud, az, gh, vault, and others
		"endpoint-url", "endpoint", "profile", "region", "no-verify-ssl", "ca-bundle", "account", "project",
		"impersonate-service-account", "access-token-file", "configuration", "billing-project", "subscription",
		"tenant", "hostname", "repo", "address", "ca-cert", "ca-path", "client-cert", "tls-skip-verify",
		"proxy", "socket", "api-url", "api-endpoint", "base-url",
	}
}
