// Package redact hides secrets (tokens, passwords, private keys) in text
// that askops shows or stores, keeping what tells a reader what kind of
// secret was there, and never hiding shell code.
package redact

import (
	"regexp"
	"slices"
	"strconv"
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
	// and the regexps are slow on long input). nil: the rule always runs.
	hints []string
	re    *regexp.Regexp
	// repl is a regexp.Expand template; empty means: keep group 1 (the key
	// or flag) and the value's quotes, replace the value (the last group).
	repl string
	// keep decides per match to leave it as it is (nil: never).
	keep func(groups []string) bool
	// wordStart: the token must begin a word, so "task-sk-…" or
	// "xghp_…" (a token prefix inside a longer word) is left alone.
	wordStart bool
	// fn rewrites the text itself, for shapes a regexp cannot state
	// (positional arguments). re is unused then.
	fn func(string) string
	// pre, if set, must hold for a line before the regexp runs on it: a
	// cheap test for a rule whose hint is common (discord-bot's ".").
	pre func(line string) bool
	// wholeText: the rule needs more than the lines that hold a hint
	// (.netrc's password is on another line than its machine).
	wholeText bool
}

// value is what follows a key or flag: a quoted string on one line, or a run
// of characters none of which is shell syntax. A value that still holds
// shell syntax is left alone by mayBeCode.
const value = `("[^"\n]*"|'[^'\n]*'|[^\s"'&;|<>()` + "`" + `$]+)`

// secretHints are the hints of the rules keyed on a secret key name
// (see SecretKey).
var secretHints = []string{"pass", "pw", "pat", "token", "secret", "key", "credential", "auth", "cookie"}

// prefixed is a token that announces itself by its prefix (ghp_, hf_, SG.):
// the prefix stays, the rest goes.
func prefixed(name, prefix, body string, hints ...string) secretRule {
	return secretRule{
		name:      name,
		hints:     hints,
		re:        regexp.MustCompile(`(` + prefix + `)` + body),
		repl:      `${1}` + Marker,
		wordStart: true,
	}
}

// argument is a secret given as a command's argument: prefix is the command
// and flag up to the value (group 1).
func argument(name, prefix string, hints ...string) secretRule {
	return secretRule{
		name:  name,
		hints: hints,
		re:    regexp.MustCompile(`(` + prefix + `)` + value),
		keep:  alreadyRedacted,
	}
}

