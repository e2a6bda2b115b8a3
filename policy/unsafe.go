package policy

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"mvdan.cc/sh/v3/syntax"
)

// Characters where shells disagree. mvdan.cc/sh reads some bytes as blanks
// or line continuations that bash reads as ordinary word characters (a
// carriage return before `#` starts a comment for one and not the other),
// and continues a comment across a backslash-newline that ends it for bash.
// Such a command is judged as one program and run as another, so it is never
// allowed or granted, in any mode; deny rules still see what bash would run
// (bashFaithful).

// unsafeSpot is the first place in a command where shells disagree.
type unsafeSpot struct {
	offset int    // byte offset in the command
	what   string // the character or sequence, for the reason
}

func (s unsafeSpot) String() string {
	return fmt.Sprintf("%s at byte %d", s.what, s.offset)
}

// findUnsafe reports the first character or sequence in command that bash
// and the parser the policy uses may read differently: a carriage return,
// any other C0 control but tab and newline, DEL, a C1 control, NUL, invalid
// UTF-8, or a comment that ends in a backslash before a newline.
func findUnsafe(command string) (unsafeSpot, bool) {
	for i := 0; i < len(command); {
		r, n := utf8.DecodeRuneInString(command[i:])
		if what := unsafeRune(r, n, command[i]); what != "" {
			return unsafeSpot{offset: i, what: what}, true
		}
		i += n
	}
	if trailingBackslash(command) {
		return unsafeSpot{offset: len(command) - 1, what: "a backslash at the very end (bash drops it; the parser reads an empty word)"}, true
	}
	if off, ok := commentContinuation(command); ok {
		return unsafeSpot{offset: off, what: "a backslash-newline inside a comment (bash ends the comment at the newline; the parser would continue it)"}, true
	}
	if off, ok := heredocContinuation(command); ok {
		return unsafeSpot{offset: off, what: "a backslash-newline in a here-document (bash joins the lines before it looks for the end; the parser after)"}, true
	}
	if off, ok := hashAfterWord(command); ok {
		return unsafeSpot{offset: off, what: "a # right after a word (bash reads it as part of the word; the parser as a comment)"}, true
	}
	return unsafeSpot{}, false
}

// hashAfterWord finds a word the parser ended right before a `#` and
// returns the `#`'s offset. In bash `#` starts a comment only at the start
// of a word, so there it belongs to the word; the parser took it for a
// comment. For a here-document delimiter that moves where the document
// ends: with `cat <<'EOF'#x`, a line `EOF#x` ends it for bash, which then
// runs the lines after it, while the parser reads them as the document.
func hashAfterWord(command string) (int, bool) {
	if !strings.Contains(command, "#") {
		return 0, false
	}
	return firstInParse(command, func(n syntax.Node) (int, bool) {
		w, ok := n.(*syntax.Word)
		if !ok || len(w.Parts) == 0 {
			return 0, false
		}
		end := int(w.End().Offset())
		return end, end < len(command) && command[end] == '#'
	})
}

// firstInParse parses command and returns the first offset spot finds in
// its nodes (false when it does not parse: then it is never allowed
// anyway).
func firstInParse(command string, spot func(syntax.Node) (int, bool)) (int, bool) {
	f, err := parseShell(command)
	if err != nil {
		return 0, false
	}
	at, found := 0, false
	syntax.Walk(f, func(n syntax.Node) bool {
		if !found {
			at, found = spot(n)
		}
		return !found
	})
	return at, found
}

// heredocContinuation finds a backslash-newline in the text of a
// here-document with an unquoted delimiter and returns the backslash's
// offset. bash joins such lines before it compares them with the
// delimiter, so `\` then `EOF` on the next line ends the document for
// bash, and the lines after it run as commands; the parser joins them
// after, reads on, and takes those commands for the document's text.
func heredocContinuation(command string) (int, bool) {
	if !strings.Contains(command, "<<") || !strings.Contains(command, "\\\n") {
		return 0, false
	}
	return firstInParse(command, func(n syntax.Node) (int, bool) {
		r, ok := n.(*syntax.Redirect)
		if !ok || r.Hdoc == nil || (r.Op != syntax.Hdoc && r.Op != syntax.DashHdoc) || quotedDelimiter(r.Word) {
			return 0, false
		}
		// The text starts on the line after the operator's; the parser's
		// span of it may start later, past a first line it joined away.
		start, end := int(r.Hdoc.Pos().Offset()), int(r.Hdoc.End().Offset())
		if nl := strings.IndexByte(command[r.Word.End().Offset():], '\n'); nl >= 0 {
			start = min(start, int(r.Word.End().Offset())+nl+1)
		}
		for i := start; i < end && end <= len(command); i++ {
			if command[i] != '\n' {
				continue
			}
			n := 0 // backslashes right before the newline: an odd count escapes it
			for j := i - 1; j >= 0 && command[j] == '\\'; j-- {
				n++
			}
			if n%2 == 1 {
				return i - 1, true
			}
		}
		return 0, false
	})
}

