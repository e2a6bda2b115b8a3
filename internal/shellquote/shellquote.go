// Package shellquote writes argument vectors as a POSIX shell reads them
// back, so the command a person approves is exactly the one that runs.
package shellquote

import "strings"

// Join quotes each of argv (see Word) and joins them with spaces.
func Join(argv []string) string {
	quoted := make([]string, len(argv))
	for i, a := range argv {
		quoted[i] = Word(a)
	}
	return strings.Join(quoted, " ")
}

// Word is s as one shell word: as it is when every character is one no
// shell treats specially, else in single quotes.
func Word(s string) string {
	if s == "" {
		return "''"
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./=:,+@%^", r)) {
			return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
		}
	}
	return s
}
