package slackui

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// A command can read as one thing and be another: a Cyrillic "і" in
// "gіthub.com", a zero-width space inside a word, a Hangul filler that
// renders as nothing, a bidi control that reorders what follows. lookAlikes
// finds such characters so the message can say so in words, next to the
// code block that shows them escaped (see visibleRune).

// maxLookAlikes and modalLookAlikes are how many findings a message and a
// modal list; the rest are counted.
const (
	maxLookAlikes   = 5
	modalLookAlikes = 10
)

// lookAlike is one suspicious character and where it is.
type lookAlike struct {
	what string // "look-alike: Cyrillic 'і' (U+0456)", "invisible: U+200B ZERO WIDTH SPACE"
	word string // the word it is in, as written
	line int    // 1-based line of the text
}

// confusable are letters of other scripts drawn like Latin ones.
const confusable = "аеорсухіјѕԁһԛԝґӏАВЕКМНОРСТХІЈЅԌԚԜοαρνικτυχεϲΑΒΕΖΗΙΚΜΝΟΡΤΥΧϹ"

// lookAlikes lists the suspicious characters of s, one finding per
// character kind and word, in order.
func lookAlikes(s string) []lookAlike {
	var out []lookAlike
	seen := map[string]bool{}
	for ln, line := range strings.Split(s, "\n") {
		for _, word := range strings.FieldsFunc(line, func(r rune) bool { return r == ' ' || r == '\t' }) {
			for _, what := range wordFindings(word) {
				key := what + "\x00" + word
				if seen[key] {
					continue
				}
				seen[key] = true
				out = append(out, lookAlike{what: what, word: word, line: ln + 1})
			}
		}
	}
	return out
}

// pathLookAlikes are lookAlikes of a path or directory (line 0: not a
// line of the text).
func pathLookAlikes(p string) []lookAlike {
	found := lookAlikes(p)
	for i := range found {
		found[i].line = 0
	}
	return found
}

// wordFindings names what is suspicious in one word.
func wordFindings(word string) []string {
	var out []string
	latin, other := false, false
	for _, r := range word {
		if r < utf8.RuneSelf {
			if unicode.IsLetter(r) {
				latin = true
			}
			continue
		}
		switch {
		case unicode.Is(unicode.Latin, r):
			latin = true
		case unicode.IsLetter(r) && !strings.ContainsRune(confusable, r):
			other = true
		}
	}
	prev := rune(-1)
	for _, r := range word {
		if f := runeFinding(prev, r, latin, other); f != "" {
			out = append(out, f)
		}
		prev = r
	}
	return out
}

// runeFinding names r if it is suspicious after prev in a word that has
// Latin letters (latin) or letters of another script that are not Latin
// look-alikes (other: then a confusable letter is just that script's own).
func runeFinding(prev, r rune, latin, other bool) string {
	if r < utf8.RuneSelf && r >= 0x20 && r != 0x7f {
		return ""
	}
	code := fmt.Sprintf("U+%04X", r)
	switch {
	case r == '\t':
		return ""
	case unicode.IsControl(r):
		return "control character " + code
	case r == 0x3164 || r == 0x115F || r == 0x1160 || r == 0xFFA0 || r == 0x2800:
		return "blank filler " + code + " " + runeName(r)
	case unicode.Is(unicode.Cf, r), r == 0x034F:
		return "invisible " + code + " " + runeName(r)
	case unicode.Is(unicode.Zs, r), r == 0x2028, r == 0x2029:
		return "non-ASCII space " + code + " " + runeName(r)
	case unicode.In(r, unicode.Mn, unicode.Me) && prev >= 0 && prev < utf8.RuneSelf:
		return "combining mark " + code + " on '" + string(prev) + "'"
	case r >= 0xFF01 && r <= 0xFF5E:
		return "full-width '" + string(r) + "' (" + code + ") looks like '" + string(r-0xFEE0) + "'"
	case r >= 0x1D400 && r <= 0x1D7FF:
		return "mathematical letter '" + string(r) + "' (" + code + ")"
	case asciiLookAlike(r):
		return "look-alike: '" + string(r) + "' (" + code + ") is drawn like an ASCII letter"
	case strings.ContainsRune(confusable, r) && (latin || !other):
		return "look-alike: " + scriptName(r) + " '" + string(r) + "' (" + code + ")"
	case unicode.IsLetter(r) && latin && !unicode.Is(unicode.Latin, r) && (unicode.Is(unicode.Cyrillic, r) || unicode.Is(unicode.Greek, r) || unicode.Is(unicode.Armenian, r) || unicode.Is(unicode.Cherokee, r)):
		return "mixed scripts: " + scriptName(r) + " '" + string(r) + "' (" + code + ") among Latin letters"
	}
	return ""
}

