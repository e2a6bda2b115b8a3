package redact

import (
	"regexp"
	"strings"
)

// Secrets the cloud and package CLIs take where their flags or operands
// say so, not under a secret's name: gh secret set --body, a vault kv
// put's every value, tccli's and rclone's key-value pairs, ossutil's -k,
// mc alias set's secret key, a login's token operand; the places a
// connection string keeps its password (Oracle's user/password@, Go's
// user:password@tcp(), ODBC's PWD={…}); a name beside its value (a
// Kubernetes env entry, an ECS variable, an SSM SecureString).

// cliRules run with the position rules: group 1 is the command up to the
// value, the last group the value.
var cliRules = []secretRule{
	argument("gh-secret-body", `\bgh[ \t]+secret[ \t]+set\b[^\n;&|]*?[ \t](?:--body|-b)(?:[ \t]+|=)?`, "gh"),
	func() secretRule {
		// glab variable set NAME VALUE, when NAME says secret.
		r := argument("glab-variable", `\bglab[ \t]+variable[ \t]+(?:set|update)[ \t]+(?:-[^\s]+[ \t]+)*([A-Za-z_][A-Za-z0-9_]*)[ \t]+`, "glab")
		r.keep = func(g []string) bool { return !SecretKey(g[2]) || alreadyRedacted(g) }
		return r
	}(),
	argument("coscmd-s", `\bcoscmd\b[^\n;&|]*?[ \t]-s[ \t]+`, "coscmd"),
	argument("ossutil-k", `\b(?:ossutil(?:64)?|obsutil)\b[^\n;&|]*?[ \t]-k(?:[ \t]+|=)`, "ossutil", "obsutil"),
	argument("az-keyvault-value", `\baz[ \t]+keyvault[ \t]+secret[ \t]+set\b[^\n;&|]*?[ \t]--value(?:[ \t]+|=)`, "keyvault"),
	argument("ssm-put-parameter", `\bssm[ \t]+put-parameter\b[^\n;&|]*?[ \t]--value(?:[ \t]+|=)`, "put-parameter"),
	argument("mc-alias", `\bmc[ \t]+(?:alias[ \t]+set|config[ \t]+host[ \t]+add)[ \t]+[^\s;&|]+[ \t]+[^\s;&|]+[ \t]+[^\s;&|]+[ \t]+`, "mc"),
	argument("poetry-token", `\bpoetry[ \t]+config[ \t]+(?:--[a-z-]+[ \t]+)*pypi-token\.[^\s;&|]+[ \t]+`, "poetry"),
	argument("poetry-http-basic", `\bpoetry[ \t]+config[ \t]+(?:--[a-z-]+[ \t]+)*http-basic\.[^\s;&|]+[ \t]+[^\s;&|-][^\s;&|]*[ \t]+`, "poetry"),
	argument("twine-p", `\btwine\b[^\n;&|]*?[ \t]-p[ \t]+`, "twine"),
	func() secretRule {
		// unrar x -pSECRET; -p- means no password.
		r := argument("rar-p", `\b(?:unrar|rar)\b[^\n;&|]*?[ \t]-p`, "unrar", "rar ")
		r.keep = func(g []string) bool { return g[len(g)-1] == "-" || alreadyRedacted(g) }
		return r
	}(),
	argument("httpie-auth", `\b(?:http|https|xh|xhs)\b[^\n;&|]*?[ \t](?:-a|--auth)(?:[ \t]+|=)["']?[^\s:"'$]+:`, " -a", "--auth"),
	func() secretRule {
		// vault login TOKEN, cargo login TOKEN: the operand is the token
		// (vault login -method=userpass … is not).
		r := argument("login-token", `\b(?:vault|cargo)[ \t]+login[ \t]+`, "login")
		r.keep = func(g []string) bool {
			v := strings.Trim(g[len(g)-1], `"'`)
			return strings.HasPrefix(v, "-") || strings.Contains(v, "=") || alreadyRedacted(g)
		}
		return r
	}(),
	{name: "odbc-braces", hints: []string{"pwd", "password"}, fn: bracedPasswords},
	{name: "oracle-userpass", hints: []string{"sqlplus", "sqlldr", "expdp", "impdp", "rman ", "dgmgrl", "jdbc:oracle:"}, fn: oracleUserPass},
	{name: "go-mysql-dsn", hints: []string{"@tcp(", "@unix(", "@udp("}, fn: goDSN},
	{
		// https://TOKEN@host: a token as the URL's user (Azure DevOps and
		// GitHub PATs), long and random, no password after it.
		name:  "url-token-user",
		hints: []string{"://"},
		pre:   func(l string) bool { return strings.IndexByte(l, '@') >= 0 },
		re:    regexp.MustCompile(`(?i)(\b(?:https?|git|ssh|ftps?)://)([A-Za-z0-9_-]{20,})@`),
		repl:  `${1}` + Marker + `@`,
		keep:  func(g []string) bool { return !tokenLike(g[2]) },
	},
}

