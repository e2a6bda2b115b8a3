package policy

import (
	"cmp"
	"fmt"
	"math"
	"slices"
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
	spot, bad, _ := scanUnsafe(command)
	return spot, bad
}

// scanUnsafe is findUnsafe, also returning the parse it made (nil if none),
// for bashFaithful to start from.
func scanUnsafe(command string) (unsafeSpot, bool, *reading) {
	for i := 0; i < len(command); {
		r, n := utf8.DecodeRuneInString(command[i:])
		if what := unsafeRune(r, n, command[i]); what != "" {
			return unsafeSpot{offset: i, what: what}, true, nil
		}
		i += n
	}
	if trailingBackslash(command) {
		return unsafeSpot{offset: len(command) - 1, what: "a backslash at the very end (bash drops it; the parser reads an empty word)"}, true, nil
	}
	if !strings.Contains(command, "#") && !strings.Contains(command, "\\\n") {
		return unsafeSpot{}, false, nil // nothing below can be there: no parse
	}
	rd := readShell(command)
	if off, ok := rd.first(false); ok {
		return unsafeSpot{offset: off, what: "a backslash-newline inside a comment (bash ends the comment at the newline; the parser would continue it)"}, true, &rd
	}
	if off, ok := rd.first(true); ok {
		return unsafeSpot{offset: off, what: "a backslash-newline in a here-document (bash joins the lines before it looks for the end; the parser after)"}, true, &rd
	}
	if rd.hashAt >= 0 {
		return unsafeSpot{offset: rd.hashAt, what: "a # right after a word (bash reads it as part of the word; the parser as a comment)"}, true, &rd
	}
	return unsafeSpot{}, false, &rd
}

// continuation is a backslash-newline that the parser reads differently
// from bash.
//
// In a comment: the parser joins the next line to the comment's command;
// bash ends the comment at the newline and runs the next line as a
// command of its own.
//
// In the text of a here-document with an unquoted delimiter: bash joins
// such lines before it compares them with the delimiter, so `\` then `EOF`
// on the next line ends the document for bash, and the lines after it run
// as commands; the parser joins them after, reads on, and takes those
// commands for the document's text.
type continuation struct {
	at      int  // the backslash's offset
	heredoc bool // in a here-document's text; else ending a comment
}

// reading is what one parse of a command tells about where bash and the
// parser disagree. findUnsafe and bashFaithful take all of it from one
// parse, so the cost of a command is a bounded number of parses.
type reading struct {
	ok       bool           // the command parsed
	conts    []continuation // every continuation, by offset
	comments []span         // every comment (from its #), by offset
	bodies   []span         // every unquoted here-document's text, by offset
	hashAt   int            // the first # the parser ended a word before; -1 if none
}

type span struct{ from, to int } // [from, to)

// readShell parses command once, keeping comments, and finds every
// continuation, comment and here-document text in it, and the first word
// that ends right before a # (in bash a # starts a comment only at the
// start of a word, so there it belongs to the word; the parser took it for
// a comment: for a here-document delimiter that moves where the document
// ends, with `cat <<'EOF'#x` a line `EOF#x` ending it for bash). A command
// past the bounds (bounds.go) is read as one that does not parse (ok
// false): it is never allowed anyway, and each of up to maxFaithfulParses
// parses of thousands of here-documents costs what judging it does.
func readShell(command string) reading {
	rd := reading{hashAt: -1}
	if checkNesting(command) != nil {
		return rd
	}
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash), syntax.KeepComments(true)).Parse(strings.NewReader(command), "")
	if err != nil || checkTree(f) != nil {
		return rd
	}
	rd.ok = true
	syntax.Walk(f, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.Comment:
			from := int(n.Pos().Offset())
			rd.comments = append(rd.comments, span{from, from + 1 + len(n.Text)})
			// The parser keeps the backslash-newline in the comment's text.
			if i := strings.Index(n.Text, "\\\n"); i >= 0 {
				rd.conts = append(rd.conts, continuation{at: from + 1 + i})
			}
		case *syntax.Word:
			if end := int(n.End().Offset()); rd.hashAt < 0 && len(n.Parts) > 0 && end < len(command) && command[end] == '#' {
				rd.hashAt = end
			}
		case *syntax.Redirect:
			rd.heredoc(n, command)
		}
		return true
	})
	slices.SortFunc(rd.conts, func(a, b continuation) int { return cmp.Compare(a.at, b.at) })
	// A here-document inside another's $( ) is in both texts.
	rd.conts = slices.Compact(rd.conts)
	slices.SortFunc(rd.comments, func(a, b span) int { return cmp.Compare(a.from, b.from) })
	slices.SortFunc(rd.bodies, func(a, b span) int { return cmp.Compare(a.from, b.from) })
	return rd
}

