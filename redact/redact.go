// Package redact hides secrets (tokens, passwords, private keys) in text
// that askops shows or stores, keeping what tells a reader what kind of
// secret was there, and never hiding shell code.
package redact

import (
	"regexp"
	"strings"
)

// Marker replaces a secret's value in everything askops posts to Slack.
const Marker = "[REDACTED]"

// secretRule rewrites one family of secrets. Rules run in order; each keeps
// what tells the approver what kind of secret was there (a key name, a token's
// prefix, a URL's user name) and drops the secret itself.
type secretRule struct {
	name string
	// hints are lower-case substrings one of which every match contains;
	// a text with none of them skips the rule (most text has no secrets,
	// and the regexps are slow on long input).
	hints []string
	re    *regexp.Regexp
	// repl is a regexp.Expand template; when keep is set it decides per match
	// instead (nil: always replace).
	repl string
	keep func(groups []string) bool
	// multiline: the secret itself spans lines (a PEM block), so a newline
	// in it does not make it code.
	multiline bool
}

// secretWord is the tail of a key name that holds a secret: PASSWORD,
// GITHUB_TOKEN, client_secret, api-key, aws_secret_access_key, PGPASSWORD
// (libpq's, the one common name with no separator before PASSWORD), … "_key" only
// counts after an underscore so flags like --sort-key stay readable.
const secretWord = `(?:pass(?:word|wd|phrase)?|pgpassword|pwd|token|secret|api[_-]?key|access[_-]?key|private[_-]?key|credentials?|auth|[A-Za-z0-9]+_key)`

// secretHints are the hints of the rules keyed on secretWord.
var secretHints = []string{"pass", "pwd", "token", "secret", "key", "credential", "auth"}

