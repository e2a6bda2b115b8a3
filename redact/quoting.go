package redact

import (
	"sort"
	"strconv"
	"strings"
)

// A text that quotes part of a command out of its context — a policy's
// reason quoting one command of a pipeline ("echo X" without its
// "| docker login --password-stdin", "printf %s X" without its
// "> ~/.vault-token") — no longer says the part is a secret, so Secrets on
// the text alone shows it. Hidden lists what Secrets hid in the command,
// and Quoting hides those strings wherever the text quotes them.

// minHidden is the shortest hidden string Quoting looks for: a shorter
// one would hide ordinary words.
const minHidden = 4

// Hidden returns the strings Secrets hid in source, given red, the
// Secrets of source (so a caller that redacts source anyway pays nothing
// more): the text between what the redaction kept.
func Hidden(source, red string) []string {
	if source == red || !strings.Contains(red, Marker) {
		return nil
	}
	pieces := strings.Split(red, Marker)
	if !strings.HasPrefix(source, pieces[0]) {
		return nil
	}
	var out []string
	pos := len(pieces[0])
	for k := 1; k < len(pieces); k++ {
		p := pieces[k]
		var at int
		if k == len(pieces)-1 {
			at = len(source) - len(p)
			if at < pos || source[at:] != p {
				return out
			}
		} else if at = strings.Index(source[min(pos+1, len(source)):], p); at < 0 {
			return out
		} else {
			at += min(pos+1, len(source))
		}
		for _, line := range strings.Split(source[pos:at], "\n") {
			if h := strings.TrimSpace(line); len(h) >= minHidden && h != Marker {
				out = append(out, h)
			}
		}
		pos = at + len(p)
	}
	return out
}

// Quoting returns Secrets of text with every one of hidden (see Hidden)
// hidden wherever text holds it, raw or as Go and JSON quote it (%q),
// where it stands as a word of its own or a whole token. The rules read
// the text first, whole: hiding the hidden strings first could leave a
// piece too short to be one of them that the rules no longer know (the
// one short word of a recovery phrase whose other words are gone).
func Quoting(text string, hidden []string) string {
	text = Secrets(text)
	if len(hidden) > 0 {
		forms := make([]string, 0, 2*len(hidden))
		for _, h := range hidden {
			forms = append(forms, h)
			if q := strings.Trim(strconv.Quote(h), `"`); q != h {
				forms = append(forms, q)
			}
		}
		sort.Slice(forms, func(i, j int) bool { return len(forms[i]) > len(forms[j]) })
		for _, h := range forms {
			text = replaceToken(text, h)
		}
		text = clippedHidden(text, forms)
	}
	return text
}

// ellipsis ends a quote cut short (the policy clips what it quotes).
const ellipsis = "…"

// clippedHidden hides the start of a hidden string that text quotes cut
// short, right before an ellipsis: too little is left of it for the rules
// to know it (a Firebase key of 150 characters clipped to 60).
func clippedHidden(text string, forms []string) string {
	if !strings.Contains(text, ellipsis) {
		return text
	}
	var b strings.Builder
	last := 0
	for i := 0; i < len(text); {
		j := strings.Index(text[i:], ellipsis)
		if j < 0 {
			break
		}
		at := i + j
		cut := 0
		for _, h := range forms {
			for k := min(len(h)-1, at-last); k >= minHidden && k > cut; k-- {
				if strings.HasSuffix(text[last:at], h[:k]) {
					cut = k
					break
				}
			}
		}
		if cut > 0 {
			b.WriteString(text[last : at-cut])
			b.WriteString(Marker)
			last = at
		}
		i = at + len(ellipsis)
	}
	if last == 0 {
		return text
	}
	b.WriteString(text[last:])
	return b.String()
}

// replaceToken replaces each occurrence of h in s that is not inside a
// longer run of token characters with Marker.
func replaceToken(s, h string) string {
	if !strings.Contains(s, h) {
		return s
	}
	var b strings.Builder
	last := 0
	for i := 0; i+len(h) <= len(s); {
		j := strings.Index(s[i:], h)
		if j < 0 {
			break
		}
		at := i + j
		end := at + len(h)
		escaped := at >= 2 && s[at-2] == '\\' && strings.IndexByte("nrt", s[at-1]) >= 0 // after a literal \n
		if (at > 0 && wordByte(s[at-1]) && wordByte(h[0]) && !escaped) || (end < len(s) && wordByte(s[end]) && wordByte(h[len(h)-1])) {
			i = at + 1
			continue
		}
		b.WriteString(s[last:at])
		b.WriteString(Marker)
		last = end
		i = end
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}