// tokenLike is a run with both letters and digits, as a random token has
// and a user name rarely does.
func tokenLike(s string) bool {
	return strings.ContainsAny(s, "0123456789") && strings.ContainsAny(strings.ToLower(s), "abcdefghijklmnopqrstuvwxyz")
}

// storeCommand starts a command that stores every key=value (or key
// value) it is given as a secret: vault kv put, fly/doppler secrets set,
// kubectl create secret --from-literal, and the key-value pairs of
// tccli's and aws' configure set and rclone's config create, whose values
// are secret when the key says so.
var storeCommand = regexp.MustCompile(`\bvault[ \t]+kv[ \t]+(?:put|patch)\b|\b(?:fly|flyctl|doppler)[ \t]+secrets[ \t]+set\b|\bkubectl\b[^\n;&|]*?[ \t]create[ \t]+secret\b|\bconfigure[ \t]+set\b|\brclone[ \t]+config[ \t]+(?:create[ \t]+[^\s;&|]+[ \t]+[^\s;&|]+|update[ \t]+[^\s;&|]+)`)

// storedValues hides what the store commands of s store.
func storedValues(s string) string {
	return rewriteAfter(s, storeCommand.FindAllStringIndex(s, -1), func(b *strings.Builder, m []int) int {
		end := m[1] + strings.IndexAny(s[m[1]:], "\n;&|")
		if end < m[1] {
			end = len(s)
		}
		cmd := s[m[0]:m[1]]
		pairs := strings.HasPrefix(cmd, "configure") || strings.HasPrefix(cmd, "rclone")
		b.WriteString(storedWords(s[m[1]:end], pairs, strings.HasPrefix(cmd, "kubectl")))
		return end
	})
}

// storedWords hides the values in the words after a store command: each
// key=value's value (for kubectl only --from-literal's), or with pairs
// each "key value" whose key says secret. A value that reads from stdin
// (-) or a file (@path) stays, as does one with shell syntax.
func storedWords(rest string, pairs, kubectl bool) string {
	spans := shellWordSpans.FindAllStringIndex(rest, -1)
	var b strings.Builder
	last := 0
	hide := func(from, to int) {
		v := rest[from:to]
		if v == "" || v == "-" || strings.HasPrefix(v, "@") || mayBeCode(v) || alreadyRedacted([]string{v}) || notSecretValues[strings.ToLower(v)] {
			return
		}
		b.WriteString(rest[last:from])
		b.WriteString(quotedMarker(v))
		last = to
	}
	for i := 0; i < len(spans); i++ {
		w := rest[spans[i][0]:spans[i][1]]
		if pairs {
			if strings.HasPrefix(w, "-") {
				if !strings.Contains(w, "=") {
					i++ // a flag and its value
				}
				continue
			}
			key := w[strings.LastIndexAny(w, ".:/")+1:]
			if !strings.Contains(w, "=") && i+1 < len(spans) && SecretKey(key) {
				hide(spans[i+1][0], spans[i+1][1])
				i++
			}
			continue
		}
		if kubectl {
			if k, _, ok := strings.Cut(w, "="); !ok || k != "--from-literal" {
				if w == "--from-literal" && i+1 < len(spans) {
					i++
					w2 := rest[spans[i][0]:spans[i][1]]
					if eq := strings.IndexByte(w2, '='); eq > 0 {
						hide(spans[i][0]+eq+1, spans[i][1])
					}
				}
				continue
			}
			w = strings.TrimPrefix(w, "--from-literal=")
			if eq := strings.IndexByte(w, '='); eq > 0 {
				hide(spans[i][1]-len(w)+eq+1, spans[i][1])
			}
			continue
		}
		if strings.HasPrefix(w, "-") {
			continue
		}
		if eq := strings.IndexByte(w, '='); eq > 0 && keyName(w[:eq]) {
			hide(spans[i][0]+eq+1, spans[i][1])
		}
	}
	if last == 0 {
		return rest
	}
	b.WriteString(rest[last:])
	return b.String()
}

