package redact

import (
	"regexp"
	"strings"
)

// keyValueValue is the value after a key, anchored at its start: one that
// an earlier rule already redacted (ghp_[REDACTED]), a quoted string on one
// line (also with \" quotes), or a run of characters none of which is
// shell syntax. A literal \n, \r or \t (printf, echo -e) ends it.
var keyValueValue = regexp.MustCompile(`^(?:[^\s"'&;|<>()\[` + "`" + `,}\]]*\[REDACTED\]|\\"(?:[^"\\\n]|\\[^"\n])*\\"|"(?:[^"\\\n]|\\.)*"|'[^'\n]*'|(?:[^\s"'&;|<>()$` + "`" + `,}\]\\]|\\[^nrt\s])+)`)

// keyBoundary reports whether a key may start right after c: a key
// starts a word, a query parameter, a JSON member, a list item.
func keyBoundary(c byte) bool {
	return strings.IndexByte(" \t\n\r\v\f?&;,{([/\"':=#|", c) >= 0
}

// notSecretValues are values that say how, not what: an HTTP scheme left
// for the bearer rule, a boolean, stdin.
var notSecretValues = set("bearer", "basic", "token", "digest", "ssws", "negotiate",
	"true", "false", "null", "none", "yes", "no",
	// "read it from stdin" (vault kv put … password=-)
	"-")

// keyValues hides the value of every key=value and key: value whose key
// names a secret (see SecretKey; in a query string also ?session=, ?sig=,
// ?code=, see secretParam): environment assignments, --flag=value,
// JSON, YAML, INI and .npmrc lines, URL query strings. Key and value are on
// one line.
func keyValues(s string) string {
	var b strings.Builder
	last := 0
	for i := 0; i < len(s); i++ {
		if s[i] != ':' && s[i] != '=' {
			continue
		}
		// Walk back from the separator: := ?= += != (Go, make), spaces, a
		// closing quote (\" in a shell string), the key.
		ke := i
		if s[i] == '=' && ke > 0 && strings.IndexByte(":?+!", s[ke-1]) >= 0 {
			ke--
		}
		for ke > 0 && (s[ke-1] == ' ' || s[ke-1] == '\t') {
			ke--
		}
		if ke > 0 && (s[ke-1] == '"' || s[ke-1] == '\'') {
			ke--
			if ke > 0 && s[ke-1] == '\\' {
				ke--
			}
		}
		ks := ke
		for ks > 0 && keyByte(s[ks-1]) {
			ks--
		}
		if ks == ke || ks < last {
			continue
		}
		if ks > 0 && s[ks-1] == '\\' && strings.IndexByte("nrt", s[ks]) >= 0 {
			ks++ // printf '…\npassword=…': the n belongs to the escape
		} else if ks > 0 && !keyBoundary(s[ks-1]) {
			continue
		}
		if ks > 1 && s[ks-2:ks] == "${" {
			continue // ${PASSWORD:-default} is an expansion, not a value
		}
		name := strings.TrimLeft(s[ks:ke], "-")
		query := ks > 0 && strings.IndexByte("?&#", s[ks-1]) >= 0
		if name == "" || query && !secretParam(name) || !query && !SecretKey(name) {
			continue
		}
		vs := i + 1
		if s[i] == '=' && vs < len(s) && s[vs] == '>' {
			vs++ // 'password' => '…' (Ruby, PHP)
		} else if s[i] == ':' && vs < len(s) && s[vs] == '=' {
			continue // := is found at its =
		}
		for vs < len(s) && (s[vs] == ' ' || s[vs] == '\t') {
			vs++
		}
		v := keyValueValue.FindString(s[vs:])
		if v == "" || alreadyRedacted([]string{v}) || mayBeCode(v) || notSecretValues[strings.ToLower(v)] || strings.HasPrefix(v, "/dev/") {
			continue
		}
		b.WriteString(s[last:vs])
		b.WriteString(quotedMarker(v))
		last = vs + len(v)
		i = last - 1
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// keyByte reports whether c may be part of a key name.
func keyByte(c byte) bool {
	return wordByte(c) || c == '.'
}
