package policy

import (
	"path"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// A prefix grant ("kubectl get", "gh pr view") lets later calls add words
// the approver never saw. Operands and plain options are what a prefix is
// for; options that change where the program acts, as whom, or what it
// writes are not: `kubectl get pods --server=https://evil
// --insecure-skip-tls-verify --token=…` talks to another cluster as another
// user, `--log-file=/etc/x` writes a file. PrefixWidens finds them.

// PrefixWidens says why command, whose words start with prefix's, does
// more than the prefix an approver granted: an added option that points the
// program at another server, cluster, context, account, configuration or
// identity, or an added word that makes it write a file. Empty when the
// added words only narrow or shape what the prefix does.
func PrefixWidens(prefix, command []string) string {
	if len(command) <= len(prefix) {
		return ""
	}
	name := path.Base(command[0])
	for _, w := range command[len(prefix):] {
		if w == "--" {
			break
		}
		if why := targetOption(name, w); why != "" {
			return why
		}
	}
	full, ok := quotedWords(command)
	if !ok {
		return "a word the policy cannot quote"
	}
	pre, ok := quotedWords(prefix)
	if !ok {
		return "a word the policy cannot quote"
	}
	a := analyzeCommand(full, "", "", nil)
	p := analyzeCommand(pre, "", "", nil)
	if a.parseErr != nil {
		return "the command does not parse"
	}
	if len(a.writes) > len(p.writes) {
		return "it writes " + clip(a.writes[len(a.writes)-1].shown, 80) + ", which the prefix does not"
	}
	return ""
}

func quotedWords(words []string) (string, bool) {
	q := make([]string, len(words))
	for i, w := range words {
		s, err := syntax.Quote(w, syntax.LangBash)
		if err != nil {
			return "", false
		}
		q[i] = s
	}
	return strings.Join(q, " "), true
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