// keyName reports whether k could name a key (letters, digits, _ . -).
func keyName(k string) bool {
	for i := 0; i < len(k); i++ {
		if !keyByte(k[i]) {
			return false
		}
	}
	return k != ""
}

// Names beside their values: a Kubernetes or Compose env entry
// (- name: DB_PASSWORD / value: …), an ECS or CloudFormation variable
// ({"name":"STRIPE_SECRET","value":"…"}), an SSM parameter of type
// SecureString.
var (
	yamlName   = regexp.MustCompile(`^[ \t]*(?:-[ \t]+)?["']?(?i:name|key)["']?[ \t]*:[ \t]*["']?([A-Za-z0-9_./:-]+)["']?[ \t]*\r?$`)
	yamlValue  = regexp.MustCompile(`^([ \t]*(?:-[ \t]+)?["']?(?i:value)["']?[ \t]*:[ \t]*)(\S.*?)[ \t]*\r?$`)
	jsonNameV  = regexp.MustCompile(`"(?i:name|key|keyname|type)"[ \t]*:[ \t]*"([^"\n]*)"[^{}\n]*?"(?i:value)"[ \t]*:[ \t]*("(?:[^"\\\n]|\\.)*")`)
	jsonVNameT = regexp.MustCompile(`"(?i:value)"[ \t]*:[ \t]*("(?:[^"\\\n]|\\.)*")[^{}\n]*?"(?i:name|key|keyname|type)"[ \t]*:[ \t]*"([^"\n]*)"`)
)

// namesASecret reports whether a name/key/type member's text says the
// value beside it is a secret: the name's last part says so, or the type
// is SecureString.
func namesASecret(n string) bool {
	if strings.EqualFold(n, "SecureString") {
		return true
	}
	return SecretKey(n[strings.LastIndexAny(n, "/:.")+1:]) || SecretKey(n)
}

func namedValues(s string) string {
	if strings.Contains(s, "alue") {
		s = yamlNamedValues(s)
		hide := func(v string, _ []string) string { return quotedMarker(v) }
		secure := func(m []string) bool { return strings.Contains(m[0], `"SecureString"`) }
		s = replaceGroup(s, jsonNameV, 2, func(m []string) bool { return (namesASecret(m[1]) || secure(m)) && literalValue(m[2]) }, hide)
		s = replaceGroup(s, jsonVNameT, 1, func(m []string) bool { return (namesASecret(m[2]) || secure(m)) && literalValue(m[1]) }, hide)
	}
	return s
}

// literalValue is a quoted value to hide: not code, not done already.
func literalValue(v string) bool {
	return len(v) > 2 && !mayBeCode(strings.Trim(v, `"`)) && !alreadyRedacted([]string{v})
}

// yamlNamedValues hides a value: line that follows (within two lines) a
// name: line naming a secret.
func yamlNamedValues(s string) string {
	lines := strings.Split(s, "\n")
	changed := false
	for i := 0; i < len(lines); i++ {
		m := yamlName.FindStringSubmatch(lines[i])
		if m == nil || !namesASecret(m[1]) {
			continue
		}
		for j := i + 1; j < len(lines) && j <= i+2; j++ {
			v := yamlValue.FindStringSubmatchIndex(lines[j])
			if v == nil {
				continue
			}
			val := lines[j][v[4]:v[5]]
			if mayBeCode(val) && !(len(val) > 1 && (val[0] == '"' || val[0] == '\'')) || alreadyRedacted([]string{val}) || strings.HasPrefix(val, "|") || strings.HasPrefix(val, ">") {
				break
			}
			if q := strings.Trim(val, `"'`); mayBeCode(q) {
				break
			}
			lines[j] = lines[j][:v[4]] + quotedMarker(val) + lines[j][v[5]:]
			changed = true
			break
		}
	}
	if !changed {
		return s
	}
	return strings.Join(lines, "\n")
}