// quotedDelimiter reports whether a here-document's delimiter has any
// quoting, which makes bash take its text literally (no joined lines).
func quotedDelimiter(w *syntax.Word) bool {
	if w == nil {
		return false
	}
	for _, p := range w.Parts {
		if lit, ok := p.(*syntax.Lit); !ok || strings.Contains(lit.Value, "\\") {
			return true
		}
	}
	return false
}

// midWordHash reports whether the `#` at command[i] is inside a word for
// bash (it follows a character that does not end a word), which makes it
// an ordinary character, never a comment.
func midWordHash(command string, i int) bool {
	return i > 0 && !strings.ContainsRune(" \t\n;&|()<>", rune(command[i-1]))
}

// unsafeRune names r (n bytes long, first byte b) if it is a character
// where shells disagree; "" if it is not.
func unsafeRune(r rune, n int, b byte) string {
	switch {
	case r == utf8.RuneError && n <= 1:
		return fmt.Sprintf("an invalid UTF-8 byte 0x%02X", b)
	case r == 0:
		return "a NUL byte"
	case r == '\r':
		return "a carriage return (CR)"
	case r == '\t' || r == '\n':
		return ""
	case r < 0x20:
		return fmt.Sprintf("the control character U+%04X", r)
	case r == 0x7f:
		return "the control character DEL (U+007F)"
	case r >= 0x80 && r <= 0x9f:
		return fmt.Sprintf("the C1 control character U+%04X", r)
	}
	return ""
}

// commentContinuation finds a comment that ends in a backslash right before
// a newline, and returns the backslash's offset. The parser joins the next
// line to the comment's command; bash ends the comment at the newline and
// runs the next line as a command of its own.
func commentContinuation(command string) (int, bool) {
	if !strings.Contains(command, "\\\n") || !strings.Contains(command, "#") {
		return 0, false
	}
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash), syntax.KeepComments(true)).Parse(strings.NewReader(command), "")
	if err != nil {
		return 0, false
	}
	at, found := 0, false
	syntax.Walk(f, func(n syntax.Node) bool {
		c, ok := n.(*syntax.Comment)
		if !ok || found {
			return !found
		}
		// The parser keeps the backslash-newline in the comment's text.
		if i := strings.Index(c.Text, "\\\n"); i >= 0 {
			at, found = int(c.Pos().Offset())+1+i, true
		}
		return true
	})
	return at, found
}

// trailingBackslash reports an unescaped backslash as the last byte.
func trailingBackslash(command string) bool {
	n := len(command) - len(strings.TrimRight(command, `\`))
	return n%2 == 1
}

// unsafePlaceholder stands in for a character bash reads as part of a word:
// the parser then sees a word where bash sees one.
const unsafePlaceholder = "_"

// bashFaithful rewrites command so that the parser sees the commands bash
// would run: characters bash keeps inside words (and a `#` inside a word,
// which bash never reads as a comment) become a plain word character, NUL
// bytes go (bash drops them), and a backslash that ends a
// comment becomes a blank, so the comment ends at the newline as in bash,
// and a backslash-newline in a here-document's text goes, as bash joins
// those lines before it looks for the delimiter.
// The result is for deny rules and danger checks only; it is never run.
func bashFaithful(command string) string {
	var b strings.Builder
	for i := 0; i < len(command); {
		r, n := utf8.DecodeRuneInString(command[i:])
		switch what := unsafeRune(r, n, command[i]); {
		case r == 0:
		case what != "", r == '#' && midWordHash(command, i):
			b.WriteString(unsafePlaceholder)
		default:
			b.WriteString(command[i : i+n])
		}
		i += n
	}
	out := b.String()
	if trailingBackslash(out) {
		out = out[:len(out)-1]
	}
	// Each rewrite may reveal another comment or here-document; each
	// removes a backslash, so this ends.
	for {
		if off, ok := commentContinuation(out); ok {
			out = out[:off] + " " + out[off+1:]
			continue
		}
		if off, ok := heredocContinuation(out); ok {
			out = out[:off] + out[off+2:] // joined, as bash joins them
			continue
		}
		return out
	}
}

// unsafeCommand returns why command must never be allowed ("" if nothing
// is unsafe). When something is, the commands bash would run (read from the
// bash-faithful rewrite) are added to an, so deny rules and danger checks
// see them as well as the parser's reading.
func unsafeCommand(command string, an *analysis, cwd, workspace string, protected []string) string {
	spot, bad := findUnsafe(command)
	if !bad {
		return ""
	}
	faithful := analyzeCommand(bashFaithful(command), cwd, workspace, protected)
	an.cmds = append(an.cmds, faithful.cmds...)
	for _, d := range faithful.dangers {
		an.danger(d)
	}
	return "the command contains " + spot.String() +
		", which shells read differently, so what would run cannot be checked; it is never allowed or granted"
}
