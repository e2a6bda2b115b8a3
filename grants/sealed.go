package grants

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"strings"

	"github.com/askops/askops/redact"
)

// Secrets at rest.
//
// An "Approve for session" on `curl -H 'Authorization: Bearer …' …` must
// cover that identical call again, yet the token must not rest in Redis in
// clear (nor be shown by `/askops grants`). So a bash scope whose command
// holds a secret (as redact.Secrets finds them) is sealed when recorded:
// Command keeps the redacted text, which lists and messages show, and
// CommandMAC a keyed hash (HMAC-SHA256) of the exact command, which is what
// an exact scope is then matched by. A keyed hash, not a plain one: a
// password like hunter2 is one dictionary lookup away from its SHA-256.
//
// A prefix scope holding a secret is refused: a prefix is matched word by
// word and cannot be matched through a hash; such a prefix is a mistake
// anyway (it grants only calls carrying that very secret).

// sealer seals and matches scopes with one key. Every process that shares
// a store must use the same key, or a sealed grant one process recorded
// never matches in another (it fails closed: the call asks again).
type sealer struct{ key []byte }

// newSealer returns a sealer with key; with an empty key and random true
// it makes a fresh random key (good for one process only: the memory
// store), else it refuses to seal.
func newSealer(key []byte, random bool) sealer {
	if len(key) == 0 && random {
		key = make([]byte, 32)
		if _, err := rand.Read(key); err != nil {
			panic("grants: no randomness for the sealing key: " + err.Error()) // crypto/rand does not fail on Linux
		}
	}
	return sealer{key: key}
}

// mac is the keyed hash of an exact command, hex.
func (z sealer) mac(command string) string {
	h := hmac.New(sha256.New, z.key)
	h.Write([]byte(command))
	return hex.EncodeToString(h.Sum(nil))
}

// matches reports whether command is the exact command sealed as want.
func (z sealer) matches(command, want string) bool {
	return len(z.key) > 0 && hmac.Equal([]byte(z.mac(command)), []byte(want))
}

// seal returns s as it may rest: unchanged unless its command holds a
// secret. s has been validated.
func (z sealer) seal(op string, s Scope) (Scope, error) {
	if s.Tool != toolBash || s.CommandMAC != "" {
		return s, nil
	}
	shown := strings.TrimSpace(redact.Secrets(s.Command))
	if shown == s.Command {
		return s, nil
	}
	if s.Kind != KindExact {
		return Scope{}, invalid(op, "a command prefix holding a secret cannot be granted (its words would rest in clear): grant the exact command instead")
	}
	if len(z.key) == 0 {
		return Scope{}, invalid(op, "the command holds a secret and this store has no key to seal it with (set slack.bot_token): it cannot be granted")
	}
	s.CommandMAC, s.Command = z.mac(s.Command), shown
	return s, nil
}

// SealKeyFrom derives the sealing key from a secret every askops process
// of one deployment already shares (the Slack bot token); empty in, nil
// out. Derived rather than used as is, so the hash never doubles as a
// check of the token itself.
func SealKeyFrom(secret string) []byte {
	if secret == "" {
		return nil
	}
	h := hmac.New(sha256.New, []byte(secret))
	h.Write([]byte("askops grants: seal commands holding secrets, v1"))
	return h.Sum(nil)
}