// echoInto is echo or printf writing its words into a file (> path,
// >> path, | tee path).
var echoInto = regexp.MustCompile(`\b(echo|printf)((?:[ \t]+(?:"[^"\n]*"|'[^'\n]*'|[^\s"'|;&<>()]+))+?)[ \t]*(?:>>?|\|[ \t]*(?:sudo[ \t]+)?tee(?:[ \t]+-a)?)[ \t]*("[^"\n]*"|'[^'\n]*'|[^\s;&|<>()]+)`)

// echoedCredentials hides the words echoed into a file whose content is a
// credential (echo TOKEN > ~/.vault-token, printf %s KEY >
// config/master.key), as fed passwords are hidden.
func echoedCredentials(s string) string {
	if !strings.Contains(s, ">") && !strings.Contains(s, "tee") {
		return s
	}
	// A multi-line printf ('[default]\naws_secret_access_key = …') is the
	// file's text, which the rules keyed on names read; a bare value is
	// the file's one secret.
	return replaceGroup(s, echoInto, 2, func(m []string) bool {
		return credentialPath(m[3]) && !strings.Contains(m[2], `\n`) && !strings.Contains(m[2], "[")
	}, func(words string, m []string) string {
		return hideFedWords(words, m[1], false)
	})
}

// Passwords in connection strings' own syntax.
var (
	// ODBC and ADO.NET put a password with ; in it in braces.
	odbcBraces = regexp.MustCompile(`(?i)\b(?:pwd|password)[ \t]*=[ \t]*\{([^}\n]*)\}`)
	// sqlplus scott/tiger@db, expdp system/pw, rman target sys/pw@db,
	// jdbc:oracle:thin:scott/tiger@host.
	oracleLogin = regexp.MustCompile(`(?i)(?:\b(?:sqlplus|sqlldr|expdp|impdp|dgmgrl)\b(?:[ \t]+-[A-Za-z]+)*|\brman[ \t]+(?:target|catalog|auxiliary)|jdbc:oracle:(?:thin|oci):)[ \t]*["']?[A-Za-z0-9_$#]+/([^\s@"'/;|&]+)`)
	// Go's MySQL DSN: user:password@tcp(host:3306)/db.
	goMySQLDSN = regexp.MustCompile(`(?:^|[\s"'=])[A-Za-z0-9_.-]+:([^\s@"'/]+)@(?:tcp|unix|udp)\(`)
)

func hideMarker(string, []string) string { return Marker }

// bracedPasswords hides PWD={…}'s braces' content. A ; there is the
// password's, not the shell's, only inside a quoted string: unquoted it
// ends a command, and the brace's content stays shown.
func bracedPasswords(s string) string {
	return eachLine(s, lowerASCII(s), []string{"={"}, func(line string) string {
		return rewriteGroup(line, odbcBraces.FindAllStringSubmatchIndex(line, -1), 1, func(m []int) (string, bool) {
			v := line[m[2]:m[3]]
			quoted := strings.Count(line[:m[0]], `"`)%2 == 1 || strings.Count(line[:m[0]], "'")%2 == 1
			if v == "" || v == Marker || mayBeCode(strings.ReplaceAll(v, ";", "")) || strings.Contains(v, ";") && !quoted {
				return "", false
			}
			return Marker, true
		})
	})
}

func oracleUserPass(s string) string {
	return replaceGroup(s, oracleLogin, 1, func(m []string) bool { return !alreadyRedacted(m) && !mayBeCode(m[1]) }, hideMarker)
}

func goDSN(s string) string {
	return replaceGroup(s, goMySQLDSN, 1, func(m []string) bool { return !alreadyRedacted(m) && !mayBeCode(m[1]) }, hideMarker)
}