// asciiLookAlike is a character that is drawn like a plain ASCII letter
// but is none, and belongs to no script list above: letter-like symbols
// (ℎ, ℓ, the Kelvin sign K), Roman numerals (ⅼ, ⅽ, ⅾ, ⅿ, ⅰ, ⅴ: not even
// letters to Unicode), small capitals (ᴄ, ᴅ), IPA and other Latin letters
// without a diacritic that an ASCII letter could be mistaken for (ɡ, ɑ,
// ı, ȷ), modifier and subscript letters. "curl https://exampⅼe.com"
// reads as example.com. Accented letters (é, ï) are not listed: they look
// like what they are.
func asciiLookAlike(r rune) bool {
	switch {
	case r >= 0x2100 && r <= 0x214F && unicode.IsLetter(r): // Letterlike Symbols
		return true
	case r >= 0x2160 && r <= 0x2188: // Number Forms: Roman numerals
		return true
	case r >= 0x1D00 && r <= 0x1DBF: // Phonetic Extensions: small capitals, modifier letters
		return true
	case r >= 0x2090 && r <= 0x209C, r >= 0x2070 && r <= 0x207F && unicode.IsLetter(r): // sub- and superscript letters
		return true
	case r >= 0x24B6 && r <= 0x24E9: // circled letters
		return true
	}
	return strings.ContainsRune("ɡɑɒıȷɪʀɴʏʜʟɢɩɾʙƅƖǀǃꞮꭰꮪꓚꓮꓲꓳꓑꓐꓔꓫꓝꓟꓠꓢꓣꓦꓨꓬꓭꓪꓩꓰꓜ", r)
}

func scriptName(r rune) string {
	for _, s := range []struct {
		name  string
		table *unicode.RangeTable
	}{{"Cyrillic", unicode.Cyrillic}, {"Greek", unicode.Greek}, {"Armenian", unicode.Armenian}, {"Cherokee", unicode.Cherokee}} {
		if unicode.Is(s.table, r) {
			return s.name
		}
	}
	return "non-Latin"
}

// runeName names the invisible characters an approver is likely to meet.
func runeName(r rune) string {
	switch r {
	case 0x00A0:
		return "NO-BREAK SPACE"
	case 0x00AD:
		return "SOFT HYPHEN"
	case 0x034F:
		return "COMBINING GRAPHEME JOINER"
	case 0x115F, 0x1160, 0x3164, 0xFFA0:
		return "HANGUL FILLER"
	case 0x200B:
		return "ZERO WIDTH SPACE"
	case 0x200C:
		return "ZERO WIDTH NON-JOINER"
	case 0x200D:
		return "ZERO WIDTH JOINER"
	case 0x200E, 0x200F, 0x061C:
		return "DIRECTION MARK"
	case 0x2028:
		return "LINE SEPARATOR"
	case 0x2029:
		return "PARAGRAPH SEPARATOR"
	case 0x202A, 0x202B, 0x202C, 0x202D, 0x202E, 0x2066, 0x2067, 0x2068, 0x2069:
		return "BIDI CONTROL (reorders text)"
	case 0x2060:
		return "WORD JOINER"
	case 0x2061, 0x2062, 0x2063, 0x2064:
		return "INVISIBLE OPERATOR"
	case 0x2800:
		return "BRAILLE BLANK"
	case 0x3000:
		return "IDEOGRAPHIC SPACE"
	case 0xFEFF:
		return "ZERO WIDTH NO-BREAK SPACE"
	}
	if unicode.Is(unicode.Zs, r) {
		return "SPACE"
	}
	return "FORMAT CHARACTER"
}

// lookAlikeLines are the findings as mrkdwn lines for a message or modal,
// at most max of them and then how many more, never cut silently.
func lookAlikeLines(found []lookAlike, max int) []string {
	var lines []string
	for i, f := range found {
		if i == max {
			lines = append(lines, "_+"+thousands(len(found)-max)+" more_")
			break
		}
		where := "path"
		if f.line > 0 {
			where = "line " + strconv.Itoa(f.line)
		}
		lines = append(lines, "• "+where+": "+proseText(f.what, 160)+" in "+inlineCode(redactHead(f.word, 80), 80))
	}
	return lines
}

// lookAlikeBlockText is the warning section, or "" when there is nothing.
func lookAlikeBlockText(found []lookAlike, max int) string {
	if len(found) == 0 {
		return ""
	}
	return "*:warning: Characters that may not be what they look like:*\n" + strings.Join(lookAlikeLines(found, max), "\n")
}
