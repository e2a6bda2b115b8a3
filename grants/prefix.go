package grants

import (
	"errors"

	"github.com/askops/askops/policy"
)

// checkPrefix accepts a bash prefix that is one simple command of literal
// words and does not run arbitrary code. The shell analysis is policy's.
func checkPrefix(prefix string) error {
	words, err := policy.SimpleWords(prefix)
	if err != nil {
		return err
	}
	if len(words) == 0 {
		return errors.New("no words")
	}
	if policy.RunsArbitraryCode(words) {
		return errors.New("it runs arbitrary code; grant the exact command instead")
	}
	return nil
}

// prefixCovers reports whether command is one simple command of literal words,
// not running arbitrary code, whose words start with prefix's, word by word.
func prefixCovers(prefix, command string) bool {
	pw, err := policy.SimpleWords(prefix)
	if err != nil || len(pw) == 0 || policy.RunsArbitraryCode(pw) {
		return false
	}
	cw, err := policy.SimpleWords(command)
	if err != nil || len(cw) < len(pw) || policy.RunsArbitraryCode(cw) {
		return false
	}
	for i, w := range pw {
		if cw[i] != w {
			return false
		}
	}
	return true
}
