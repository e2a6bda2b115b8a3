package askview

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/mtibben/confusables"
	"golang.org/x/text/unicode/norm"

	"github.com/askops/askops/pending"
	"github.com/askops/askops/redact"
)

// A command can read as one thing and be another: a Cyrillic "і" in
// "gіthub.com", a division slash in "https:∕∕evil.example", a minus sign
// in "−rf", a zero-width space inside a word, a Hangul filler that renders
// as nothing, a bidi control that reorders what follows, a punycode host
// (xn--80ak6aa92e.com) that a browser shows as other letters. LookAlikes
// finds such characters so each surface can say so in words, next to the
// call it shows with them escaped.

// LookAlike is one suspicious character (or punycode label) and where it
// is.
type LookAlike struct {
	What string // "look-alike: Cyrillic 'і' (U+0456)", "invisible U+200B ZERO WIDTH SPACE"
	Word string // the word it is in, as written (not redacted: the surface redacts what it shows)
	Line int    // 1-based line of the text; 0 for a path
}

// Where is "line N", or "path" for a finding in a path.
func (l LookAlike) Where() string {
	if l.Line > 0 {
		return "line " + strconv.Itoa(l.Line)
	}
	return "path"
}

// Call lists the look-alikes of a's call as pending.Request.Describe reads
// it, everything the approver approves: a command and the directory it
// runs in (when it is not the Ask's own), a file's path and what is
// written, an edit's path and its new text, or any other call's arguments
// (as indented JSON, the way the surfaces show them, one line a field).
func Call(a pending.Ask) []LookAlike {
	switch c := a.Describe(); c.Kind {
	case pending.CallCommand:
		found := LookAlikes(redact.Secrets(c.Command))
		if c.Cwd != "" && c.Cwd != a.Cwd {
			found = append(found, PathLookAlikes(c.Cwd)...)
		}
		return found
	case pending.CallWrite:
		return append(PathLookAlikes(c.Path), LookAlikes(redact.Secrets(c.Content))...)
	case pending.CallEdit:
		return append(PathLookAlikes(c.Path), LookAlikes(redact.Secrets(c.New))...)
	}
	// The arguments are read redacted, as shown: a finding names the word
	// it is in, and a JSON value alone ("hunter2") no longer says it is a
	// password's.
	var args map[string]any
	dec := json.NewDecoder(strings.NewReader(a.Args))
	dec.UseNumber()
	if a.Args == "" || dec.Decode(&args) != nil || args == nil {
		if strings.TrimSpace(a.Args) == "" {
			return LookAlikes(redact.Secrets(a.Summary))
		}
		return LookAlikes(redact.Secrets(a.Args))
	}
	return LookAlikes(ArgumentsText(redact.JSONValue(args, redact.Secrets)))
}

// ArgumentsText is v as every surface shows a call's arguments: indented
// JSON, keys sorted, nothing HTML-escaped (each renderer escapes for its
// own medium).
func ArgumentsText(v any) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return ""
	}
	return strings.TrimRight(b.String(), "\n")
}

// confusable are letters of other scripts drawn like Latin ones.
const confusable = "аеорсухіјѕԁһԛԝґӏАВЕКМНОРСТХІЈЅԌԚԜοαρνικτυχεϲΑΒΕΖΗΙΚΜΝΟΡΤΥΧϹ"

// LookAlikes lists the suspicious characters of s, one finding per
// character kind and word, in order.
func LookAlikes(s string) []LookAlike {
	var out []LookAlike
	seen := map[string]bool{}
	for ln, line := range strings.Split(s, "\n") {
		for _, word := range strings.FieldsFunc(line, func(r rune) bool { return r == ' ' || r == '\t' }) {
			for _, what := range wordFindings(word) {
				key := what + "\x00" + word
				if seen[key] {
					continue
				}
				seen[key] = true
				out = append(out, LookAlike{What: what, Word: word, Line: ln + 1})
			}
		}
	}
	return out
}

// PathLookAlikes are LookAlikes of a path or directory (line 0: not a
// line of the text).
func PathLookAlikes(p string) []LookAlike {
	found := LookAlikes(p)
	for i := range found {
		found[i].Line = 0
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
		case unicode.IsLetter(r) && !strings.ContainsRune(confusable, r) && drawnAs(r) == "":
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
	return append(out, punycodeFindings(word)...)
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
	case punctuationLookAlike(r, latin) != 0:
		return "look-alike: '" + string(r) + "' (" + code + ") is drawn like '" + string(punctuationLookAlike(r, latin)) + "'"
	case !unicode.IsLetter(r) && !asciiLookAlike(r) && drawnAs(r) != "":
		return "look-alike: '" + string(r) + "' (" + code + ") is drawn like " + drawnAs(r)
	case widthForm(r):
		return "full-width or small form '" + string(r) + "' (" + code + ")"
	case r >= 0x1D400 && r <= 0x1D7FF:
		return "mathematical letter '" + string(r) + "' (" + code + ")"
	case asciiLookAlike(r):
		return "look-alike: '" + string(r) + "' (" + code + ") is drawn like an ASCII letter"
	case strings.ContainsRune(confusable, r) && (latin || !other):
		return "look-alike: " + scriptName(r) + " '" + string(r) + "' (" + code + ")"
	case unicode.IsLetter(r) && latin && !unicode.Is(unicode.Latin, r) && (unicode.Is(unicode.Cyrillic, r) || unicode.Is(unicode.Greek, r) || unicode.Is(unicode.Armenian, r) || unicode.Is(unicode.Cherokee, r)):
		return "mixed scripts: " + scriptName(r) + " '" + string(r) + "' (" + code + ") among Latin letters"
	}
	// Everything else Unicode's data says reads as ASCII: a letter only
	// beside Latin ones or among other look-alikes (a word of its own
	// script is that script's), anything else wherever it stands.
	if as := drawnAs(r); as != "" && (!unicode.IsLetter(r) || latin || !other) {
		return "look-alike: '" + string(r) + "' (" + code + ") is drawn like " + as
	}
	return ""
}

