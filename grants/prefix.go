package grants

import (
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/askops/askops/policy"
)

// checkPrefix accepts a bash prefix that is one simple command of literal
// words, does not run arbitrary code, does not run code the workspace
// holds (test and build runners, package scripts), and is inside the
// policy's model of its program (policy.PrefixGrantRefusal: a program
// askops knows the options of, words the model knows). The shell analysis
// and the models are policy's.
func checkPrefix(prefix string) error {
	words, err := policy.SimpleWords(prefix)
	if err != nil {
		return err
	}
	if len(words) == 0 {
		return errors.New("no words")
	}
	if why := workspaceCode(words); why != "" {
		return fmt.Errorf("a prefix grant for %q would let any code in the workspace run (%s); grant the exact command instead", strings.Join(words, " "), why)
	}
	if policy.RunsArbitraryCode(words) {
		return errors.New("it runs arbitrary code; grant the exact command instead")
	}
	if why := policy.PrefixGrantRefusal(words); why != "" {
		return fmt.Errorf("%s; grant the exact command instead", why)
	}
	return nil
}

// prefixCovers reports whether command's words (nil unless one simple
// command of literal words not running arbitrary code, see
// callView.simpleWords), run in cwd inside workspace, start with prefix's,
// word by word, and every word is inside the policy's model of the
// program: known options, files inside the workspace and outside .git,
// configured git remotes (policy.PrefixNotCovered). The prefix is judged
// again here, so a scope that slipped past Validate grants nothing.
func prefixCovers(prefix string, command []string, cwd, workspace string, cache *prefixCache) bool {
	if len(command) == 0 {
		return false
	}
	pw := cache.words(prefix)
	if len(pw) == 0 || len(command) < len(pw) {
		return false
	}
	for i, w := range pw {
		if command[i] != w {
			return false
		}
	}
	return policy.PrefixNotCovered(pw, command, cwd, workspace) == ""
}

// prefixWords returns the words of a grantable prefix, or nil.
func prefixWords(prefix string) []string {
	pw, err := policy.SimpleWords(prefix)
	if err != nil || len(pw) == 0 || workspaceCode(pw) != "" || policy.RunsArbitraryCode(pw) ||
		policy.PrefixGrantRefusal(pw) != "" {
		return nil
	}
	return pw
}

// prefixCache remembers prefixWords per prefix, so a store matching a call
// against many prefix grants parses each prefix once, not on every call. A
// nil cache parses every time.
type prefixCache struct {
	mu sync.Mutex
	m  map[string][]string // nil value: not grantable
}

// maxPrefixCache bounds the cache; past it the cache starts over.
const maxPrefixCache = 4096

func (pc *prefixCache) words(prefix string) []string {
	if pc == nil {
		return prefixWords(prefix)
	}
	pc.mu.Lock()
	pw, ok := pc.m[prefix]
	pc.mu.Unlock()
	if ok {
		return pw
	}
	pw = prefixWords(prefix)
	pc.mu.Lock()
	if pc.m == nil || len(pc.m) >= maxPrefixCache {
		pc.m = map[string][]string{}
	}
	pc.m[prefix] = pw
	pc.mu.Unlock()
	return pw
}

// valid is Scope.Validate with the prefix judged through the cache.
func (pc *prefixCache) valid(s Scope) bool {
	if s.validate(false) != nil {
		return false
	}
	return s.Kind != KindPrefix || pc.words(s.Command) != nil
}