// secretRules are compiled once; regexps are immutable and safe for
// concurrent use, so this is a table, not state.
// The shapes follow gitleaks' rule set (github.com/gitleaks/gitleaks,
// config/gitleaks.toml) for the providers' formats, written again here for
// redaction: each regexp matches the secret only, never its surroundings.
var secretRules = []secretRule{
	prefixed("github", `gh[pousr]_|github_pat_`, `[A-Za-z0-9_]{16,}`, "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
	prefixed("gitlab", `gl(?:pat|dt|rt|ptt|ft|imt|oas|cbt|soat|ffct|agent)-`, `[A-Za-z0-9_-]{16,}`, "gl"),
	// xoxd- is the browser session cookie, often URL-encoded (%2F);
	// xoxe.xoxp- and xoxe- are rotating tokens and their refresh tokens.
	prefixed("slack", `xoxe\.xox[bp]-|xox[abposrecd]-|xapp-`, `[A-Za-z0-9%/+=-]{6,}`, "xox", "xapp-"),
	// Anthropic first: sk-ant- would otherwise read as an OpenAI key.
	prefixed("anthropic", `sk-ant-`, `[A-Za-z0-9_-]{8,}`, "sk-ant-"),
	func() secretRule {
		r := prefixed("openai", `sk-(?:proj-|svcacct-|admin-)?`, `[A-Za-z0-9_-]{16,}`, "sk-")
		// sk-ant-[REDACTED] has already been handled.
		r.keep = func(g []string) bool { return strings.HasPrefix(g[0], "sk-ant-") }
		return r
	}(),
	prefixed("stripe", `(?:sk|rk)_(?:live|test|prod)_|whsec_`, `[A-Za-z0-9]{10,}`, "_live_", "_test_", "_prod_", "whsec_"),
	prefixed("npm", `npm_`, `[A-Za-z0-9]{30,}`, "npm_"),
	prefixed("pypi", `pypi-`, `AgE[A-Za-z0-9_-]{40,}`, "pypi-"),
	prefixed("google-api-key", `AIza`, `[A-Za-z0-9_-]{35}`, "aiza"),
	prefixed("google-oauth-secret", `GOCSPX-`, `[A-Za-z0-9_-]{20,}`, "gocspx-"),
	prefixed("google-oauth-access", `ya29\.`, `[A-Za-z0-9_-]{20,}`, "ya29."),
	prefixed("google-oauth-refresh", `1//0`, `[A-Za-z0-9_-]{30,}`, "1//0"),
	prefixed("huggingface", `hf_`, `[A-Za-z0-9]{30,}`, "hf_"),
	prefixed("sendgrid", `SG\.`, `[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}`, "sg."),
	prefixed("shopify", `shp(?:at|ca|pa|ss)_`, `[a-fA-F0-9]{32}`, "shp"),
	prefixed("digitalocean", `do[por]_v1_`, `[a-f0-9]{64}`, "_v1_"),
	prefixed("vault", `hv[sbr]\.`, `[A-Za-z0-9_-]{20,}`, "hvs.", "hvb.", "hvr."),
	prefixed("telegram-bot", `(?:bot)?[0-9]{8,10}:`, `AA[A-Za-z0-9_-]{33}`, ":aa"),
	prefixed("age", `AGE-SECRET-KEY-1`, `[0-9A-Z]{50,}`, "age-secret-key-1"),
	prefixed("dockerhub", `dckr_pat_`, `[A-Za-z0-9_-]{20,}`, "dckr_pat_"),
	prefixed("databricks", `dapi`, `[a-f0-9]{32}(?:-[0-9])?`, "dapi"),
	prefixed("atlassian", `ATATT3|ATBB`, `[A-Za-z0-9_=-]{30,}`, "atatt3", "atbb"),
	prefixed("linear", `lin_api_`, `[A-Za-z0-9]{30,}`, "lin_api_"),
	prefixed("notion", `ntn_|secret_`, `[A-Za-z0-9]{40,}`, "ntn_", "secret_"),
	prefixed("grafana", `glc_|glsa_`, `[A-Za-z0-9+/_=]{32,}`, "glc_", "glsa_"),
	prefixed("newrelic", `NRAK-|NRII-|NRJS-`, `[A-Z0-9]{20,}`, "nrak-", "nrii-", "nrjs-"),
	prefixed("sentry", `sntry[su]_`, `[A-Za-z0-9+/=_]{40,}`, "sntry"),
	prefixed("doppler", `dp\.(?:pt|st|sa|ct|scim|audit)\.`, `[A-Za-z0-9]{40,}`, "dp."),
	prefixed("pulumi", `pul-`, `[a-f0-9]{40}`, "pul-"),
	prefixed("postman", `PMAK-`, `[a-f0-9]{24}-[a-f0-9]{34}`, "pmak-"),
	prefixed("terraform", `[A-Za-z0-9]{14}\.atlasv1\.`, `[A-Za-z0-9_=-]{60,}`, ".atlasv1."),
	prefixed("flyio", `fo1_|fm[12][ar]?_`, `[A-Za-z0-9_-]{40,}`, "fo1_", "fm1", "fm2"),
	prefixed("square", `sq0(?:atp|csp)-|EAAA`, `[0-9A-Za-z_-]{22,60}\b`, "sq0", "eaaa"),
	prefixed("supabase", `sbp_`, `[a-f0-9]{40}`, "sbp_"),
	prefixed("replicate", `r8_`, `[A-Za-z0-9]{37}`, "r8_"),
	prefixed("groq", `gsk_`, `[A-Za-z0-9]{48,}`, "gsk_"),
	prefixed("xai", `xai-`, `[A-Za-z0-9]{70,}`, "xai-"),
	prefixed("perplexity", `pplx-`, `[A-Za-z0-9]{40,}`, "pplx-"),
	prefixed("twilio", `SK`, `[0-9a-fA-F]{32}\b`, "sk"),
	prefixed("mailgun", `key-`, `[0-9a-zA-Z]{32}\b`, "key-"),
	prefixed("contentful", `CFPAT-`, `[A-Za-z0-9_-]{43}`, "cfpat-"),
	prefixed("dynatrace", `dt0c01\.`, `[A-Z0-9]{24}\.[A-Z0-9]{64}`, "dt0c01."),
	prefixed("planetscale", `pscale_(?:tkn|pw|oauth)_`, `[A-Za-z0-9_.=-]{32,}`, "pscale_"),
	prefixed("rubygems", `rubygems_`, `[a-f0-9]{48}`, "rubygems_"),
	prefixed("heroku", `HRKU-`, `[A-Za-z0-9_-]{30,}`, "hrku-"),
	prefixed("azure-ad-client-secret", `[A-Za-z0-9_~.]{3}[0-9]Q~`, `[A-Za-z0-9_~.-]{31,34}`, "q~"),
	prefixed("mapbox", `sk\.`, `eyJ[A-Za-z0-9_-]{20,}\.[A-Za-z0-9_-]{20,}`, "sk.eyj"),
	prefixed("1password-service-account", `ops_`, `eyJ[A-Za-z0-9+/]{200,}={0,3}`, "ops_eyj"),
	prefixed("tailscale", `tskey-[a-z]+-`, `[A-Za-z0-9-]{16,}`, "tskey-"),
	prefixed("airtable", `pat`, `[A-Za-z0-9]{14}\.[a-f0-9]{64}`, "pat"),
	prefixed("alibaba", `LTAI`, `[A-Za-z0-9]{20}\b`, "ltai"),
	prefixed("tencent-secret-id", `AKID`, `[A-Za-z0-9]{32}\b`, "akid"),
	prefixed("artifactory", `AKCp`, `[A-Za-z0-9]{69}`, "akcp"),
	prefixed("clojars", `CLOJARS_`, `[a-z0-9]{60}`, "clojars_"),
	prefixed("duffel", `duffel_(?:test|live)_`, `[A-Za-z0-9_=-]{43}`, "duffel_"),
	prefixed("easypost", `EZ[AT]K`, `[A-Za-z0-9]{54}`, "ezak", "eztk"),
	prefixed("flutterwave", `FLWSECK_TEST-|FLWSECK-`, `[a-hA-H0-9]{32}-X`, "flwseck"),
	prefixed("frameio", `fio-u-`, `[A-Za-z0-9_=-]{64}`, "fio-u-"),
	prefixed("hubspot", `pat-(?:na|eu)1-`, `[a-f0-9-]{36}`, "pat-"),
	prefixed("infracost", `ico-`, `[A-Za-z0-9]{32}`, "ico-"),
	prefixed("openshift", `sha256~`, `[A-Za-z0-9_-]{43}`, "sha256~"),
	prefixed("plaid", `access-(?:sandbox|development|production)-`, `[a-f0-9-]{36}`, "access-"),
	prefixed("prefect", `pnu_`, `[A-Za-z0-9]{36}`, "pnu_"),
	prefixed("readme", `rdme_`, `[a-z0-9]{70}`, "rdme_"),
	prefixed("brevo", `xkeysib-`, `[a-f0-9]{64}-[A-Za-z0-9]{16}`, "xkeysib-"),
	prefixed("shippo", `shippo_(?:live|test)_`, `[a-fA-F0-9]{40}`, "shippo_"),
	prefixed("sourcegraph", `sgp_(?:local_)?`, `(?:[a-fA-F0-9]{16}_)?[a-fA-F0-9]{40}`, "sgp_"),
	prefixed("typeform", `tfp_`, `[A-Za-z0-9_.=-]{59}`, "tfp_"),
	prefixed("sonarqube", `sq[pua]_`, `[a-f0-9]{40}`, "sqp_", "squ_", "sqa_"),
	prefixed("buildkite", `bkua_`, `[a-f0-9]{40}`, "bkua_"),
	prefixed("huggingface-org", `api_org_`, `[A-Za-z0-9]{30,}`, "api_org_"),
	prefixed("langsmith", `lsv2_(?:pt|sk)_`, `[a-f0-9]{32}_[a-f0-9]{10}`, "lsv2_"),
	prefixed("figma", `figd_`, `[A-Za-z0-9_-]{40,}`, "figd_"),
	prefixed("firebase-fcm", `AAAA`, `[A-Za-z0-9_-]{7}:[A-Za-z0-9_-]{140}`, "aaaa"),
	prefixed("cloudflare-origin-ca", `v1\.0-`, `[a-f0-9]{24}-[a-f0-9]{146}`, "v1.0-"),
	prefixed("harness", `(?:pat|sat)\.`, `[A-Za-z0-9_-]{22}\.[0-9a-f]{24}\.[A-Za-z0-9]{20}`, "pat.", "sat."),
	prefixed("octopus", `API-`, `[A-Z0-9]{26}\b`, "api-"),
	prefixed("gitlab-runner-registration", `GR1348941`, `[A-Za-z0-9_-]{20}`, "gr1348941"),
	prefixed("circleci", `CCIPAT_`, `[A-Za-z0-9]{22}_[a-f0-9]{40}`, "ccipat_"),
	prefixed("pinecone", `pcsk_`, `[A-Za-z0-9_]{40,}`, "pcsk_"),
	prefixed("1password-secret-key", `A3-`, `[A-Z0-9]{6}-(?:[A-Z0-9]{11}|[A-Z0-9]{6}-[A-Z0-9]{5})-[A-Z0-9]{5}-[A-Z0-9]{5}-[A-Z0-9]{5}\b`, "a3-"),
	prefixed("adobe-client-secret", `p8e-`, `[A-Za-z0-9]{32}\b`, "p8e-"),
	prefixed("clickhouse", `4b1d`, `[A-Za-z0-9]{38}\b`, "4b1d"),
	prefixed("artifactory-reference", `cmVmd`, `[A-Za-z0-9]{59}\b`, "cmvmd"),
	prefixed("defined-networking", `dnkey-`, `[A-Za-z0-9=_-]{26}-[A-Za-z0-9=_-]{52}`, "dnkey-"),
	prefixed("facebook-page", `EAA[MC]`, `[A-Za-z0-9]{100,}`, "eaam", "eaac"),
	prefixed("grafana-api-key", `eyJrIjoi`, `[A-Za-z0-9]{70,400}={0,3}`, "eyjrijoi"),
	prefixed("jwt-base64", `ZXlK`, `[A-Za-z0-9/_+-]{40,}={0,2}`, "zxlk"),
	prefixed("intra42", `s-s4t2(?:ud|af)-`, `[a-f0-9]{64}`, "s-s4t2"),
	prefixed("scalingo", `tk-us-`, `[A-Za-z0-9_-]{48}`, "tk-us-"),
	prefixed("settlemint", `sm_(?:aat|pat|sat)_`, `[A-Za-z0-9]{16}\b`, "sm_aat_", "sm_pat_", "sm_sat_"),
	prefixed("authress", `(?:sc|ext|scauth|authress)_`, `[A-Za-z0-9]{5,30}\.[A-Za-z0-9]{4,6}\.acc[_-][a-z0-9-]{10,32}\.[A-Za-z0-9+/_=-]{30,120}`, ".acc"),
	{
		name:  "maxmind",
		hints: []string{"_mmk"},
		re:    regexp.MustCompile(`\b[A-Za-z0-9]{6}_[A-Za-z0-9]{29}(_mmk)\b`),
		repl:  Marker + `${1}`,
	},
	{
		// Teams incoming webhooks: the path after webhookb2/ is the secret.
		name:  "teams-webhook",
		hints: []string{"webhook.office.com"},
		re:    regexp.MustCompile(`(\.webhook\.office\.com/webhookb2/)[A-Za-z0-9@/-]+`),
		repl:  `${1}` + Marker,
	},
	{
		name:  "mailchimp",
		hints: []string{"-us"},
		re:    regexp.MustCompile(`\b[0-9a-f]{32}(-us[0-9]{1,2})\b`),
		repl:  Marker + `${1}`,
	},
	{
		name:  "discord-bot",
		hints: []string{"."},
		pre:   func(l string) bool { return tokenRunBefore(l, '.', 23) },
		re:    regexp.MustCompile(`\b[MNO][A-Za-z0-9_-]{23,25}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,38}\b`),
		repl:  Marker,
	},
	{
		// Incoming webhooks: the last path segment is the secret.
		name:  "webhook",
		hints: []string{"hooks.slack.com", "/api/webhooks/"},
		re:    regexp.MustCompile(`((?:hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9]+/[A-Za-z0-9]+|discord(?:app)?\.com/api/webhooks/[0-9]+)/)[A-Za-z0-9_-]+`),
		repl:  `${1}` + Marker,
	},
	{
		// Azure shared access signatures: the sig parameter.
		name:  "sas-sig",
		hints: []string{"sig="},
		re:    regexp.MustCompile(`([?&;]sig=)([A-Za-z0-9%+/=]{16,})`),
		repl:  `${1}` + Marker,
	},
	{
		// JSON Web Tokens, wherever they appear (cookies, query strings).
		name:  "jwt",
		hints: []string{"eyj"},
		// JWE's five parts too: header, encrypted key, IV, ciphertext, tag.
		re:   regexp.MustCompile(`\beyJ[A-Za-z0-9_-]{8,}\.(?:eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*|[A-Za-z0-9_-]*\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,})`),
		repl: Marker,
	},
	{
		name:      "aws-key-id",
		hints:     []string{"akia", "asia", "agpa", "aida", "aroa", "aipa", "anpa", "anva", "abia", "acca"},
		re:        regexp.MustCompile(`\b((?:AKIA|ASIA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA|ABIA|ACCA))[A-Z0-9]{16}\b`),
		repl:      `${1}` + Marker,
		wordStart: true,
	},
	{
		// Authorization: Bearer x / Basic x / token x, in headers and curl -H.
		name:  "authorization",
		hints: []string{"authorization"},
		re:    regexp.MustCompile(`(?i)(\bauthorization[ \t]*[:=][ \t]*(?:(?:bearer|basic|token|digest|negotiate|ssws)[ \t]+)?)` + value),
		keep:  alreadyRedacted,
	},
	{
		name:  "bearer",
		hints: []string{"bearer", "basic", "ssws"},
		// A token whose prefix was kept by its own rule (sk-proj-[REDACTED])
		// is done.
		re:   regexp.MustCompile(`(?i)(\b(?:bearer|basic|ssws)[ \t]+)([A-Za-z0-9._~+/=-]{8,})(\[REDACTED\])?`),
		repl: `${1}` + Marker,
		keep: func(g []string) bool { return g[3] != "" },
	},
	{
		// scheme://user:pass@host keeps the user, drops the password.
		name:  "url-userinfo",
		hints: []string{"://"},
		pre:   func(l string) bool { return strings.IndexByte(l, '@') >= 0 },
		// The password runs to the authority's last @ (a browser and git
		// read p@ss in https://u:p@ss@host as the password).
		re:   regexp.MustCompile(`(?i)(\b[a-z][a-z0-9+.-]*://[^/\s:@]*:)([^/?#\s]*[^/?#\s@])@`),
		repl: `${1}` + Marker + `@`,
		keep: alreadyRedacted,
	},
	// curl -u user:pass, --user user:pass, -uuser:pass
	// curl -u user:pass, --user, --proxy-user, -U (curl's proxy user)
	argument("curl-user", `(?:^|[ \t])(?:-u|--user|-U|--proxy-user)(?:[ \t]+|=)?["']?(?:\$\{?[A-Za-z_][A-Za-z0-9_]*\}?|[^\s:"'$]+):`, "-u", "--user", "--proxy-user"),
	// smbclient -U user%pass
	argument("user-percent", `(?:^|[ \t])(?:-U|--user)(?:[ \t]+|=)["']?[^\s%"'$]+%`, "%"),
	// mysql -pSECRET (attached only: "-p" alone prompts, and "-p 22"
	// is a port for ssh and most other tools).
	argument("mysql-p", `\b(?:mysql|mysqldump|mysqladmin|mariadb|mariadb-dump)\b[^\n;&|]*?[ \t]-p`, "mysql", "mariadb"),
	// docker/podman/helm/oras … login -p SECRET
	argument("login-p", `\blogin\b[^\n;&|]*?[ \t]-p(?:[ \t]+|=)?`, "login"),
	argument("sshpass", `\bsshpass\b[^\n;&|]*?[ \t]-p[ \t]*`, "sshpass"),
	argument("redis-cli", `\bredis-cli\b[^\n;&|]*?[ \t](?:-a|--pass)[ \t]+`, "redis-cli"),
	argument("ldap-w", `\bldap[a-z]*\b[^\n;&|]*?[ \t]-w[ \t]+`, "ldap"),
	argument("openssl-pass", `(?:^|[ \t])-(?:pass(?:in|out)?|password|passwd)[ \t]+pass:`, "pass:"),
	// aws configure set aws_secret_access_key SECRET (and the like for
	// any "configure set" whose key names a secret).
	argument("configure-set", `(?i)\bconfigure[ \t]+set[ \t]+(?:[A-Za-z0-9_-]+\.)*[A-Za-z0-9_-]*(?:secret|token|password|key)[A-Za-z0-9_-]*[ \t]+`, "configure"),
	{
		name:  "htpasswd",
		hints: []string{"htpasswd"},
		fn:    htpasswdBatch,
	},
}

// lateRules run after secretRules and positionRules: the rules keyed on
// names and places, which must see what the provider rules left
// (token=ghp_[REDACTED] is done).
var lateRules = []secretRule{
	{name: "stdin", hints: []string{"echo", "printf", "<<<"}, fn: fedPasswords},
	{name: "heredoc-stdin", hints: []string{"<<"}, fn: fedHeredocs, wholeText: true},
	{name: "echo-into-credentials", hints: []string{"echo", "printf"}, fn: echoedCredentials,
		pre: func(l string) bool { return strings.IndexByte(l, '>') >= 0 || strings.Contains(l, "tee") }},
	{name: "store-command", hints: []string{"vault", "secrets", "secret", "configure", "rclone"}, fn: storedValues},
	{name: "name-value", hints: []string{"value"}, fn: namedValues, wholeText: true},
	{name: "netrc", hints: []string{"machine"}, fn: netrc, wholeText: true},
	{name: "pgpass", hints: []string{":"}, fn: pgpass},
	{name: "cookie", hints: []string{"cookie", "-b"}, fn: cookies},
	{name: "markup", hints: []string{"</", "value=", "define("}, fn: markup},
	// A phrase before the key-value rule, which would hide its first word
	// only (phrase: abandon ability …).
	{name: "bip39", fn: mnemonics},
	{name: "key-value", hints: []string{"=", ":"}, fn: keyValues},
	{
		// --password VALUE (space separated). --no-password takes no value,
		// and a following "-x" is the next flag, not a value.
		name:  "flag-space",
		hints: secretHints,
		re:    regexp.MustCompile(`((?:^|\s)--?([A-Za-z0-9][A-Za-z0-9-]*)[ \t]+)("[^"\n]*"|'[^'\n]*'|[^\s"'&;|<>()$` + "`" + `-][^\s"'&;|<>()$` + "`" + `]*)`),
		keep: func(g []string) bool {
			return !SecretKey(g[2]) || strings.HasPrefix(strings.ToLower(g[2]), "no-") || alreadyRedacted(g) ||
				passSource(g[3])
		},
	},
}

// passSource reports whether v names where a passphrase is read from, as
// openssl's -pass env:VAR, file:PATH, fd:N and stdin do.
func passSource(v string) bool {
	v = strings.Trim(v, `"'`)
	return v == "stdin" || strings.HasPrefix(v, "env:") || strings.HasPrefix(v, "file:") || strings.HasPrefix(v, "fd:")
}

// rules are every rule in the order Secrets runs them.
var rules = slices.Concat(secretRules, positionRules, cliRules, lateRules)

// htpasswdCmd is an htpasswd command up to the end of its simple command.
var htpasswdCmd = regexp.MustCompile(`\bhtpasswd\b[^\n;&|]*`)

// htpasswdBatch hides the password operand of htpasswd -b (batch mode):
// htpasswd -b[c] FILE USER PASSWORD, htpasswd -nb USER PASSWORD.
func htpasswdBatch(s string) string {
	return htpasswdCmd.ReplaceAllStringFunc(s, func(cmd string) string {
		words := shellWordSpans.FindAllStringIndex(cmd, -1)
		batch, noFile := false, false
		var operands [][]int
		for _, w := range words[1:] {
			word := cmd[w[0]:w[1]]
			if len(operands) == 0 && strings.HasPrefix(word, "-") && len(word) > 1 {
				batch = batch || strings.Contains(word[1:], "b")
				noFile = noFile || strings.Contains(word[1:], "n")
				continue
			}
			operands = append(operands, w)
		}
		want := 3
		if noFile {
			want = 2
		}
		if !batch || len(operands) < want {
			return cmd
		}
		w := operands[want-1]
		pass := cmd[w[0]:w[1]]
		if mayBeCode(pass) || strings.HasSuffix(strings.Trim(pass, `"'`), Marker) {
			return cmd
		}
		return cmd[:w[0]] + quotedMarker(pass) + cmd[w[1]:]
	})
}

// shellWordSpans finds the words of a command roughly: quoted runs stay
// together.
var shellWordSpans = regexp.MustCompile(`(?:"[^"]*"|'[^']*'|[^\s"'])+`)

// quotedMarker is Marker inside the quotes v had.
func quotedMarker(v string) string {
	if len(v) >= 4 && strings.HasPrefix(v, `\"`) && strings.HasSuffix(v, `\"`) {
		return `\"` + Marker + `\"`
	}
	if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0] {
		return string(v[0]) + Marker + string(v[0])
	}
	return Marker
}