// heredoc records r's text if r is a here-document with an unquoted
// delimiter, and each backslash-newline in it.
func (rd *reading) heredoc(r *syntax.Redirect, command string) {
	if r.Hdoc == nil || (r.Op != syntax.Hdoc && r.Op != syntax.DashHdoc) || quotedDelimiter(r.Word) {
		return
	}
	// The text starts on the line after the operator's; the parser's
	// span of it may start later, past a first line it joined away.
	start, end := int(r.Hdoc.Pos().Offset()), min(int(r.Hdoc.End().Offset()), len(command))
	if nl := strings.IndexByte(command[r.Word.End().Offset():], '\n'); nl >= 0 {
		start = min(start, int(r.Word.End().Offset())+nl+1)
	}
	rd.bodies = append(rd.bodies, span{start, end})
	for i := start; i < end; i++ {
		if command[i] != '\n' {
			continue
		}
		n := 0 // backslashes right before the newline: an odd count escapes it
		for j := i - 1; j >= 0 && command[j] == '\\'; j-- {
			n++
		}
		if n%2 == 1 {
			rd.conts = append(rd.conts, continuation{at: i - 1, heredoc: true})
		}
	}
}

// first returns the offset of the first continuation of one kind.
func (rd reading) first(heredoc bool) (int, bool) {
	for _, c := range rd.conts {
		if c.heredoc == heredoc {
			return c.at, true
		}
	}
	return 0, false
}

// covered reports whether offset lies in one of spans, which are sorted by
// start and may nest (a here-document inside another's $( )): reach[i] is
// the furthest end of spans[:i+1].
func covered(spans []span, reach []int, offset int) bool {
	i, _ := slices.BinarySearchFunc(spans, offset+1, func(s span, off int) int { return cmp.Compare(s.from, off) })
	return i > 0 && offset < reach[i-1]
}

