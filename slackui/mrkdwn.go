package slackui

import (
	"fmt"
	"regexp"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/askops/askops/askview"
	"github.com/askops/askops/redact"
)

// Everything a user, an agent or a model controls reaches Slack through one
// of the helpers below, always after Redact: Escape turns &, < and > into
// entities (so "<!channel>", "<@U…>", "<!subteam^…>" and "<http://x|y>" are
// shown, not acted on); invisible and bidi-control characters are shown as
// \u escapes (so text cannot hide or reorder what an approver reads); code
// blocks and code spans cannot be closed from inside.

const (
	// zwsp separates backticks so user text never contains two in a row: a
	// code block ends only at three, a code span at one (spans replace the
	// backtick instead, see inlineCode).
	zwsp = "\u200b"
	// spanBacktick stands in for "`" inside a code span, where any backtick
	// would end the span. It looks like a backtick and is not one.
	spanBacktick = "ˋ" // U+02CB MODIFIER LETTER GRAVE ACCENT
	ellipsis     = "…"
)

// Escape makes s inert in mrkdwn: &, < and > become entities, so nothing in it
// can mention, link or address anybody.
func Escape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}

// textLen measures text the way Slack's limits are safest counted: in UTF-16
// code units (a character outside the BMP counts twice).
func textLen(s string) int {
	n := 0
	for _, r := range s {
		n++
		if r > 0xFFFF {
			n++
		}
	}
	return n
}

// visibleRune returns how r is shown: itself, or a \u escape for characters
// that would be invisible or reorder text (bidi overrides, zero-width
// characters, controls other than newline and tab).
func visibleRune(r rune) (string, bool) {
	switch {
	case r == '\n' || r == '\t':
		return "", false
	case r == utf8.RuneError, unicode.IsControl(r),
		unicode.Is(unicode.Cf, r), // format: bidi controls, ZWSP/ZWJ, BOM…
		r == '\u2028', r == '\u2029',
		// Blank fillers that render as nothing (Hangul fillers, braille
		// blank), the combining grapheme joiner, and spaces other than
		// the ASCII one (the shell splits words on ASCII blanks only).
		r == '\u3164', r == '\u115f', r == '\u1160', r == '\uffa0', r == '\u2800', r == '\u034f',
		r != ' ' && unicode.Is(unicode.Zs, r):
		return fmt.Sprintf(`\u%04x`, r), true
	}
	return "", false
}

// escapeRuneAfter is escapeRune for r following prev: a combining mark on
// an ASCII character (which would disguise it) is shown as an escape too.
func escapeRuneAfter(prev, r rune) string {
	if prev >= 0 && prev < utf8.RuneSelf && unicode.In(r, unicode.Mn, unicode.Me) {
		return fmt.Sprintf(`\u%04x`, r)
	}
	return escapeRune(r)
}

// cutter writes user text into a budget (in textLen units) after mapping
// each rune, and counts the source runes that did not fit.
type cutter struct {
	b       strings.Builder
	used    int
	budget  int
	omitted int // source runes not written
	full    bool
}

// write appends the mapped form of s; once a rune does not fit, the rest only
// counts towards omitted.
func (c *cutter) write(s string, mapRune func(prev rune, r rune) string) {
	prev := rune(-1)
	for i, r := range s {
		if c.full {
			c.omitted += utf8.RuneCountInString(s[i:])
			return
		}
		out := mapRune(prev, r)
		n := textLen(out)
		if c.used+n > c.budget {
			c.full = true
			c.omitted += utf8.RuneCountInString(s[i:])
			return
		}
		c.b.WriteString(out)
		c.used += n
		prev = r
	}
}

// escapeRune is the mrkdwn-safe form of one rune of user text.
func escapeRune(r rune) string {
	switch r {
	case '&':
		return "&amp;"
	case '<':
		return "&lt;"
	case '>':
		return "&gt;"
	}
	if v, ok := visibleRune(r); ok {
		return v
	}
	return string(r)
}

// codeBody escapes s for the inside of a ``` block within budget and returns
// it with the number of runes of s left out. No two backticks end up
// adjacent, so the block can only end where we end it.
func codeBody(s string, budget int) (string, int) {
	c := cutter{budget: budget}
	c.write(s, func(prev, r rune) string {
		out := escapeRuneAfter(prev, r)
		if r == '`' && prev == '`' {
			out = zwsp + out
		}
		return out
	})
	body := c.b.String()
	// A backtick at either edge would merge with our fences.
	if strings.HasPrefix(body, "`") {
		body = zwsp + body
	}
	if strings.HasSuffix(body, "`") {
		body += zwsp
	}
	return body, c.omitted
}

