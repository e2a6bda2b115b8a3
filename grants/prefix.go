package grants

import (
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/askops/askops/policy"
)

// checkPrefix accepts a bash prefix that is one simple command of literal
// words, does not run arbitrary code and does not run code the workspace
// holds (test and build runners, package scripts). The shell analysis is
// policy's.
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
	return nil
}

// prefixCovers reports whether command's words (nil unless one simple
// command of literal words not running arbitrary code, see
// callView.simpleWords) start with prefix's, word by word. The prefix is
// judged again here, so a scope that slipped past Validate grants nothing.
func prefixCovers(prefix string, command []string, cache *prefixCache) bool {
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
	// The words added may point the program elsewhere (kubectl get
	// --server=…, --as=…) or make it write (--log-file=…): not granted.
	return policy.PrefixWidens(pw, command) == ""
}

// prefixWords returns the words of a grantable prefix, or nil.
func prefixWords(prefix string) []string {
	pw, err := policy.SimpleWords(prefix)
	if err != nil || len(pw) == 0 || workspaceCode(pw) != "" || policy.RunsArbitraryCode(pw) {
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
