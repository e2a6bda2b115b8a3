package askview

import (
	"strings"
	"unicode"

	"github.com/askops/askops/pending"
)

// riskyAlways are words an approver must never miss in a command even
// when the policy's reason does not name them: flags that force,
// overwrite or delete, and the SQL verbs that drop or change data, which
// the policy does not read (psql -c "DROP TABLE …" is one word to it).
// Matched whole, SQL verbs in either case.
var riskyAlways = map[string]bool{
	"--force": true, "--force-with-lease": true, "--hard": true, "--mirror": true, "--prune": true,
	"--delete": true, "--no-verify": true, "--no-preserve-root": true, "-rf": true, "-fr": true,
	"-Rf": true, "-fR": true, "+force": true,
	"drop": true, "truncate": true, "delete": true, "alter": true, "grant": true, "revoke": true,
	"sudo": true, "doas": true, "pkexec": true, "mkfs": true, "shred": true,
}

// sqlVerb: riskyAlways' words matched in either case (DROP, drop).
func sqlVerb(w string) bool {
	switch strings.ToLower(w) {
	case "drop", "truncate", "delete", "alter", "grant", "revoke":
		return true
	}
	return false
}

// Risky is what of a call made it ask, which a surface keeps in sight
// (highlighted, never folded away): the words of the policy's reason and
// matched rule, and riskyAlways, each matched as a whole word (after
// RiskyWord trims it); and the paths and hosts its effects name, matched
// inside a word (a host inside its URL).
type Risky struct {
	words map[string]bool
	named []string
}

// riskyOf is the Risky of reason, rule and the effect lines.
func riskyOf(reason, rule string, effects []pending.Effect) Risky {
	r := Risky{words: map[string]bool{}}
	for _, s := range []string{reason, rule} {
		for _, w := range strings.Fields(s) {
			if w = RiskyWord(w); len([]rune(w)) >= 2 && !plainWord(w) {
				r.words[w] = true
			}
		}
	}
	for _, e := range effects {
		switch e.Kind {
		case EffectWrites, EffectDeletes, EffectNetwork:
		default:
			continue
		}
		_, list, _ := strings.Cut(e.Text, " ")
		list = strings.TrimPrefix(list, ": ")
		for item := range strings.SplitSeq(list, ", ") {
			if i := strings.Index(item, " ("); i >= 0 {
				item = item[:i]
			}
			if item = strings.TrimSuffix(item, cutMark); len(item) >= 4 && !strings.HasPrefix(item, "an unknown host") {
				r.named = append(r.named, item)
			}
		}
	}
	return r
}

// plainWord: the English words a reason is made of, which in a command
// are rarely what makes it risky ("the rule asks for every release").
func plainWord(w string) bool {
	switch strings.ToLower(w) {
	case "a", "an", "the", "of", "to", "in", "on", "at", "by", "for", "from", "with", "and", "or", "not", "no",
		"is", "it", "its", "be", "may", "can", "this", "that", "which", "who", "what", "when", "rule", "rules",
		"allow", "ask", "asks", "deny", "covers", "command", "commands", "every", "one", "files", "file",
		"runs", "run", "writes", "write", "deletes", "inside", "outside", "workspace", "known", "until", "time":
		return true
	}
	return false
}

// Has reports whether the word w of a command (as RiskyWord trims it) is
// one that made its call ask.
func (r Risky) Has(w string) bool {
	w = RiskyWord(w)
	if w == "" {
		return false
	}
	if r.words[w] || riskyAlways[w] || sqlVerb(w) {
		return true
	}
	for _, n := range r.named {
		if strings.Contains(w, n) {
			return true
		}
	}
	return false
}

// RiskyWord is w without the quotes, brackets and shell punctuation
// around it ("'--force';" is --force), as Risky compares words.
func RiskyWord(w string) string {
	return strings.TrimFunc(w, func(c rune) bool {
		return unicode.IsSpace(c) || strings.ContainsRune("\"'`()[]{};,|&<>$:", c)
	})
}
