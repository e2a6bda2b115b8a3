package slackui

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

const (
	// MaxRequestBody caps what Slack may send us. Real interaction payloads
	// are a few KB; anything near this size is abuse.
	MaxRequestBody = 1 << 20
	// SignatureWindow is how far a request's timestamp may be from now. Slack
	// recommends five minutes; it bounds how long a captured request can be
	// replayed.
	SignatureWindow = 5 * time.Minute
)

// Verified wraps next so it only ever sees requests signed by Slack with
// secret. It caps the body (413), rejects a timestamp outside the window or a
// missing or wrong X-Slack-Signature (401), and does so before anything parses
// the body. next gets the raw body back, unchanged. It serves
// /slack/interactions, /slack/commands and /slack/events alike.
func Verified(secret string, now func() time.Time, next http.Handler) http.Handler {
	if now == nil {
		now = time.Now
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if secret == "" {
			// A handler wired without a secret must not accept anything.
			http.Error(w, "signing secret not configured", http.StatusUnauthorized)
			return
		}
		if r.ContentLength > MaxRequestBody {
			http.Error(w, "request body too large", http.StatusRequestEntityTooLarge)
			return
		}
		ts := r.Header.Get("X-Slack-Request-Timestamp")
		if !freshTimestamp(ts, now()) {
			http.Error(w, "bad or stale request timestamp", http.StatusUnauthorized)
			return
		}
		sig, ok := strings.CutPrefix(r.Header.Get("X-Slack-Signature"), "v0=")
		if !ok {
			http.Error(w, "missing request signature", http.StatusUnauthorized)
			return
		}
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxRequestBody))
		if err != nil {
			if _, tooLarge := errors.AsType[*http.MaxBytesError](err); tooLarge {
				http.Error(w, "request body too large", http.StatusRequestEntityTooLarge)
				return
			}
			http.Error(w, "could not read request body", http.StatusBadRequest)
			return
		}
		if !validSignature(secret, ts, body, sig) {
			http.Error(w, "bad request signature", http.StatusUnauthorized)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.ContentLength = int64(len(body))
		next.ServeHTTP(w, r)
	})
}

// Sign returns the X-Slack-Signature value Slack would send for body at ts.
// The fake Slack and tests use it; it is the same computation Verified checks.
func Sign(secret, ts string, body []byte) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte("v0:" + ts + ":"))
	mac.Write(body)
	return "v0=" + hex.EncodeToString(mac.Sum(nil))
}

func validSignature(secret, ts string, body []byte, sigHex string) bool {
	got, err := hex.DecodeString(sigHex)
	if err != nil {
		return false
	}
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte("v0:" + ts + ":"))
	mac.Write(body)
	return hmac.Equal(got, mac.Sum(nil))
}

func freshTimestamp(ts string, now time.Time) bool {
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || sec <= 0 {
		return false
	}
	d := now.Sub(time.Unix(sec, 0))
	return d <= SignatureWindow && d >= -SignatureWindow
}