// asciiSkeletons groups the printable ASCII characters by their skeleton
// in Unicode's confusables data (UTS 39, confusables.txt, as
// github.com/mtibben/confusables ships it): "l" holds l, I, 1 and |, so a
// character whose skeleton is "l" is drawn like each of them. Built once,
// read only.
var asciiSkeletons = func() map[string]string {
	m := map[string]string{}
	for c := rune(0x21); c < 0x7f; c++ {
		sk := confusables.Skeleton(string(c))
		m[sk] += string(c)
	}
	return m
}()

// drawnAs says which ASCII r (not ASCII itself) is drawn like, quoted for
// a finding ("'|' or 'l'", "'rn'"), or "" for none: r's UTS 39 skeleton
// is all ASCII (U+2223 DIVIDES, U+A731 LATIN LETTER SMALL CAPITAL S), or
// NFKC turns r into ASCII (U+FE54 SMALL SEMICOLON), or NFC does (U+037E
// GREEK QUESTION MARK is ';' to anything that normalises the text).
// An accented letter's skeleton keeps its accent, so é is no finding.
func drawnAs(r rune) string {
	if r < utf8.RuneSelf {
		return ""
	}
	s := string(r)
	if c := norm.NFC.String(s); c != s && isASCII(c) {
		return "'" + c + "' (as NFC normalises it)"
	}
	if sk := confusables.Skeleton(s); sk != s {
		// Some ASCII characters have a skeleton that is not ASCII ('%'
		// is "º/₀"): a character with the same one is drawn like them.
		if same := asciiSkeletons[sk]; same != "" {
			return quoteEach(same)
		}
		if isASCII(sk) {
			return "'" + sk + "'"
		}
	}
	if k := norm.NFKC.String(s); k != s && isASCII(k) {
		return "'" + k + "' (as NFKC normalises it)"
	}
	return ""
}

