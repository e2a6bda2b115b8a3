package redact

import (
	"regexp"
	"strings"
)

// keyValueKey is a key and its separator: KEY=, key: , "key":, --key=,
// \"key\": (JSON inside a shell string). The byte before the key is
// checked in Go (keyBoundary), not by the regexp, so a key right after
// another's '=' (--from-literal=password=…) is still found: matches do
// not overlap, and the '=' belongs to the first.
var keyValueKey = regexp.MustCompile(`-{0,2}[A-Za-z0-9_][A-Za-z0-9_.-]*(?:\\?["'])?[ \t]*[:=][ \t]*`)

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
// for the bearer rule, a boolean.
var notSecretValues = set("bearer", "basic", "token", "digest", "ssws", "negotiate",
	"true", "false", "null", "none", "yes", "no")

// keyValues hides the value of every key=value and key: value whose key
// names a secret (see SecretKey; in a query string also ?session=, ?sig=,
// ?code=, see secretParam): environment assignments, --flag=value,
// JSON, YAML, INI and .npmrc lines, URL query strings. Key and value are on
// one line.
func keyValues(s string) string {
	var b strings.Builder
	last := 0
	for _, m := range keyValueKey.FindAllStringIndex(s, -1) {
		start, sepEnd := m[0], m[1]
		if start < last {
			continue
		}
		key := s[start:sepEnd]
		if start > 0 && s[start-1] == '\\' && strings.IndexByte("nrt", key[0]) >= 0 {
			// printf '…\npassword=…': the n belongs to the escape.
			start++
			key = key[1:]
		} else if start > 0 && !keyBoundary(s[start-1]) {
			continue
		}
		if start > 1 && s[start-2:start] == "${" {
			continue // ${PASSWORD:-default} is an expansion, not a value
		}
		name := strings.TrimLeft(key, "-")
		name = name[:strings.IndexAny(name, "\\\"' \t:=")]
		query := start > 0 && strings.IndexByte("?&#", s[start-1]) >= 0
		if query && !secretParam(name) || !query && !SecretKey(name) {
			continue
		}
		v := keyValueValue.FindString(s[sepEnd:])
		if v == "" || alreadyRedacted([]string{v}) || mayBeCode(v) || notSecretValues[strings.ToLower(v)] {
			continue
		}
		b.WriteString(s[last:sepEnd])
		b.WriteString(quotedMarker(v))
		last = sepEnd + len(v)
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}
