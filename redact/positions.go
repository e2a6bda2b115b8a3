package redact

import (
	"regexp"
	"strings"
)

// Secrets given where a command takes them, not under a name: a flag
// whose letter means "password" to that tool only (zip -P, 7z -p, openssl
// enc -k, sqlcmd -P), an operand (rabbitmqctl add_user NAME PASS), the
// text echoed into a command that reads a password on stdin, and the
// password fields of .netrc and .pgpass lines.

// positionRules are the per-tool positions, as argument rules: group 1 is
// the command up to the value, the last group the value.
var positionRules = []secretRule{
	argument("zip-P", `\b(?:zip|unzip|zipcloak)\b[^\n;&|]*?[ \t]-P[ \t]*`, "zip"),
	argument("7z-p", `\b7z[arz]?\b[^\n;&|]*?[ \t]-p`, "7z"),
	argument("openssl-k", `\bopenssl\b[^\n;&|]*?[ \t]-[kK][ \t]+`, "openssl"),
	argument("sqlcmd-P", `\b(?:sqlcmd|bcp|osql)\b[^\n;&|]*?[ \t]-P[ \t]*`, "sqlcmd", "bcp", "osql"),
	argument("ssh-keygen", `\bssh-keygen\b[^\n;&|]*?[ \t]-[NP][ \t]*`, "ssh-keygen"),
	argument("mongo-p", `\bmongo(?:sh|dump|restore|export|import|stat|top)?\b[^\n;&|]*?[ \t]-p[ \t]+`, "mongo"),
	argument("lftp-u", `\blftp\b[^\n;&|]*?[ \t]-u[ \t]+["']?[^\s,"'$]+,`, "lftp"),
	argument("rabbitmqctl", `\brabbitmqctl\b[^\n;&|]*?[ \t](?:add_user|change_password)[ \t]+[^\s;&|]+[ \t]+`, "rabbitmqctl"),
	argument("mysqladmin-password", `\bmysqladmin\b[^\n;&|]*?[ \t]password[ \t]+`, "mysqladmin"),
	func() secretRule {
		// net user NAME PASSWORD (/add); "*" prompts, /delete is a switch.
		r := argument("net-user", `(?i)\bnet[ \t]+user[ \t]+[^\s;&|/]+[ \t]+`, "net")
		r.keep = func(g []string) bool {
			v := g[len(g)-1]
			return v == "*" || strings.HasPrefix(v, "/") || alreadyRedacted(g)
		}
		return r
	}(),
	func() secretRule {
		// git config github.token VALUE, yarn config set npmAuthToken VALUE.
		r := argument("config-set", `\b(?:git|npm|yarn|pnpm|pip|poetry|composer|bundle)\b[^\n;&|]*?[ \t]config(?:[ \t]+(?:set|--global|--local|--system|--add|--replace-all|-g))*[ \t]+([^\s=;&|]+)[ \t]+`, "config")
		r.keep = func(g []string) bool {
			name := g[2]
			if i := strings.LastIndexAny(name, ".:/"); i >= 0 {
				name = name[i+1:]
			}
			return !SecretKey(name) || alreadyRedacted(g)
		}
		return r
	}(),
}

// stdinConsumer is a command that reads a password on its standard input.
// (vault kv put … password=- reads that value there; so does a secret
// made from /dev/stdin, and sshfs -o password_stdin.)
var stdinConsumer = regexp.MustCompile(`--password-stdin|--pass(?:word)?-stdin|--with-token|--passphrase-fd[ \t=]+0\b|-pass(?:in)?[ \t]+stdin|\bsudo\b[^\n;&|]*?[ \t]-[A-Za-z]*S|\bchpasswd\b|\bpasswd\b|\bsmbpasswd\b|\bcryptsetup\b|\bvncpasswd\b|\bkinit\b|\bsecrets?[ \t]+(?:set|create|put|add)\b|\bsecrets[ \t]+versions[ \t]+add\b|\bhtpasswd\b[^\n;&|]*?[ \t]-[a-zA-Z]*i|\bvault\b[^\n;&|]*?=-(?:[ \t]|$)|\bsecret\b[^\n;&|]*?/dev/stdin\b|\bpassword_stdin\b`)

// readSecret is read into a variable whose name says secret (read -r
// DB_PASSWORD <<< …).
var readSecret = regexp.MustCompile(`\bread\b(?:[ \t]+-[A-Za-z]+)*[ \t]+([A-Za-z_][A-Za-z0-9_]*)[ \t]*$`)

// feedsSecret reports whether cmd, a command given a here-string, reads a
// secret from it.
func feedsSecret(cmd string) bool {
	if stdinConsumer.MatchString(cmd) {
		return true
	}
	m := readSecret.FindStringSubmatch(cmd)
	return m != nil && SecretKey(m[1])
}