// reach returns the running maximum of spans' ends, for covered.
func reach(spans []span) []int {
	out := make([]int, len(spans))
	furthest := 0
	for i, s := range spans {
		furthest = max(furthest, s.to)
		out[i] = furthest
	}
	return out
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

// trailingBackslash reports an unescaped backslash as the last byte.
func trailingBackslash(command string) bool {
	n := len(command) - len(strings.TrimRight(command, `\`))
	return n%2 == 1
}

// unsafePlaceholder stands in for a character bash reads as part of a word:
// the parser then sees a word where bash sees one.
const unsafePlaceholder = "_"

// maxFaithfulParses bounds the parses bashFaithful makes. One parse fixes
// every disagreement that the next parse proves is bash's too (see
// provenFixes), so the shapes that fill the cap (a comment continued on
// every line, a here-document of continued lines) take two or three; an
// input where each fix changes how the rest reads (each here-document ends
// where the previous one's joined line says) takes one or two per fix, and
// past this bound the reading stops where it is. Such a command is never
// allowed anyway (findUnsafe), and it is judged as too complex to read.
const maxFaithfulParses = 3

// faithful is bash's reading of a command as far as bashFaithful got.
type faithful struct {
	text string
	// complete: text has no place left where the parser and bash
	// disagree; false past maxFaithfulParses.
	complete bool
	parses   int // the parses it took
}

// bashFaithful rewrites command so that the parser sees the commands bash
// would run: characters bash keeps inside words (and a `#` inside a word,
// which bash never reads as a comment) become a plain word character, NUL
// bytes go (bash drops them), and a backslash that ends a
// comment becomes a blank, so the comment ends at the newline as in bash,
// and a backslash-newline in a here-document's text goes, as bash joins
// those lines before it looks for the delimiter.
// The result is for deny rules and danger checks only; it is never run.
func bashFaithful(command string) string { return readFaithful(command, nil).text }

// readFaithful is bashFaithful, saying whether it got to the end.
//
// Each fix of a continuation may reveal another comment or here-document
// (the line after it is now read as a line of its own), so the fixes are
// bash's in order: the first continuation the parser finds is bash's, the
// next one is found in the text with the first fixed, and so on. Reading
// again after every fix made this quadratic (a comment continued on every
// line of 64 KiB took minutes); instead each parse's continuations are all
// fixed at once, and the next parse proves how many of them are the ones
// fixing one at a time would have found (provenFixes).
//
// parsed, if not nil, is command's reading (from findUnsafe's parse): when
// the characters bash keeps in words change nothing, it is the first parse.
func readFaithful(command string, parsed *reading) faithful {
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
	fr := faithful{text: b.String()}
	if trailingBackslash(fr.text) {
		fr.text = fr.text[:len(fr.text)-1]
	}
	if !strings.Contains(fr.text, "\\\n") { // no continuation anywhere: no parse
		fr.complete = true
		return fr
	}
	var rd reading
	if parsed != nil && fr.text == command {
		rd = *parsed
	} else {
		rd = readShell(fr.text)
		fr.parses++
	}
	for rd.ok && len(rd.conts) > 0 {
		if fr.parses >= maxFaithfulParses {
			// The first one the parser finds is always bash's.
			fr.text = fixContinuations(fr.text, rd.conts[:1])
			return fr
		}
		all := fixContinuations(fr.text, rd.conts)
		next := readShell(all)
		fr.parses++
		n := provenFixes(rd.conts, next)
		if n == len(rd.conts) {
			fr.text, rd = all, next
			continue
		}
		// Only the first n (at least the first, which is always bash's)
		// are proven: fix those and read again.
		fr.text = fixContinuations(fr.text, rd.conts[:max(n, 1)])
		if fr.parses >= maxFaithfulParses {
			return fr
		}
		rd = readShell(fr.text)
		fr.parses++
	}
	fr.complete = true
	return fr
}

// fixContinuations rewrites each of conts (sorted by offset) in text as
// bash reads it: the backslash ending a comment becomes a blank, a
// backslash-newline in a here-document's text goes.
func fixContinuations(text string, conts []continuation) string {
	var b strings.Builder
	b.Grow(len(text))
	from := 0
	for _, c := range conts {
		b.WriteString(text[from:c.at])
		if c.heredoc {
			from = c.at + 2 // joined, as bash joins them
		} else {
			b.WriteByte(' ')
			from = c.at + 1
		}
	}
	b.WriteString(text[from:])
	return b.String()
}

// provenFixes returns how many of conts, all found by one parse and all
// fixed in the text that next read, are those fixing one at a time would
// have fixed. Fixing them one at a time, the i-th is the first
// continuation in the text with the ones before it fixed; that text and
// next agree up to the i-th. So if next has no continuation before the
// i-th's place and the place is still in a comment (or a here-document's
// text) in next, the i-th is the first continuation there too: one found
// earlier would be in next as well, and the comment (or text) reached the
// i-th's backslash-newline, which the parser then continues across. A
// later one may fail this (a here-document that ended where a joined line
// now ends it), and then so do the ones after it.
func provenFixes(conts []continuation, next reading) int {
	if !next.ok {
		return 0
	}
	firstLeft := math.MaxInt // next's first continuation
	if len(next.conts) > 0 {
		firstLeft = next.conts[0].at
	}
	comments, bodies := reach(next.comments), reach(next.bodies)
	shift := 0 // bytes the fixes before the current one removed
	for i, c := range conts {
		at := c.at - shift
		if firstLeft < at {
			return i
		}
		if c.heredoc {
			if !covered(next.bodies, bodies, at) {
				return i
			}
			shift += 2
		} else if !covered(next.comments, comments, at) {
			return i
		}
	}
	return len(conts)
}

// unsafeCommand returns why command must never be allowed ("" if nothing
// is unsafe). When something is, the commands bash would run (read from the
// bash-faithful rewrite) are added to an, so deny rules and danger checks
// see them as well as the parser's reading.
func unsafeCommand(command string, an *analysis, cwd, workspace string, protected []string) string {
	spot, bad, parsed := scanUnsafe(command)
	if !bad {
		return ""
	}
	fr := readFaithful(command, parsed)
	faithful := analyzeCommand(fr.text, cwd, workspace, protected)
	an.cmds = append(an.cmds, faithful.cmds...)
	for _, d := range faithful.dangers {
		an.danger(d)
	}
	why := "the command contains " + spot.String() +
		", which shells read differently, so what would run cannot be checked; it is never allowed or granted"
	if !fr.complete {
		why += fmt.Sprintf(" (and it is too complex to read as bash would: past %d parses, each line changing how the next reads)", maxFaithfulParses)
	}
	return why
}