// quoteEach lists the characters of s as "'a'", "'a' or 'b'", "'a', 'b' or 'c'",
// the shell's and paths' own characters first: what matters is that U+2223
// is drawn like '|' more than that it is like 'l'.
func quoteEach(s string) string {
	const significant = "|;&$/.-:><()'\"\\`*?[]{}~#!=@%^,+"
	var first, rest []string
	for _, r := range s {
		if strings.ContainsRune(significant, r) {
			first = append(first, "'"+string(r)+"'")
		} else {
			rest = append(rest, "'"+string(r)+"'")
		}
	}
	all := append(first, rest...)
	if len(all) == 1 {
		return all[0]
	}
	return strings.Join(all[:len(all)-1], ", ") + " or " + all[len(all)-1]
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return s != ""
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

// punctuationLookAlike is the ASCII character among / . - : that r is
// drawn like, or 0: a path, a URL, a flag or a port written with one of
// these reads as what it is not ("https:∕∕evil.example", "rm −rf", "host꞉22").
// An ideographic full stop is a dot to browsers (IDNA), but also Chinese
// and Japanese prose's, as the katakana middle dot and the CJK dashes
// are: those count only in a word with Latin letters.
func punctuationLookAlike(r rune, latin bool) rune {
	switch r {
	case 0x2215, 0x2044, 0x29F8, 0x2571, 0x27CB, 0x2F03, 0x1735: // ∕ ⁄ ⧸ ╱ ⟋ ⼃ ᜵
		return '/'
	case 0x2024, 0xFE52, 0x06D4, 0x0701, 0x0702, 0xA60E, 0x10A50, 0x2E31, 0x00B7, 0x2027, 0x2219, 0x22C5, 0x0387: // ․ ﹒ ۔ ܁ ܂ ꘎ 𐩐 ⸱ · ‧ ∙ ⋅ ·
		return '.'
	case 0x3002, 0xFF61, 0x30FB, 0xFF65: // 。 ｡ ・ ･
		if latin {
			return '.'
		}
	case 0x2010, 0x2011, 0x2012, 0x2013, 0x2014, 0x2015, 0x2212, 0xFE63, 0xFE58, 0x2043, 0x02D7, 0x2796, 0x2E3A, 0x2E3B, 0x1428, 0x2CBA, 0x30FC, 0x4E00, 0x3161: // ‐ ‑ ‒ – — ― − ﹣ ﹘ ⁃ ˗ ➖ ⸺ ⸻ ᐨ Ⲻ ー 一 ㅡ
		if r < 0x2E80 || latin { // the CJK ones (ー 一 ㅡ) are letters of their scripts' prose
			return '-'
		}
	case 0xA789, 0x02D0, 0x02F8, 0x2236, 0xFE55, 0xFE13, 0x0589, 0x05C3, 0x0703, 0x0704, 0x16EC, 0x1803, 0x205A, 0x17C8, 0xA4FD, 0x1361, 0x18EB: // ꞉ ː ˸ ∶ ﹕ ︓ ։ ׃ ܃ ܄ ᛬ ᠃ ⁚ ៈ ꓽ ፡ ᣫ
		return ':'
	}
	return 0
}

// widthForm is a full-width, half-width, small or vertical presentation
// form of a character (besides the full-width ASCII forms, named with the
// character they look like): Unicode has them for East Asian layout, and
// in a command they are a disguise.
func widthForm(r rune) bool {
	switch {
	case r >= 0xFE10 && r <= 0xFE19: // vertical forms
		return true
	case r >= 0xFE30 && r <= 0xFE6F: // CJK compatibility and small form variants
		return true
	case r == 0xFF5F || r == 0xFF60 || (r >= 0xFF61 && r <= 0xFF64): // full-width white parentheses, half-width CJK punctuation
		return true
	case r >= 0xFFE0 && r <= 0xFFEE: // full-width and half-width signs
		return true
	}
	return false
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

// punycodeFindings names the punycode labels (xn--…) of a word: a host
// written so can be shown by a browser, a mail client or Slack itself as
// letters of any script ("xn--80ak6aa92e.com" is "аррӏе.com", which reads
// as apple.com), while the command line holds only ASCII that no other
// check flags. Each is named with what it decodes to.
func punycodeFindings(word string) []string {
	var out []string
	lower := strings.ToLower(word)
	for i := 0; i+4 <= len(lower); {
		j := strings.Index(lower[i:], "xn--")
		if j < 0 {
			break
		}
		start := i + j
		end := start + 4
		for end < len(lower) && isLabelByte(lower[end]) {
			end++
		}
		i = end
		if start > 0 && isLabelByte(lower[start-1]) {
			continue // inside a longer label, e.g. "fooxn--": no label of its own
		}
		label := word[start:end]
		if shown, ok := decodePunycode(lower[start+4 : end]); ok {
			out = append(out, fmt.Sprintf("punycode host label %q is shown as %q", label, shown))
		} else {
			out = append(out, fmt.Sprintf("punycode host label %q (not valid punycode)", label))
		}
	}
	return out
}

// isLabelByte is a byte of a DNS label as written in ASCII.
func isLabelByte(b byte) bool {
	return b == '-' || (b >= '0' && b <= '9') || (b >= 'a' && b <= 'z') || (b >= 'A' && b <= 'Z')
}

// decodePunycode decodes the part of a label after "xn--" (RFC 3492), or
// reports false for anything that is not valid punycode.
func decodePunycode(s string) (string, bool) {
	const (
		base, tMin, tMax = 36, 1, 26
		skew, damp       = 38, 700
		maxCode          = 0x10FFFF
	)
	adapt := func(delta, points int, first bool) int {
		if first {
			delta /= damp
		} else {
			delta /= 2
		}
		delta += delta / points
		k := 0
		for delta > ((base-tMin)*tMax)/2 {
			delta /= base - tMin
			k += base
		}
		return k + (base-tMin+1)*delta/(delta+skew)
	}
	digit := func(b byte) int {
		switch {
		case b >= '0' && b <= '9':
			return int(b-'0') + 26
		case b >= 'a' && b <= 'z':
			return int(b - 'a')
		}
		return -1
	}
	var out []rune
	if j := strings.LastIndexByte(s, '-'); j >= 0 {
		for _, b := range []byte(s[:j]) {
			out = append(out, rune(b))
		}
		s = s[j+1:]
	}
	if s == "" {
		return "", false
	}
	n, bias, i := 128, 72, 0
	for pos := 0; pos < len(s); {
		oldI, w := i, 1
		for k := base; ; k += base {
			if pos >= len(s) {
				return "", false
			}
			d := digit(s[pos])
			pos++
			if d < 0 || d > (maxCode*base-i)/w {
				return "", false
			}
			i += d * w
			t := min(max(k-bias, tMin), tMax)
			if d < t {
				break
			}
			w *= base - t
			if w > maxCode*base {
				return "", false
			}
		}
		bias = adapt(i-oldI, len(out)+1, oldI == 0)
		n += i / (len(out) + 1)
		i %= len(out) + 1
		if n > maxCode || (n >= 0xD800 && n <= 0xDFFF) {
			return "", false
		}
		out = append(out[:i], append([]rune{rune(n)}, out[i:]...)...)
		i++
	}
	return string(out), true
}
