package console

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/askops/askops/askview"
)

// A call's text is shown whole and wrapped, never in a box that scrolls
// sideways: on a phone such a box showed a tenth of a long command and hid
// --force off-screen with no cue. Its words are kept whole on a line
// (each is its own inline box; only a word wider than the screen breaks),
// so "--force" never reads as "-" and "-force". A long text is folded:
// its head and every part holding a word that made the call ask stay in
// sight (highlighted), the rest is folded behind a "show all" button, and
// each fold says how much it holds.

// foldLimits says when a text folds and what stays in sight.
type foldLimits struct {
	// A text of more than Lines lines or Runes characters folds.
	Lines, Runes int
	// HeadLines and HeadRunes bound the head kept in sight.
	HeadLines, HeadRunes int
}

var (
	// cardFold is for the call on an Ask's card: about a phone screen.
	cardFold = foldLimits{Lines: 16, Runes: 1200, HeadLines: 8, HeadRunes: 480}
	// rowFold is for a call in the history: a few lines.
	rowFold = foldLimits{Lines: 4, Runes: 240, HeadLines: 2, HeadRunes: 160}
)

// maxUnitRunes: a line longer than this folds in pieces of about
// unitRunes, split at blanks, so a one-line script of 5,000 characters
// keeps only the pieces with a risky word in sight.
const (
	maxUnitRunes = 200
	unitRunes    = 120
	// minFold: a fold smaller than this is shown instead.
	minFold = 40
)

// codeText is a text as the page shows it: segments in sight or folded.
type codeText struct {
	Segs []codeSeg
	// Folded: some segment is folded; ShowAll is the button's label.
	Folded  bool
	ShowAll string
}

// codeSeg is a run of the text, folded or in sight. Gap says what a
// folded one holds ("⋯ 23 lines folded ⋯").
type codeSeg struct {
	Fold   bool
	Gap    string
	Pieces []codePiece
}

// codePiece is a word (Word) or the blanks between words; Risky marks a
// word that made the call ask.
type codePiece struct {
	Text        string
	Word, Risky bool
}

// foldText cuts s into segments by lim, keeping in sight every part with a
// word risky holds.
func foldText(s string, risky askview.Risky, lim foldLimits) codeText {
	lines := strings.Count(s, "\n") + 1
	runes := utf8.RuneCountInString(s)
	if lines <= lim.Lines && runes <= lim.Runes {
		return codeText{Segs: []codeSeg{{Pieces: pieces(s, risky)}}}
	}
	units := foldUnits(s)
	keep := make([]bool, len(units))
	headRunes := 0
	for i, u := range units {
		if i > 0 && (i >= lim.HeadLines || headRunes+utf8.RuneCountInString(u) > lim.HeadRunes) {
			break
		}
		keep[i] = true
		headRunes += utf8.RuneCountInString(u)
	}
	for i, u := range units {
		if !keep[i] && hasRisky(u, risky) {
			keep[i] = true
		}
	}
	var out codeText
	for i := 0; i < len(units); {
		j := i
		for j < len(units) && keep[j] == keep[i] {
			j++
		}
		text := strings.Join(units[i:j], "")
		seg := codeSeg{Pieces: pieces(text, risky)}
		if !keep[i] && utf8.RuneCountInString(text) >= minFold {
			seg.Fold = true
			seg.Gap = foldedWords(text)
			out.Folded = true
		}
		// Neighbours in sight merge, so a short fold shown stays in flow.
		if n := len(out.Segs); n > 0 && !seg.Fold && !out.Segs[n-1].Fold {
			out.Segs[n-1].Pieces = append(out.Segs[n-1].Pieces, seg.Pieces...)
		} else {
			out.Segs = append(out.Segs, seg)
		}
		i = j
	}
	if out.Folded {
		if lines > 1 {
			out.ShowAll = fmt.Sprintf("Show all %d lines", lines)
		} else {
			out.ShowAll = fmt.Sprintf("Show all %d characters", runes)
		}
	}
	return out
}

// foldedWords says what a fold holds.
func foldedWords(text string) string {
	if n := strings.Count(text, "\n"); n > 1 {
		return fmt.Sprintf("⋯ %d lines folded ⋯", n)
	}
	return fmt.Sprintf("⋯ %d characters folded ⋯", utf8.RuneCountInString(text))
}

// foldUnits cuts s into its lines (each with its newline), and a line
// longer than maxUnitRunes into pieces of about unitRunes split after a
// blank, never inside a word; joined they are s.
func foldUnits(s string) []string {
	var out []string
	for l := range strings.SplitAfterSeq(s, "\n") {
		for utf8.RuneCountInString(l) > maxUnitRunes {
			cut := askview.ByteOffset(l, unitRunes)
			// Split after the next blank, so no word is cut in two (a
			// word longer than a piece is a piece of its own).
			k := strings.IndexFunc(l[cut:], unicode.IsSpace)
			if k < 0 {
				break
			}
			cut += k + 1
			out = append(out, l[:cut])
			l = l[cut:]
		}
		if l != "" {
			out = append(out, l)
		}
	}
	return out
}

func hasRisky(s string, risky askview.Risky) bool {
	for _, w := range strings.Fields(s) {
		if risky.Has(w) {
			return true
		}
	}
	return false
}

// pieces cuts s into words and the blanks between them.
func pieces(s string, risky askview.Risky) []codePiece {
	var out []codePiece
	for s != "" {
		i := strings.IndexFunc(s, func(r rune) bool { return !unicode.IsSpace(r) })
		if i != 0 {
			if i < 0 {
				i = len(s)
			}
			out = append(out, codePiece{Text: s[:i]})
			s = s[i:]
			continue
		}
		j := strings.IndexFunc(s, unicode.IsSpace)
		if j < 0 {
			j = len(s)
		}
		out = append(out, codePiece{Text: s[:j], Word: true, Risky: risky.Has(s[:j])})
		s = s[j:]
	}
	return out
}
