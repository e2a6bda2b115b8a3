package gateway

import (
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"net/http"
	"path"
	"slices"
	"strings"
)

// Scope is what a token may do.
type Scope string

const (
	ScopeAsk    Scope = "ask"    // create, read, wait on and cancel its own Asks; the hook endpoint
	ScopeDecide Scope = "decide" // list pending Asks and decide them
)

// Token is one configured API token. Its value never leaves this package
// except as a SHA-256 digest.
type Token struct {
	Name   string
	Scopes []Scope
	// Workspace is the root this token's sessions work in; "" pins each
	// session's to the first cwd it is seen with.
	Workspace string
	// local marks the local serve's tokens (TokenConfig.Local): their callers
	// run on the serve's own machine as its user, so the serve resolves
	// their paths itself (ResolvePaths). No other token's call is judged
	// as resolved, whatever its body says: the serve cannot see the files.
	local  bool
	digest [sha256.Size]byte
}

// Has reports whether t carries scope s.
func (t Token) Has(s Scope) bool { return slices.Contains(t.Scopes, s) }

// Tokens checks bearer tokens against the configured ones.
type Tokens struct {
	tokens []Token
}

// TokenConfig is one api.tokens entry with its value resolved.
type TokenConfig struct {
	Name      string
	Value     string
	Scopes    []string
	Workspace string // api.tokens[].workspace
	// Local is set only by the local Ask API (package local) for its own
	// tokens, never from the config: see Token.local.
	Local bool
}

// NewTokens checks every entry (a name, a value, known scopes, no duplicate
// names or values) and returns the set; the error names the entry.
func NewTokens(cfgs []TokenConfig) (*Tokens, error) {
	t := &Tokens{}
	seen := map[string]bool{}
	values := map[[sha256.Size]byte]bool{}
	for i, c := range cfgs {
		if c.Name == "" {
			return nil, fmt.Errorf("api.tokens[%d].name: required", i)
		}
		if seen[c.Name] {
			return nil, fmt.Errorf("api.tokens[%d].name: %q is used twice", i, c.Name)
		}
		seen[c.Name] = true
		if c.Value == "" {
			return nil, fmt.Errorf("api.tokens[%d]: no token value (set token, or token_env to a variable that is set)", i)
		}
		d := sha256.Sum256([]byte(c.Value))
		if values[d] {
			return nil, fmt.Errorf("api.tokens[%d]: the same token value as an earlier entry", i)
		}
		values[d] = true
		if len(c.Scopes) == 0 {
			return nil, fmt.Errorf("api.tokens[%d].scopes: required (ask, decide)", i)
		}
		if c.Workspace != "" && (!path.IsAbs(c.Workspace) || path.Clean(c.Workspace) != c.Workspace) {
			return nil, fmt.Errorf("api.tokens[%d].workspace: want an absolute, clean path, got %q", i, c.Workspace)
		}
		tok := Token{Name: c.Name, Workspace: c.Workspace, local: c.Local, digest: d}
		for j, s := range c.Scopes {
			switch Scope(s) {
			case ScopeAsk, ScopeDecide:
				tok.Scopes = append(tok.Scopes, Scope(s))
			default:
				return nil, fmt.Errorf("api.tokens[%d].scopes[%d]: unknown scope %q (want ask or decide)", i, j, s)
			}
		}
		t.tokens = append(t.tokens, tok)
	}
	return t, nil
}

// errUnauthorized and errForbidden are the public texts of refusals.
var (
	errUnauthorized = errors.New("missing or unknown bearer token")
	errForbidden    = errors.New("this token may not do that")
)

// Authenticate returns the token r carries (Authorization: Bearer TOKEN).
// Every configured token is compared, in constant time on digests of equal
// length, so neither the timing nor an early exit tells how much of a guess
// matched or which entry it came close to.
func (t *Tokens) Authenticate(r *http.Request) (Token, error) {
	h := r.Header.Get("Authorization")
	scheme, value, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || value == "" {
		return Token{}, errUnauthorized
	}
	d := sha256.Sum256([]byte(strings.TrimSpace(value)))
	found, match := -1, 0
	for i, tok := range t.tokens {
		eq := subtle.ConstantTimeCompare(d[:], tok.digest[:])
		found = subtle.ConstantTimeSelect(eq&(1-match), i, found)
		match |= eq
	}
	if match == 0 {
		return Token{}, errUnauthorized
	}
	return t.tokens[found], nil
}