// stdinFeed is echo or printf with its words, piped into the rest of the
// command line; feedWord is one of those words.
var (
	stdinFeed = regexp.MustCompile(`\b(echo|printf)((?:[ \t]+(?:"[^"\n]*"|'[^'\n]*'|[^\s"'|;&<>()]+))+)[ \t]*\|[ \t]*([^\n;&|]*)`)
	hereStr   = regexp.MustCompile(`(?:^|[\n;&|({])([^\n;&|({]*?)<<<[ \t]*("[^"\n]*"|'[^'\n]*'|[^\s"'|;&<>()]+)`)
	feedWord  = regexp.MustCompile(`"[^"\n]*"|'[^'\n]*'|[^\s"']+`)
)

// fedPasswords hides the words echoed or printf'd into a command that reads
// a password on stdin (… | docker login --password-stdin, | sudo -S, |
// chpasswd, | passwd --stdin), and a here-string given to one (sudo -S id
// <<< pass). A word is hidden piece by piece between literal \n, and a
// piece with shell syntax stays: echo -e 'pw\ncurl …|sh' | sudo -S bash
// runs the second line, and ssh host echo 'x; curl …|sh' | sudo -S runs
// it remotely. A piece without shell syntax is echo's argument however
// the line is read again (eval, ssh), so hiding it hides no code.
func fedPasswords(s string) string {
	s = replaceGroup(s, stdinFeed, 2, func(m []string) bool { return stdinConsumer.MatchString(m[3]) }, func(words string, m []string) string {
		return hideFedWords(words, m[1], strings.Contains(m[3], "chpasswd"))
	})
	return replaceGroup(s, hereStr, 2, func(m []string) bool { return feedsSecret(m[1]) }, func(word string, m []string) string {
		return hideFed(word, strings.Contains(m[1], "chpasswd"))
	})
}

// hideFedWords hides the words echo or printf (cmd) is given, but for
// echo's flags and printf's format.
func hideFedWords(words, cmd string, chpasswd bool) string {
	spans := feedWord.FindAllStringIndex(words, -1)
	var args [][]int
	for i, w := range spans {
		word := words[w[0]:w[1]]
		if len(args) == 0 && strings.HasPrefix(word, "-") && strings.Trim(word, "-neE") == "" {
			continue // echo -n, -e
		}
		if i == 0 && cmd == "printf" && len(spans) > 1 && strings.Contains(word, "%") {
			continue // printf's format
		}
		args = append(args, w)
	}
	var b strings.Builder
	last := 0
	for _, w := range args {
		b.WriteString(words[last:w[0]])
		b.WriteString(hideFed(words[w[0]:w[1]], chpasswd))
		last = w[1]
	}
	b.WriteString(words[last:])
	return b.String()
}

// heredocStart is a here-document's operator and delimiter.
var heredocStart = regexp.MustCompile(`<<-?[ \t]*(?:'([A-Za-z0-9_]+)'|"([A-Za-z0-9_]+)"|([A-Za-z0-9_]+))`)

// fedHeredocs hides the lines of a here-document given to a command that
// reads a password on stdin (docker login --password-stdin <<EOF): each
// line that is one word without shell syntax. A line with more is shown.
func fedHeredocs(s string) string {
	lines := strings.Split(s, "\n")
	changed := false
	for i := 0; i < len(lines); i++ {
		// One here-document on the line (not a here-string): with more,
		// which body is whose is not read here, and nothing is hidden.
		var m []int
		n := 0
		for _, h := range heredocStart.FindAllStringSubmatchIndex(lines[i], -1) {
			if (h[0] == 0 || lines[i][h[0]-1] != '<') && !strings.HasPrefix(lines[i][h[0]:], "<<<") {
				m, n = h, n+1
			}
		}
		if n != 1 {
			continue
		}
		cmd := lines[i][strings.LastIndexAny(lines[i][:m[0]], ";&|(")+1 : m[0]]
		if !feedsSecret(cmd) && !stdinConsumer.MatchString(lines[i]) {
			continue
		}
		delim := ""
		for g := 2; g <= 6; g += 2 {
			if m[g] >= 0 {
				delim = lines[i][m[g]:m[g+1]]
			}
		}
		for i+1 < len(lines) {
			i++
			l := strings.TrimRight(lines[i], "\r")
			body := strings.TrimLeft(l, " \t")
			if body == delim {
				break
			}
			if body == "" || mayBeCode(body) || strings.HasSuffix(body, Marker) {
				continue
			}
			lines[i] = lines[i][:len(l)-len(body)] + Marker + lines[i][len(l):]
			changed = true
		}
	}
	if !changed {
		return s
	}
	return strings.Join(lines, "\n")
}