// secretRules are compiled once; regexps are immutable and safe for
// concurrent use, so this is a table, not state.
var secretRules = []secretRule{
	{
		// PEM private keys, including a block cut before its END line.
		name:  "pem",
		hints: []string{"private key-----"},
		re:    regexp.MustCompile(`-----BEGIN ([A-Z0-9 ]*)PRIVATE KEY-----(?s:.*?)(?:-----END [A-Z0-9 ]*PRIVATE KEY-----|\z)`),
		repl:  `-----BEGIN ${1}PRIVATE KEY-----` + Marker + `-----END ${1}PRIVATE KEY-----`,

		multiline: true,
	},
	{
		name:  "github",
		hints: []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"},
		re:    regexp.MustCompile(`\b(gh[pousr]_|github_pat_)[A-Za-z0-9_]{16,}`),
		repl:  `${1}` + Marker,
	},
	{
		name:  "slack",
		hints: []string{"xox", "xapp-"},
		re:    regexp.MustCompile(`\b(xox[abposre]-|xapp-)[A-Za-z0-9-]{6,}`),
		repl:  `${1}` + Marker,
	},
	{
		// Anthropic first: sk-ant- would otherwise read as an OpenAI key.
		name:  "anthropic",
		hints: []string{"sk-ant-"},
		re:    regexp.MustCompile(`\b(sk-ant-)[A-Za-z0-9_-]{8,}`),
		repl:  `${1}` + Marker,
	},
	{
		name:  "openai",
		hints: []string{"sk-"},
		re:    regexp.MustCompile(`\b(sk-(?:proj-|svcacct-|admin-)?)[A-Za-z0-9_-]{16,}`),
		repl:  `${1}` + Marker,
		// sk-ant-[REDACTED] has already been handled.
		keep: func(g []string) bool { return strings.HasPrefix(g[0], "sk-ant-") },
	},
	{
		name:  "gitlab",
		hints: []string{"glpat-"},
		re:    regexp.MustCompile(`\b(glpat-)[A-Za-z0-9_-]{16,}`),
		repl:  `${1}` + Marker,
	},
	{
		name:  "stripe",
		hints: []string{"_live_", "_test_"},
		re:    regexp.MustCompile(`\b((?:sk|rk)_(?:live|test)_)[A-Za-z0-9]{10,}`),
		repl:  `${1}` + Marker,
	},
	{
		name:  "npm",
		hints: []string{"npm_"},
		re:    regexp.MustCompile(`\b(npm_)[A-Za-z0-9]{30,}`),
		repl:  `${1}` + Marker,
	},
	{
		name:  "google-api-key",
		hints: []string{"aiza"},
		re:    regexp.MustCompile(`\b(AIza)[A-Za-z0-9_-]{35}`),
		repl:  `${1}` + Marker,
	},
	{
		// Slack incoming webhooks: the last path segment is the secret.
		name:  "slack-webhook",
		hints: []string{"hooks.slack.com"},
		re:    regexp.MustCompile(`(hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9]+/[A-Za-z0-9]+/)[A-Za-z0-9]+`),
		repl:  `${1}` + Marker,
	},
	{
		// JSON Web Tokens, wherever they appear (cookies, query strings).
		name:  "jwt",
		hints: []string{"eyj"},
		re:    regexp.MustCompile(`\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*`),
		repl:  Marker,
	},
	{
		name:  "aws-key-id",
		hints: []string{"akia", "asia", "agpa", "aida", "aroa", "aipa", "anpa", "anva", "abia", "acca"},
		re:    regexp.MustCompile(`\b((?:AKIA|ASIA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA|ABIA|ACCA))[A-Z0-9]{16}\b`),
		repl:  `${1}` + Marker,
	},
	{
		// Authorization: Bearer x / Basic x / token x, in headers and curl -H.
		name:  "authorization",
		hints: []string{"authorization"},
		re:    regexp.MustCompile(`(?i)(\bauthorization\s*[:=]\s*(?:(?:bearer|basic|token|digest|negotiate)\s+)?)("[^"]*"|'[^']*'|[^\s"']+)`),
		repl:  `${1}` + Marker,
		keep:  alreadyRedacted,
	},
	{
		name:  "bearer",
		hints: []string{"bearer", "basic"},
		re:    regexp.MustCompile(`(?i)(\b(?:bearer|basic)\s+)([A-Za-z0-9._~+/=-]{8,})`),
		repl:  `${1}` + Marker,
	},
	{
		// scheme://user:pass@host keeps the user, drops the password.
		name:  "url-userinfo",
		hints: []string{"://"},
		re:    regexp.MustCompile(`(?i)(\b[a-z][a-z0-9+.-]*://[^/\s:@]*:)([^/\s@]+)@`),
		repl:  `${1}` + Marker + `@`,
		keep:  alreadyRedacted,
	},
	{
		// curl -u user:pass / --user user:pass
		name:  "curl-user",
		hints: []string{"-u"},
		re:    regexp.MustCompile(`((?:^|\s)(?:-u|--user)(?:\s+|=)["']?[^\s:"']+:)([^\s"']+)`),
		repl:  `${1}` + Marker,
		keep:  alreadyRedacted,
	},
	{
		// mysql -pSECRET (attached only: "-p" alone prompts, and "-p 22"
		// is a port for ssh and most other tools).
		name:  "mysql-p",
		hints: []string{"mysql", "mariadb"},
		re:    regexp.MustCompile(`(\b(?:mysql|mysqldump|mysqladmin|mariadb|mariadb-dump)\b[^\n;&|]*?\s-p)([^\s]+)`),
		repl:  `${1}` + Marker,
		keep:  alreadyRedacted,
	},
	{
		// key=value and key: value — URL query strings, env assignments,
		// --flag=value, JSON/YAML. The key must end in a secret word.
		name:  "key-value",
		hints: secretHints,
		re: regexp.MustCompile(`(?i)((?:^|[\s?&;,{(\[/"'])-{0,2}(?:[A-Za-z0-9]+[_.-])*` + secretWord +
			`["']?\s*(?:=|:\s*|:)\s*)([^\s"'&;|<>()\[` + "`" + `,}\]]*\[REDACTED\]|"(?:[^"\\]|\\.)*"|'[^']*'|[^\s"'&;|<>()` + "`" + `,}\]]+)`),
		keep: keepKeyValue,
	},
	{
		// --password VALUE (space separated). --no-password takes no value,
		// and a following "-x" is the next flag, not a value.
		name:  "flag-space",
		hints: secretHints,
		re:    regexp.MustCompile(`(?i)((?:^|\s)--?((?:[A-Za-z0-9]+-)*` + secretWord + `)\s+)("[^"]*"|'[^']*'|[^\s"'-][^\s]*)`),
		keep: func(g []string) bool {
			return strings.HasPrefix(strings.ToLower(g[2]), "no-") || alreadyRedacted(g)
		},
		repl: `${1}` + Marker,
	},
}

