package policy

import (
	"fmt"

	"mvdan.cc/sh/v3/syntax"
)

// Bounds on what the policy reads, so that judging any command under
// MaxCommandBytes takes time linear in its length. The parser's cost grows
// faster than that with nesting (50 KB of `$((` took a second to parse,
// 80 KB of `(` several), and so did parts of the analysis before they
// were made linear; no command an agent means to run comes near these.

// maxNesting bounds the brackets ( { [ open at once, counted in the text
// before it is parsed (quoted or not: counting costs nothing and a
// hundred open brackets is no command anyone reviews).
const maxNesting = 100

// maxTreeDepth bounds the depth of the parsed command: long chains
// (a && b && …, a | b | …) and expressions (1+1+…) nest in the tree
// though not in the text.
const maxTreeDepth = 1000

// maxRedirects bounds the redirections in one command; each may be
// resolved on the file system.
const maxRedirects = 256

// checkNesting reports a command whose brackets nest deeper than
// maxNesting.
func checkNesting(command string) error {
	depth := 0
	for i := 0; i < len(command); i++ {
		switch command[i] {
		case '\\':
			i++
		case '(', '{', '[':
			if depth++; depth > maxNesting {
				return fmt.Errorf("the command nests brackets more than %d deep, past what the policy reads", maxNesting)
			}
		case ')', '}', ']':
			depth = max(depth-1, 0)
		}
	}
	return nil
}

// checkTree reports a parsed command deeper than maxTreeDepth or with more
// than maxRedirects redirections.
func checkTree(f *syntax.File) error {
	depth, redirects := 0, 0
	var err error
	syntax.Walk(f, func(n syntax.Node) bool {
		if err != nil {
			return false
		}
		if n == nil {
			depth--
			return true
		}
		if depth++; depth > maxTreeDepth {
			err = fmt.Errorf("the command nests more than %d deep (a chain or an expression that long), past what the policy reads", maxTreeDepth)
			return false
		}
		if _, ok := n.(*syntax.Redirect); ok {
			if redirects++; redirects > maxRedirects {
				err = fmt.Errorf("the command has more than %d redirections, past what the policy reads", maxRedirects)
				return false
			}
		}
		return true
	})
	return err
}
