package sessions

import (
	"crypto/sha256"
	"encoding/hex"
	"net/url"
	"strings"
)

// Key is the session an agent's call's grants, thread and Asks attach to
// when askops does not run the agent itself: the id the caller sent,
// namespaced by who the caller is (the API token's name, the local user),
// so naming another caller's session id — or a Slack thread's, which any
// message link shows — reaches none of its grants. Slack's own session ids
// ("C…/ts") never start with "gw:". "" for no session.
func Key(by, session string) string {
	if session == "" {
		return ""
	}
	key := "gw:" + url.QueryEscape(by) + ":" + session
	if len(key) > maxKey {
		// Grants refuse longer ids; a digest keeps the session its own.
		sum := sha256.Sum256([]byte(session))
		key = "gw:" + url.QueryEscape(by) + ":sha256-" + hex.EncodeToString(sum[:16])
	}
	return key
}

// maxKey is the longest session id the grant store takes.
const maxKey = 256

// Shown is the session id as its caller sent it: Key undone.
func Shown(key string) string {
	rest, ok := strings.CutPrefix(key, "gw:")
	if !ok {
		return key
	}
	if _, s, ok := strings.Cut(rest, ":"); ok {
		return s
	}
	return key
}