// alreadyRedacted keeps a match whose last group is already a redaction, so
// Redact is idempotent.
func alreadyRedacted(g []string) bool {
	v := strings.Trim(g[len(g)-1], `"'\`)
	return strings.HasSuffix(v, Marker) || v == ""
}

// Secrets returns s with every secret it recognises replaced by [REDACTED]
// (the key name, token prefix or URL user is kept so the approver knows what
// was there). It errs on the side of hiding a literal value, and never hides
// code: a would-be secret holding shell syntax is shown (see mayBeCode), a
// redaction never spans or removes a line break, and a private key block
// hides only its base64 lines. Secrets is idempotent.
func Secrets(s string) string {
	return secrets(s, 0)
}

// maxQuoteDepth bounds how deep quoted texts are redacted on their own: a
// reason that quotes a command that quotes JSON is two.
const maxQuoteDepth = 2

func secrets(s string, depth int) string {
	if strings.Contains(s, "\\\n") || strings.Contains(s, "\\\r\n") {
		if joined, cuts := joinContinuations(s); len(cuts) > 0 {
			return rejoin(joined, secretsText(joined, depth), cuts)
		}
	}
	return secretsText(s, depth)
}

// secretsText is secrets on a text whose continuation lines are joined.
func secretsText(s string, depth int) string {
	s = quotedTexts(s, depth)
	s = kubernetesSecrets(jwkKeys(base64Keys(puttyKeys(privateKeys(s)))))
	s = decodedBlobs(s, depth)
	if strings.Contains(s, ": |") || strings.Contains(s, ": >") {
		s = yamlSecretBlocks(s)
	}
	s = numberedMnemonics(s)
	lower := lowerASCII(s)
	for _, rule := range rules {
		var r string
		switch {
		case rule.hints == nil:
			r = rule.apply(s)
		case rule.wholeText:
			if !containsAny(lower, rule.hints) {
				continue
			}
			r = rule.apply(s)
		default:
			r = rule.applyLines(s, lower)
		}
		if r != s {
			s, lower = r, lowerASCII(r)
		}
	}
	return s
}

// lowerASCII lowers A-Z only, so that an index into the result is one
// into s (strings.ToLower may change a non-ASCII letter's length).
func lowerASCII(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// applyLines applies the rule to each line that holds one of its hints,
// and leaves the other lines alone: a rule's match never spans a line,
// and a regexp on one short line costs a fraction of one over the whole
// text (64 KiB of a file written whole).
func (rule secretRule) applyLines(s, lower string) string {
	return eachLine(s, lower, rule.hints, func(line string) string {
		if rule.pre != nil && !rule.pre(line) {
			return line
		}
		return rule.apply(line)
	})
}

// eachLine rewrites with f each line of s that holds one of hints (lower
// is s lowered by lowerASCII).
func eachLine(s, lower string, hints []string, f func(string) string) string {
	next := make([]int, len(hints)) // next occurrence of each hint at or after pos
	for i, h := range hints {
		next[i] = strings.Index(lower, h)
	}
	var b strings.Builder
	last, pos := 0, 0
	for pos < len(s) {
		at := -1
		for i, h := range hints {
			if next[i] >= 0 && next[i] < pos {
				if j := strings.Index(lower[pos:], h); j >= 0 {
					next[i] = pos + j
				} else {
					next[i] = -1
				}
			}
			if next[i] >= 0 && (at < 0 || next[i] < at) {
				at = next[i]
			}
		}
		if at < 0 {
			break
		}
		start := strings.LastIndexByte(s[:at], '\n') + 1
		end := strings.IndexByte(s[at:], '\n')
		if end < 0 {
			end = len(s)
		} else {
			end += at
		}
		if line := s[start:end]; f(line) != line {
			b.WriteString(s[last:start])
			b.WriteString(f(line))
			last = end
		}
		pos = end + 1
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// tokenRunBefore reports whether some c in l follows a run of at least n
// token characters (letters, digits, _ and -).
func tokenRunBefore(l string, c byte, n int) bool {
	run := 0
	for i := 0; i < len(l); i++ {
		switch {
		case l[i] == c && run >= n:
			return true
		case wordByte(l[i]):
			run++
		default:
			run = 0
		}
	}
	return false
}

// quotedSpan is a double-quoted string with its escapes, or a
// single-quoted one.
var quotedSpan = regexp.MustCompile(`"(?:[^"\\\n]|\\.)*"|'[^'\n]*'`)

