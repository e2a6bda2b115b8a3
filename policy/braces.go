package policy

import (
	"slices"
	"strings"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// Brace expansion happens before every other expansion, on unquoted text,
// and quoted pieces ride along: {"../outside",} is the word ../outside,
// {"rm",-rf,x} is three words. The analysis therefore expands braces as bash
// does (mvdan.cc/sh's SplitBraces and BracesSeq, checked against real bash in
// the tests) so deny rules, dangers and redirection targets see the words
// bash will see. Allow rules never cover a word that brace-expands: the
// expansion is a second reading of the text, and allowing only what has a
// single reading keeps a disagreement between the two from ever allowing
// anything.

// maxBraceWords bounds one word's expansion ({1..100000} or
// {a,b}{a,b}{a,b}…); past it the word is unknown.
const maxBraceWords = 1024

// maxBraceBudget bounds the brace-expanded words one analysis makes, so a
// long command of many {1..4000} stays cheap; past it braces are unknown.
const maxBraceBudget = 20000

// wordsOf is the package wordsOf, charging brace expansions to the
// analysis' budget.
func (z *analyzer) wordsOf(ws []*syntax.Word) []word {
	if len(ws) == 0 {
		return nil
	}
	// The same arguments are read by several checks (the command, its
	// stage names, what feeds an interpreter); expanding them once keeps
	// the reading linear and spends the brace budget once per word.
	// They are read close together (a statement, then its call), so a
	// few recent answers suffice: a map cost as much as it saved.
	key := wordsKey{&ws[0], len(ws)}
	for _, e := range z.expanded {
		if e.key == key {
			return e.words
		}
	}
	out := slices.Clip(z.expandWords(ws)) // a caller's append copies, never writes into the shared array
	z.expanded[z.nextExpanded] = expandedEntry{key, out}
	z.nextExpanded = (z.nextExpanded + 1) % len(z.expanded)
	return out
}

// wordsKey names one run of a command's words in the parsed tree.
type wordsKey struct {
	first **syntax.Word
	n     int
}

// expandedEntry is one of wordsOf's recent answers.
type expandedEntry struct {
	key   wordsKey
	words []word
}

func (z *analyzer) expandWords(ws []*syntax.Word) []word {
	out := make([]word, 0, len(ws))
	for _, w := range ws {
		if z.braces <= 0 && mayBrace(w) && braceish(w) {
			out = append(out, word{loose: anyText, splat: true})
			continue
		}
		ex := expandedWords(w)
		switch {
		case len(ex) != 1:
			z.braces -= len(ex)
		case ex[0].loose == anyText && mayBrace(w):
			z.braces -= maxBraceWords // too large: the work was done anyway
		}
		out = append(out, ex...)
	}
	return out
}

// maxBracesInWord bounds the braces in one word that are expanded.
const maxBracesInWord = 64

func braceCount(w *syntax.Word) int {
	n := 0
	for _, p := range w.Parts {
		if l, ok := p.(*syntax.Lit); ok {
			n += strings.Count(l.Value, "{")
		}
	}
	return n
}

// mayBrace reports whether w has an unquoted '{' at all, the cheap test
// before any copying.
func mayBrace(w *syntax.Word) bool {
	if w == nil {
		return false
	}
	for _, p := range w.Parts {
		if l, ok := p.(*syntax.Lit); ok && strings.Contains(l.Value, "{") {
			return true
		}
	}
	return false
}

// braceish is the conservative test: an unquoted { … } holding an unquoted
// comma or "..", with quoted pieces in between counted as plain text. It is
// true whenever bash could brace-expand w, even where the parser's own
// splitter would not, so such a word is never allowed.
func braceish(w *syntax.Word) bool {
	var b strings.Builder
	for _, p := range w.Parts {
		if l, ok := p.(*syntax.Lit); ok {
			b.WriteString(l.Value)
		} else {
			b.WriteByte('q')
		}
	}
	return braceLike(b.String())
}

// braceExpand returns the words bash makes of w by brace expansion, with
// the empty unquoted words bash drops left out. expanded is false when w
// has no brace expression; ok is false when the expansion is too large.
func braceExpand(w *syntax.Word) (out []*syntax.Word, expanded, ok bool) {
	if !mayBrace(w) {
		return nil, false, true
	}
	if braceCount(w) > maxBracesInWord {
		return nil, true, false // the expander is quadratic in nesting: unknown
	}
	cp := &syntax.Word{Parts: append([]syntax.WordPart(nil), w.Parts...)}
	if !syntax.SplitBraces(cp) || !slices.ContainsFunc(cp.Parts, isBraceExp) {
		return nil, false, true // {} and {x} stay literal
	}
	for x, err := range expand.BracesSeq(nil, cp) {
		if err != nil || len(out) >= maxBraceWords {
			return nil, true, false
		}
		if emptyUnquoted(x) {
			continue
		}
		out = append(out, x)
	}
	return out, true, true
}

// emptyUnquoted: a word of nothing but empty unquoted text is removed by
// bash ({,a} gives just a).
func emptyUnquoted(w *syntax.Word) bool {
	for _, p := range w.Parts {
		l, ok := p.(*syntax.Lit)
		if !ok || l.Value != "" {
			return false
		}
	}
	return true
}

// expandedWords is the words w becomes after brace expansion, in their
// analysis form. A word that brace-expands is never literal for allow rules.
func expandedWords(w *syntax.Word) []word {
	alts, expanded, ok := braceExpand(w)
	switch {
	case !ok:
		return []word{{loose: anyText, splat: true}}
	case !expanded:
		x := wordOf(w)
		if x.ok && mayBrace(w) && braceish(w) {
			// The splitter found nothing but bash might: unknown.
			return []word{{loose: anyText, splat: true}}
		}
		return []word{x}
	}
	out := make([]word, 0, len(alts))
	for _, a := range alts {
		x := wordOf(a)
		if x.ok {
			// Still the file it names, for the read_file rules (unnamed.go).
			x.pat = escapeGlob(x.lit)
		}
		x.ok, x.lit = false, ""
		out = append(out, x)
	}
	return out
}

func isBraceExp(p syntax.WordPart) bool {
	_, ok := p.(*syntax.BraceExp)
	return ok
}