// alreadyRedacted keeps a match whose last group is already a redaction, so
// Redact is idempotent.
func alreadyRedacted(g []string) bool {
	v := strings.Trim(g[len(g)-1], `"'`)
	return strings.HasSuffix(v, Marker) || v == ""
}

// keepKeyValue decides the key-value rule's matches: PWD=/OLDPWD= are the
// shell's working directories, not passwords; values that are already
// redacted or empty are left as they are.
func keepKeyValue(g []string) bool {
	key := strings.TrimLeft(g[1], " \t\n\r?&;,{([/\"'-")
	if i := strings.IndexAny(key, "=:\"' \t"); i >= 0 {
		key = key[:i]
	}
	if key == "PWD" || key == "OLDPWD" {
		return true
	}
	// "X-Auth: Bearer …": the scheme is not the secret; the bearer rule
	// has already hidden what follows it.
	switch strings.ToLower(g[len(g)-1]) {
	case "bearer", "basic", "token", "digest":
		return true
	}
	return alreadyRedacted(g)
}

// Secrets returns s with every secret it recognises replaced by [REDACTED]
// (the key name, token prefix or URL user is kept so the approver knows what
// was there). It errs on the side of hiding: a value that merely looks like a
// secret is hidden too. Redact is idempotent.
func Secrets(s string) string {
	lower := strings.ToLower(s)
	for _, rule := range secretRules {
		if !containsAny(lower, rule.hints) {
			continue
		}
		if r := rule.apply(s); r != s {
			s, lower = r, strings.ToLower(r)
		}
	}
	return s
}

// mayBeCode reports whether a would-be secret holds shell syntax that runs,
// expands or separates commands: $( ` ${ <( >( ; | & or a line break (a
// quoted value that eval, bash -c or ssh take apart again). Then it may be
// code, not a literal secret, and hiding it would hide from the approver
// what the command does: the model writes the arguments, and could dress
// any command up as a "password". Showing a rare password with a ";" is the
// lesser harm.
func mayBeCode(v string, multiline bool) bool {
	if strings.ContainsAny(v, "`;|&") || (!multiline && strings.ContainsAny(v, "\n\r")) {
		return true
	}
	for _, s := range []string{"$(", "${", "<(", ">("} {
		if strings.Contains(v, s) {
			return true
		}
	}
	return false
}

func containsAny(s string, subs []string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

func (rule secretRule) apply(s string) string {
	idx := rule.re.FindAllStringSubmatchIndex(s, -1)
	if len(idx) == 0 {
		return s
	}
	var b strings.Builder
	last := 0
	for _, m := range idx {
		groups := make([]string, len(m)/2)
		for i := range groups {
			if m[2*i] >= 0 {
				groups[i] = s[m[2*i]:m[2*i+1]]
			}
		}
		b.WriteString(s[last:m[0]])
		last = m[1]
		// The secret is what follows the kept prefix (group 1), or the
		// whole match.
		secret := groups[0]
		if len(m) > 3 && m[3] >= 0 {
			secret = s[m[3]:m[1]]
		}
		if mayBeCode(secret, rule.multiline) || (rule.keep != nil && rule.keep(groups)) {
			b.WriteString(groups[0])
			continue
		}
		if rule.repl != "" {
			b.Write(rule.re.ExpandString(nil, rule.repl, s, m))
			continue
		}
		// key-value: keep the key (group 1) and the value's quotes.
		v := groups[len(groups)-1]
		b.WriteString(groups[1])
		switch {
		case len(v) >= 2 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0]:
			b.WriteByte(v[0])
			b.WriteString(Marker)
			b.WriteByte(v[0])
		default:
			b.WriteString(Marker)
		}
	}
	b.WriteString(s[last:])
	return b.String()
}

// secretKey is a key name (JSON, YAML, a header) whose value is a secret
// whatever it looks like.
var secretKey = regexp.MustCompile(`(?i)(?:^|[_.-])` + secretWord + `$|^(?:proxy-)?authorization$|^(?:set-)?cookie$`)

// SecretKey reports whether a value stored under the key name k is a secret
// whatever it looks like ("password", "X-Api-Key", "Authorization"). PWD and
// OLDPWD are directories, not passwords.
func SecretKey(k string) bool {
	return secretKey.MatchString(k) && k != "PWD" && k != "OLDPWD"
}