// quotedTexts redacts, as a text of its own, a quoted string whose
// escapes or place hide its secrets from the rules: a command the policy
// quoted in its reason ("… matches \"curl -H \\\"Authorization: …\\\"\""),
// JSON inside a shell string, or a command given to bash -c '…' or ssh
// that feeds a password on stdin. A double-quoted string is unquoted as
// Go (and JSON) quote it, redacted, and quoted again; one that does not
// unquote is left to the rules as it is.
func quotedTexts(s string, depth int) string {
	if depth >= maxQuoteDepth || !strings.ContainsAny(s, `"'`) {
		return s
	}
	// A quoted string is on one line; only lines with an escape or a feed
	// are read again.
	return eachLine(s, lowerASCII(s), []string{`\`, "echo", "printf", "<<<"}, func(line string) string {
		return quotedLine(line, depth)
	})
}

func quotedLine(s string, depth int) string {
	return quotedSpan.ReplaceAllStringFunc(s, func(q string) string {
		feeds := strings.Contains(q, "echo") || strings.Contains(q, "printf") || strings.Contains(q, "<<<")
		if q[0] == '\'' {
			if inner := q[1 : len(q)-1]; feeds {
				if r := secrets(inner, depth+1); r != inner {
					return "'" + r + "'"
				}
			}
			return q
		}
		if !feeds && !strings.Contains(q, `\`) {
			return q
		}
		inner, err := strconv.Unquote(q)
		if err != nil {
			return q
		}
		if r := secrets(inner, depth+1); r != inner {
			return strconv.Quote(r)
		}
		return q
	})
}

// mayBeCode reports whether a would-be secret (v, perhaps in quotes) holds
// shell syntax: a quote, whitespace, $, `, ;, |, &, <, >, parentheses or a
// backslash. Then it may be code, not a literal secret (a value that eval,
// bash -c or ssh take apart again), and hiding it would hide from the
// approver what the command does: the model writes the arguments, and could
// dress any command up as a "password". Showing a rare password with a space
// or a ";" is the lesser harm.
func mayBeCode(v string) bool {
	if len(v) >= 4 && strings.HasPrefix(v, `\"`) && strings.HasSuffix(v, `\"`) {
		v = v[2 : len(v)-2]
	}
	if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0] {
		v = v[1 : len(v)-1]
	}
	return strings.ContainsAny(v, "`;|&$<>()'\"\\ \t\n\r\v\f")
}

func containsAny(s string, subs []string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// wordByte reports whether c continues a word a token cannot start inside.
func wordByte(c byte) bool {
	return c == '_' || c == '-' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

func (rule secretRule) apply(s string) string {
	if rule.fn != nil {
		return rule.fn(s)
	}
	return rewriteGroup(s, rule.re.FindAllStringSubmatchIndex(s, -1), 0, func(m []int) (string, bool) {
		groups := matchGroups(s, m)
		// The secret is what follows the kept prefix (group 1), or the
		// whole match.
		secret := groups[0]
		if len(m) > 3 && m[3] >= 0 {
			secret = s[m[3]:m[1]]
		}
		inWord := rule.wordStart && m[0] > 0 && wordByte(s[m[0]-1])
		if inWord || mayBeCode(secret) || (rule.keep != nil && rule.keep(groups)) {
			return "", false
		}
		if rule.repl != "" {
			return string(rule.re.ExpandString(nil, rule.repl, s, m)), true
		}
		// keep the key or flag (group 1) and the value's quotes.
		return groups[1] + quotedMarker(groups[len(groups)-1]), true
	})
}

// pemBegin starts a private key block: PEM (RSA, EC, DSA, OPENSSH,
// ENCRYPTED, PKCS#8) or an OpenPGP armored private key.
// RFC 4716's "---- BEGIN SSH2 ENCRYPTED PRIVATE KEY ----" too.
var pemBegin = regexp.MustCompile(`-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|---- BEGIN SSH2 (?:ENCRYPTED )?PRIVATE KEY ----`)

// privateKeys hides the base64 body of every private key block, line by
// line, and stops at the first line that is not base64: a BEGIN line with
// no END (or followed by anything else) hides nothing that could be a
// command. Line breaks stay where they were.
func privateKeys(s string) string {
	if !strings.Contains(s, "PRIVATE KEY") {
		return s
	}
	return rewriteAfter(s, pemBegin.FindAllStringIndex(s, -1), func(b *strings.Builder, m []int) int {
		return keyBody(b, s, m[1])
	})
}

// isPEMEnd reports whether l starts a key block's END line.
func isPEMEnd(l string) bool {
	return strings.HasPrefix(l, "-----END ") || strings.HasPrefix(l, "---- END ")
}

// keyBody writes the key body that starts at s[p:] (right after a BEGIN
// line's dashes) with its base64 hidden, and returns where it stopped.
func keyBody(b *strings.Builder, s string, p int) int {
	// The rest of the BEGIN line: a key pasted on one line, its lines
	// joined by spaces or by literal \n (JSON, echo -e).
	eol := strings.IndexByte(s[p:], '\n')
	if eol < 0 {
		eol = len(s) - p
	}
	line := s[p : p+eol]
	if rest := strings.TrimRight(line, " \t\r"); rest != "" {
		// Only the key is consumed: another BEGIN later on the line is
		// the next block's.
		shown, used := inlineKey(rest)
		b.WriteString(shown)
		return p + used
	}
	b.WriteString(line)
	p += eol
	seenKey := false
	for p < len(s) {
		// s[p] is the '\n' ending the previous line.
		next := strings.IndexByte(s[p+1:], '\n')
		end := len(s)
		if next >= 0 {
			end = p + 1 + next
		}
		line := s[p+1 : end]
		trimmed := strings.TrimLeft(line, " \t")
		indent := line[:len(line)-len(trimmed)]
		body := strings.TrimRight(trimmed, "\r")
		switch {
		case body == "" && !seenKey,
			!seenKey && armorHeader(body):
			// PGP armor headers and the blank line before the body;
			// shown, not hidden.
		case isPEMEnd(body):
			return p
		default:
			run := base64Run(body)
			nextLine := ""
			if end < len(s) {
				nextLine = strings.TrimLeft(s[end+1:], " \t")
			}
			after := strings.TrimLeft(body[len(run):], " ")
			after = strings.TrimPrefix(after, `\n`)
			short := isPEMEnd(after) || (after == "" && isPEMEnd(nextLine))
			if run == "" || !(keyLike(run) || short) {
				return p
			}
			seenKey = true
			b.WriteByte('\n')
			b.WriteString(indent)
			b.WriteString(Marker)
			b.WriteString(trimmed[len(run):])
			p = end
			if after != "" {
				// Something else follows the key on this line: the block
				// ends here.
				return p
			}
			continue
		}
		b.WriteByte('\n')
		b.WriteString(line)
		p = end
	}
	return p
}

// inlineKey hides the key in the rest of a BEGIN line: base64 words joined
// by spaces or literal \n, up to an END marker or anything else. It returns
// the key's part rewritten and how much of rest that was.
func inlineKey(rest string) (string, int) {
	i := 0
	start, stop := -1, -1
	for i < len(rest) {
		i += keySeparator(rest[i:])
		run := inlineRun(rest[i:])
		if run == "" {
			break
		}
		after := rest[i+len(run):]
		after = after[keySeparator(after):]
		if !keyLike(strings.ReplaceAll(run, `\/`, "/")) && !isPEMEnd(after) {
			break
		}
		if start < 0 {
			start = i
		}
		i += len(run)
		stop = i
	}
	if start < 0 {
		return "", 0
	}
	return rest[:start] + Marker, stop
}

// keySeparator is how much of s separates the lines of a key written on
// one line: spaces and tabs, a carriage return (a key with CR line ends),
// literal \n, \r\n and \r (JSON, echo -e), and the quotes between words
// ('line1' 'line2', as printf's arguments).
func keySeparator(s string) int {
	i := 0
	for i < len(s) {
		switch {
		case s[i] == ' ' || s[i] == '\t' || s[i] == '\r':
			i++
		case strings.HasPrefix(s[i:], `\n`) || strings.HasPrefix(s[i:], `\r`):
			i += 2
		case (s[i] == '\'' || s[i] == '"') && i+1 < len(s) && (s[i+1] == ' ' || s[i+1] == s[i]):
			i++ // ' ' between quoted words
		case (s[i] == '\'' || s[i] == '"') && i > 0 && s[i-1] == ' ':
			i++
		default:
			return i
		}
	}
	return i
}

// inlineRun is the leading run of base64 of a key written on one line,
// where JSON may have escaped each slash (\/).
func inlineRun(s string) string {
	i := 0
	for i < len(s) {
		if strings.HasPrefix(s[i:], `\/`) {
			i += 2
			continue
		}
		if n := len(base64Run(s[i : i+1])); n == 0 {
			break
		}
		i++
	}
	return s[:i]
}

// armorHeader is an OpenPGP armor header line ("Version: GnuPG v2") or a
// PEM encryption header ("Proc-Type: 4,ENCRYPTED").
func armorHeader(l string) bool {
	k, _, ok := strings.Cut(l, ": ")
	if !ok || k == "" {
		return false
	}
	for _, c := range k {
		if !(c == '-' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z') {
			return false
		}
	}
	return true
}

// base64Run is the leading run of base64 characters of s.
func base64Run(s string) string {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '+' || c == '/' || c == '=') {
			return s[:i]
		}
	}
	return s
}

// keyLike is a full-width line of key material: long, with upper and lower
// case letters and digits, as random base64 has and command words and
// paths (/usr/sbin/shutdown) do not.
func keyLike(run string) bool {
	if len(run) < 20 {
		return false
	}
	var upper, lower, digit bool
	for i := 0; i < len(run); i++ {
		c := run[i]
		upper = upper || c >= 'A' && c <= 'Z'
		lower = lower || c >= 'a' && c <= 'z'
		digit = digit || c >= '0' && c <= '9' || c == '+'
	}
	return upper && lower && digit
}