// hideFed hides one fed word, keeping its quotes, the literal \n between
// lines and, for chpasswd, the user before the colon.
func hideFed(word string, chpasswd bool) string {
	q := ""
	if len(word) >= 2 && (word[0] == '"' || word[0] == '\'') && word[len(word)-1] == word[0] {
		q, word = word[:1], word[1:len(word)-1]
	}
	if strings.ContainsAny(word, "$`") {
		return q + word + q // an expansion: code, shown
	}
	pieces := strings.Split(word, `\n`)
	for i, p := range pieces {
		if p == "" || mayBeCode(p) || strings.HasSuffix(p, Marker) {
			continue
		}
		if user, _, ok := strings.Cut(p, ":"); chpasswd && ok {
			pieces[i] = user + ":" + Marker
			continue
		}
		pieces[i] = Marker
	}
	return q + strings.Join(pieces, `\n`) + q
}

// replaceGroup rewrites group g of every match of re for which ok holds.
func replaceGroup(s string, re *regexp.Regexp, g int, ok func([]string) bool, rewrite func(string, []string) string) string {
	return rewriteGroup(s, re.FindAllStringSubmatchIndex(s, -1), g, func(m []int) (string, bool) {
		groups := matchGroups(s, m)
		if !ok(groups) {
			return "", false
		}
		return rewrite(groups[g], groups), true
	})
}

// matchGroups is the text of each group of the match m of s (as
// FindAllStringSubmatchIndex gives it), "" for a group that took no part.
func matchGroups(s string, m []int) []string {
	groups := make([]string, len(m)/2)
	for i := range groups {
		if m[2*i] >= 0 {
			groups[i] = s[m[2*i]:m[2*i+1]]
		}
	}
	return groups
}

