package redact

import (
	_ "embed"
	"regexp"
	"strings"
)

// bip39English is the BIP-39 English word list (2048 words, one a line;
// its CRC-32 is c1dbd296, as the BIP states).
//
//go:embed bip39_english.txt
var bip39English string

// bip39Words are the list's words; built once, read only.
var bip39Words = set(strings.Fields(bip39English)...)

// mnemonicMin is the fewest words of a BIP-39 phrase (12; 15, 18, 21 and
// 24 are the others). A longer run of list words is hidden whole.
const mnemonicMin = 12

// precommands run the command after them: a run of list words after one
// of them is a command, not a phrase.
var precommands = set("sudo", "env", "nohup", "exec", "command", "builtin", "nice", "xargs", "timeout",
	"doas", "watch", "stdbuf", "ionice", "strace", "chroot", "unbuffer", "then", "do", "else", "eval")

// mnemonics hides every run of at least twelve BIP-39 words on one line
// (a wallet's seed phrase), whatever quotes or key stand around it. A run
// that starts a command (make destroy erase …, bash -c "…") is code and
// stays, but for echo's words.
func mnemonics(s string) string {
	var b strings.Builder
	last := 0
	i := 0
	for i < len(s) {
		start, end, n := mnemonicRun(s, i)
		if n == 0 {
			break
		}
		i = end
		if commandStart(s, start) {
			// echo's words are data (echo abandon ability … > seed.txt);
			// any other command's are not.
			if !strings.HasPrefix(s[start:], "echo ") {
				continue
			}
			start, n = start+len("echo "), n-1
		}
		if n < mnemonicMin {
			continue
		}
		b.WriteString(s[last:start])
		b.WriteString(Marker)
		last = end
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

func isLower(c byte) bool { return c >= 'a' && c <= 'z' }

// mnemonicRun finds the next run of list words at or after i, separated
// by spaces or tabs: its span and length (0: none left).
func mnemonicRun(s string, i int) (start, end, n int) {
	for i < len(s) {
		// the next lower-case word that starts a word
		for i < len(s) && !(isLower(s[i]) && (i == 0 || !wordByte(s[i-1]))) {
			i++
		}
		j := i
		for j < len(s) && isLower(s[j]) {
			j++
		}
		if i >= len(s) {
			return 0, 0, 0
		}
		if (j < len(s) && wordByte(s[j])) || !bip39Words[s[i:j]] {
			i = j
			continue
		}
		start, end, n = i, j, 1
		for {
			k := end
			for k < len(s) && (s[k] == ' ' || s[k] == '\t') {
				k++
			}
			if k == end {
				break
			}
			w := k
			for w < len(s) && isLower(s[w]) {
				w++
			}
			if w == k || (w < len(s) && wordByte(s[w])) || !bip39Words[s[k:w]] {
				break
			}
			end, n = w, n+1
		}
		return start, end, n
	}
	return 0, 0, 0
}

// commandStart reports whether a word at i is where a shell (or bash -c,
// eval, sudo …) would read a command name.
func commandStart(s string, i int) bool {
	j := i
	for j > 0 && (s[j-1] == ' ' || s[j-1] == '\t') {
		j--
	}
	if j == 0 {
		return true
	}
	switch c := s[j-1]; c {
	case '\n', ';', '&', '|', '(', '{', '`', '!':
		return true
	case '"', '\'':
		// A quoted phrase is data after a key (phrase: "…", "seed":"…"),
		// a flag (--mnemonic "…") or echo; any other quoted text may be a
		// command (bash -c "…", ssh host '…', a policy's reason quoting
		// the command).
		before := strings.TrimRight(s[:j-1], " \t\\")
		if strings.HasSuffix(before, "=") || strings.HasSuffix(before, ":") {
			return false
		}
		word := before[strings.LastIndexAny(before, " \t\n\"'")+1:]
		return word == "-c" || !(strings.HasPrefix(word, "-") || word == "echo" || word == "printf")
	}
	// after a precommand word: sudo make …
	k := j
	for k > 0 && wordByte(s[k-1]) {
		k--
	}
	return precommands[s[k:j]]
}

// numberedWord is one word of a numbered list: "1. abandon", "12) zoo".
var numberedWord = regexp.MustCompile(`\b[0-9]{1,2}[.):][ \t]*([a-z]+)\b`)

// numberedMnemonics hides a seed phrase written as a numbered list, on one
// line or over several (a wallet's backup sheet): at least twelve numbered
// list words with nothing but spaces and line breaks between them. The
// numbers stay, each word goes, and no line break is lost. A numbered list
// is not a command, so no word here can be code.
func numberedMnemonics(s string) string {
	// cheap count first: a digit, . ) or :, maybe spaces, a letter
	n := 0
	for i := 0; i+2 < len(s) && n < mnemonicMin; i++ {
		if s[i] < '0' || s[i] > '9' || strings.IndexByte(".):", s[i+1]) < 0 {
			continue
		}
		j := i + 2
		for j < len(s) && (s[j] == ' ' || s[j] == '\t') {
			j++
		}
		if j < len(s) && isLower(s[j]) {
			n++
		}
	}
	if n < mnemonicMin {
		return s
	}
	idx := numberedWord.FindAllStringSubmatchIndex(s, -1)
	if len(idx) < mnemonicMin {
		return s
	}
	var b strings.Builder
	last := 0
	flush := func(run [][]int) {
		if len(run) < mnemonicMin {
			return
		}
		for _, m := range run {
			b.WriteString(s[last:m[2]])
			b.WriteString(Marker)
			last = m[3]
		}
	}
	var run [][]int
	for _, m := range idx {
		word := s[m[2]:m[3]]
		gap := ""
		if len(run) > 0 {
			gap = s[run[len(run)-1][1]:m[0]]
		}
		if !bip39Words[word] || strings.Trim(gap, " \t\r\n") != "" {
			flush(run)
			run = run[:0]
			if !bip39Words[word] {
				continue
			}
		}
		run = append(run, m)
	}
	flush(run)
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}