// codeBlock is s as a ``` block of at most budget units (fences included).
func codeBlock(s string, budget int) (string, int) {
	body, omitted := codeBody(s, budget-8) // fences, edge guards
	if body == "" {
		body = " "
	}
	return "```" + body + "```", omitted
}

// inlineCode is s as a `code span` on one line, cut to max units with "…".
// Backticks become ˋ and newlines ⏎, so the span can neither end early nor
// spill over lines.
func inlineCode(s string, max int) string {
	out, _ := inlineCodeCut(s, max)
	return out
}

// inlineCodeCut is inlineCode that also reports whether s was cut.
func inlineCodeCut(s string, max int) (string, bool) {
	c := cutter{budget: max - 3}
	c.write(s, func(prev, r rune) string {
		switch r {
		case '`':
			return spanBacktick
		case '\n':
			return "⏎"
		case '\t':
			return " "
		}
		return escapeRuneAfter(prev, r)
	})
	out := c.b.String()
	if c.omitted > 0 {
		out += ellipsis
	}
	if out == "" {
		out = " "
	}
	return "`" + out + "`", c.omitted > 0
}

// proseText is s as one line of plain mrkdwn text, cut to max units with "…".
// Formatting characters that could make user text pose as ours (*bold*,
// ~strike~, `code`) are replaced by look-alikes; whitespace runs collapse so
// a line cannot start a quote or a list.
func proseText(s string, max int) string {
	out, _ := proseCut(s, max)
	return out
}

// proseCut is proseText that also reports whether s was cut.
func proseCut(s string, max int) (string, bool) {
	s = strings.Join(strings.Fields(s), " ")
	c := cutter{budget: max - 1}
	c.write(s, func(prev, r rune) string {
		switch r {
		case '*':
			return "∗"
		case '~':
			return "∼"
		case '`':
			return spanBacktick
		}
		return escapeRuneAfter(prev, r)
	})
	out := c.b.String()
	if c.omitted > 0 {
		out += ellipsis
	}
	return out, c.omitted > 0
}

// plain is s for a plain_text object (header, confirm dialog): one line,
// escaped (Slack decodes &, < and > in every text object), cut to max units.
func plainCut(s string, max int) string {
	s = strings.Join(strings.Fields(s), " ")
	c := cutter{budget: max - 1}
	c.write(s, escapeRuneAfter)
	out := c.b.String()
	if c.omitted > 0 {
		out += ellipsis
	}
	return out
}

var slackUserID = regexp.MustCompile(`^[UW][A-Z0-9]{2,20}$`)

// person shows who: a Slack user id as a mention (Slack renders the name),
// anything else as escaped text.
func personText(who string) string {
	if slackUserID.MatchString(who) {
		return "<@" + who + ">"
	}
	if who == "" {
		return "unknown"
	}
	return proseText(redactHead(who, 80), 80)
}

// slackDate renders t in each reader's own time zone, with an RFC 3339
// fallback for clients that cannot.
func slackDate(t time.Time) string {
	return fmt.Sprintf("<!date^%d^{date_short_pretty} {time}|%s>", t.Unix(), t.UTC().Format(time.RFC3339))
}

// slackClock is a session's start as Slack shows it to each reader, in
// their own zone and clock (12 or 24 hours): the time of day, with the
// date too when the Ask came askview.ClockOnly or more later. Where Slack
// cannot format it, the fallback is askview's text in UTC.
func slackClock(started, asked time.Time) string {
	tokens := "{time}"
	if !askview.TimeOnly(started, asked) {
		tokens = "{date_short} {time}"
	}
	return fmt.Sprintf("<!date^%d^%s|%s>", started.Unix(), tokens, askview.StartedText(started, asked))
}

// mentionPattern is what a configured mention may look like. Anything else
// is shown escaped rather than trusted as markup.
var mentionPattern = regexp.MustCompile(`^(?:<!subteam\^[A-Z0-9]+(?:\|[^<>|]*)?>|<@[UW][A-Z0-9]+>|<!here>|<!channel>)$`)

func mentionText(m string) string {
	if mentionPattern.MatchString(m) {
		return m
	}
	return proseText(m, 80)
}

// redactMargin is how far past what is shown a field is still redacted, so
// a secret that starts in the shown part is matched whole (see askview.Of).
const redactMargin = 4096

// redactHead redacts the part of s that a field of max units can show.
func redactHead(s string, max int) string {
	if limit := max + redactMargin; len(s) > limit {
		s = s[:askview.ByteOffset(s, limit)]
	}
	return redact.Secrets(s)
}

// thousands formats n as 97,312.
func thousands(n int) string {
	s := fmt.Sprint(n)
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	return b.String()
}