// rewriteGroup rebuilds s with group g of each match in idx (in order, as
// FindAllStringSubmatchIndex gives them) replaced by what rewrite returns
// for the match; a group that took no part, or a false from rewrite, leaves
// the match as it is. Nothing rewritten, s itself comes back. The rules
// that replace a span in place share it, so none of them can slip on the
// offsets.
func rewriteGroup(s string, idx [][]int, g int, rewrite func(m []int) (string, bool)) string {
	var b strings.Builder
	last, changed := 0, false
	for _, m := range idx {
		if m[2*g] < 0 {
			continue
		}
		with, ok := rewrite(m)
		if !ok {
			continue
		}
		b.WriteString(s[last:m[2*g]])
		b.WriteString(with)
		last, changed = m[2*g+1], true
	}
	if !changed {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// rewriteAfter rebuilds s around the matches in idx (in order, as
// FindAll…Index gives them): each match stays as it is, and what follows
// it is written to b by rest, which returns where in s the part it wrote
// ends. A match that starts inside a part already written is passed over.
// It serves the rules where a match (a command, a header, a BEGIN line)
// only says where the secret text after it starts.
func rewriteAfter(s string, idx [][]int, rest func(b *strings.Builder, m []int) (end int)) string {
	if len(idx) == 0 {
		return s
	}
	var b strings.Builder
	last := 0
	for _, m := range idx {
		if m[0] < last {
			continue
		}
		b.WriteString(s[last:m[1]])
		last = rest(&b, m)
	}
	b.WriteString(s[last:])
	return b.String()
}

// netrcPassword is a .netrc password field; netrc hides it only in text
// that has the file's other words (machine, login).
var netrcPassword = regexp.MustCompile(`(\b(?:password|passwd)[ \t]+)([^\s"'&;|<>()$` + "`" + `]+)`)

func netrc(s string) string {
	if !strings.Contains(s, "machine") || !strings.Contains(s, "login") {
		return s
	}
	return eachLine(s, lowerASCII(s), []string{"password", "passwd"}, func(line string) string {
		return replaceGroup(line, netrcPassword, 2, func(m []string) bool {
			return !alreadyRedacted(m) && !mayBeCode(m[2])
		}, func(string, []string) string { return Marker })
	})
}

// pgpassLine is a .pgpass line, hostname:port:database:username:password,
// the port a number or *.
var pgpassLine = regexp.MustCompile(`(?:^|[\s'"=])[A-Za-z0-9.*_-]+:(?:[0-9]{1,5}|\*):[^\s:'"]+:[^\s:'"]+:([^\s'"]+)`)

func pgpass(s string) string {
	if strings.Count(s, ":") < 4 {
		return s
	}
	// A .pgpass line has no space or quote in it: the regexp runs on each
	// such run of text that has four colons, not on a whole (long) line.
	var b strings.Builder
	last := 0
	for start := 0; start < len(s); {
		end := start + strings.IndexAny(s[start:], " \t\r\n'\"")
		if end < start {
			end = len(s)
		}
		if tok := s[start:end]; strings.Count(tok, ":") >= 4 {
			from := max(start-1, 0) // the regexp wants the separator before the host
			if r := replaceGroup(s[from:end], pgpassLine, 1, func(m []string) bool {
				return !alreadyRedacted(m) && !mayBeCode(m[1])
			}, func(string, []string) string { return Marker }); r != s[from:end] {
				b.WriteString(s[last:from])
				b.WriteString(r)
				last = end
			}
		}
		start = end + 1
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// Markup that names a secret and then gives it: <password>…</password>
// (Maven's settings.xml), NuGet's <add key="ClearTextPassword" value="…"/>,
// PHP's define('DB_PASSWORD', '…').
var (
	xmlElement = regexp.MustCompile(`<([A-Za-z][A-Za-z0-9_.:-]*)>([^<>\n]+)</([A-Za-z][A-Za-z0-9_.:-]*)>`)
	xmlAddKey  = regexp.MustCompile(`(?i)<add[ \t]+key="([^"\n]*)"[ \t]+value="([^"\n]*)"`)
	phpDefine  = regexp.MustCompile(`(?i)\bdefine\([ \t]*["']([A-Za-z0-9_]+)["'][ \t]*,[ \t]*("[^"\n]*"|'[^'\n]*')`)
)

func markup(s string) string {
	hide := func(string, []string) string { return Marker }
	literal := func(v string) bool { return v != "" && !alreadyRedacted([]string{v}) && !mayBeCode(v) }
	s = replaceGroup(s, xmlElement, 2, func(m []string) bool {
		name := m[1][strings.LastIndexByte(m[1], ':')+1:]
		return m[1] == m[3] && SecretKey(name) && literal(m[2])
	}, hide)
	s = replaceGroup(s, xmlAddKey, 2, func(m []string) bool { return SecretKey(m[1]) && literal(m[2]) }, hide)
	return replaceGroup(s, phpDefine, 2, func(m []string) bool { return SecretKey(m[1]) && literal(m[2]) },
		func(v string, _ []string) string { return quotedMarker(v) })
}

// cookieStart starts a cookie list: a Cookie or Set-Cookie header, or
// curl's -b/--cookie.
var cookieStart = regexp.MustCompile(`(?i)\b((set-)?cookie[ \t]*:[ \t]*)|\bcurl\b[^\n;&|]*?[ \t](?:-b|--cookie)(?:[ \t]+|=)`)

// cookies hides every cookie's value in a Cookie header or curl -b (any of
// them may be the session), and the cookie's own value in Set-Cookie (its
// attributes, Path=/ and the like, stay). A -b that names a file stays.
func cookies(s string) string {
	return rewriteAfter(s, cookieStart.FindAllStringSubmatchIndex(s, -1), func(b *strings.Builder, m []int) int {
		header, set := m[2] >= 0, m[4] >= 0
		p := m[1]
		// the list ends at its quote, or (unquoted) at the end of the line,
		// or for -b at a space.
		end := strings.IndexByte(s[p:], '\n')
		if end < 0 {
			end = len(s)
		} else {
			end += p
		}
		if p < len(s) && (s[p] == '"' || s[p] == '\'') {
			p++
			if q := strings.IndexByte(s[p:end], s[p-1]); q >= 0 {
				end = p + q
			}
		} else if !header {
			if sp := strings.IndexAny(s[p:end], " \t"); sp >= 0 {
				end = p + sp
			}
		} else if q := headerEnd(s[p:end]); q >= 0 {
			end = p + q // Cookie: … inside curl -H '…', or before ; the next command
		}
		b.WriteString(s[m[1]:p])
		b.WriteString(cookieList(s[p:end], set))
		return end
	})
}

// cookieName reports whether n is a cookie's name (an HTTP token).
func cookieName(n string) bool {
	if n == "" {
		return false
	}
	for i := 0; i < len(n); i++ {
		if c := n[i]; !(wordByte(c) || strings.IndexByte("!#%*+.^|~", c) >= 0) {
			return false
		}
	}
	return true
}

// headerEnd is where an unquoted header value ends before the line does:
// at a quote (the header was inside curl -H '…') or at shell syntax that
// no cookie holds (" ;", |, &, <, >); -1 if it runs to the line's end.
func headerEnd(v string) int {
	end := strings.IndexAny(v, "\"'|&<>")
	if i := strings.Index(v, " ;"); i >= 0 && (end < 0 || i < end) {
		end = i
	}
	return end
}

// cookieList hides the values of name=value pairs separated by ";"; only
// the first when first is set (Set-Cookie).
func cookieList(list string, first bool) string {
	pairs := strings.Split(list, ";")
	for i, p := range pairs {
		if first && i > 0 {
			break
		}
		name, v, ok := strings.Cut(p, "=")
		if !ok || !cookieName(strings.TrimLeft(name, " \t")) || v == "" || mayBeCode(v) || strings.HasSuffix(v, Marker) {
			continue
		}
		pairs[i] = name + "=" + Marker
	}
	return strings.Join(pairs, ";")
}
