package redact

import "strings"

// A backslash-newline continues a line: to bash, make, C, Dockerfiles and
// most config formats "abc\<newline>def" is "abcdef". A secret split so
// (export KEY=abc\<newline>def, ghp_abc\<newline>def, --token
// \<newline>  VALUE) is whole only once the lines are joined, so the rules
// read the joined text; the line breaks are then put back where they were,
// so a redaction still never adds or removes one.

// cut is one continuation taken out of a text: where it was in the joined
// text, and what it was ("\\\n" or "\\\r\n").
type cut struct {
	at   int
	text string
}

// joinContinuations returns s without its continuations and where each
// was. A backslash ends a line as a continuation when the run of
// backslashes before the line break is odd ("\\\\\n" is an escaped
// backslash, then a plain line break).
func joinContinuations(s string) (string, []cut) {
	var b strings.Builder
	var cuts []cut
	last := 0
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' {
			continue
		}
		j := i
		for j < len(s) && s[j] == '\\' {
			j++
		}
		run := j - i
		end := -1
		switch {
		case strings.HasPrefix(s[j:], "\n"):
			end = j + 1
		case strings.HasPrefix(s[j:], "\r\n"):
			end = j + 2
		}
		if end < 0 || run%2 == 0 {
			i = j - 1
			continue
		}
		b.WriteString(s[last : j-1])
		cuts = append(cuts, cut{at: b.Len(), text: s[j-1 : end]})
		last = end
		i = end - 1
	}
	if len(cuts) == 0 {
		return s, nil
	}
	b.WriteString(s[last:])
	return b.String(), cuts
}

// rejoin puts the continuations cut from joined back into red, the joined
// text redacted: a continuation in text that stayed goes where that text
// went; one inside a hidden secret goes right after its marker (the rest
// of the secret's lines are gone, their line breaks stay). The redacted
// text is aligned with the joined one by what lies between markers; if
// that fails the line breaks go at the end, so none is ever lost.
func rejoin(joined, red string, cuts []cut) string {
	pieces := strings.Split(red, Marker)
	// start[k], end[k]: where piece k lies in joined; rstart[k] in red.
	start := make([]int, len(pieces))
	end := make([]int, len(pieces))
	rstart := make([]int, len(pieces))
	ok := strings.HasPrefix(joined, pieces[0])
	pos, rpos := 0, 0
	for k, p := range pieces {
		if !ok {
			break
		}
		if k > 0 {
			rpos += len(Marker)
			from := pos + 1 // a hidden secret is never empty
			var at int
			if k == len(pieces)-1 {
				at = len(joined) - len(p)
				if at < from || joined[at:] != p {
					at = -1
				}
			} else if at = strings.Index(joined[min(from, len(joined)):], p); at >= 0 {
				at += from
			}
			if at < 0 {
				ok = false
				break
			}
			pos = at
		}
		start[k], end[k], rstart[k] = pos, pos+len(p), rpos
		pos += len(p)
		rpos += len(p)
	}
	var b strings.Builder
	last := 0
	put := func(at int, text string) {
		b.WriteString(red[last:at])
		b.WriteString(text)
		last = at
	}
	k := 0
	for _, c := range cuts {
		if !ok {
			put(len(red), c.text)
			continue
		}
		for k < len(pieces)-1 && c.at > end[k] && c.at >= start[k+1] {
			k++
		}
		if c.at <= end[k] {
			put(rstart[k]+max(c.at-start[k], 0), c.text)
		} else {
			put(rstart[k+1], c.text) // inside the secret after piece k
		}
	}
	b.WriteString(red[last:])
	return b.String()
}
