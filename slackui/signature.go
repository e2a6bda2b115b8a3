package slackui

import (
	"bytes"
	"cmp"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"log/slog"
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
	return VerifiedLogged(secret, now, nil, next)
}

// VerifiedLogged is Verified that also logs each rejection with its reason
// (never the body or the signature), so a forged or stale callback leaves a
// trace.
func VerifiedLogged(secret string, now func() time.Time, log *slog.Logger, next http.Handler) http.Handler {
	if now == nil {
		now = time.Now
	}
	log = cmp.Or(log, slog.New(slog.DiscardHandler))
	return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		w := rejectLogger{ResponseWriter: rw, log: log, r: r}
		if secret == "" {
			// A handler wired without a secret must not accept anything.
			w.reject("signing secret not configured", http.StatusUnauthorized)
			return
		}
		if r.ContentLength > MaxRequestBody {
			w.reject("request body too large", http.StatusRequestEntityTooLarge)
			return
		}
		ts := r.Header.Get("X-Slack-Request-Timestamp")
		if !freshTimestamp(ts, now()) {
			w.reject("bad or stale request timestamp", http.StatusUnauthorized)
			return
		}
		sig, ok := strings.CutPrefix(r.Header.Get("X-Slack-Signature"), "v0=")
		if !ok {
			w.reject("missing request signature", http.StatusUnauthorized)
			return
		}
		body, err := io.ReadAll(http.MaxBytesReader(rw, r.Body, MaxRequestBody))
		if err != nil {
			if _, tooLarge := errors.AsType[*http.MaxBytesError](err); tooLarge {
				w.reject("request body too large", http.StatusRequestEntityTooLarge)
				return
			}
			w.reject("could not read request body", http.StatusBadRequest)
			return
		}
		if !validSignature(secret, ts, body, sig) {
			w.reject("bad request signature", http.StatusUnauthorized)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.ContentLength = int64(len(body))
		next.ServeHTTP(rw, r)
	})
}

// Sign returns the X-Slack-Signature value Slack would send for body at ts.
// The fake Slack and tests use it; it is the same computation Verified checks.
func Sign(secret, ts string, body []byte) string {
	return "v0=" + hex.EncodeToString(signature(secret, ts, body))
}

// signature is Slack's v0 request signature: HMAC-SHA256 over "v0:TS:BODY".
func signature(secret, ts string, body []byte) []byte {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte("v0:" + ts + ":"))
	mac.Write(body)
	return mac.Sum(nil)
}

// rejectLogger logs the requests Verified turns away.
type rejectLogger struct {
	http.ResponseWriter
	log *slog.Logger
	r   *http.Request
}

func (w rejectLogger) reject(reason string, status int) {
	w.log.Warn("rejected Slack request", "path", w.r.URL.Path, "remote", w.r.RemoteAddr, "status", status, "reason", reason)
	http.Error(w.ResponseWriter, reason, status)
}

func validSignature(secret, ts string, body []byte, sigHex string) bool {
	got, err := hex.DecodeString(sigHex)
	if err != nil {
		return false
	}
	return hmac.Equal(got, signature(secret, ts, body))
}

func freshTimestamp(ts string, now time.Time) bool {
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || sec <= 0 {
		return false
	}
	d := now.Sub(time.Unix(sec, 0))
	return d <= SignatureWindow && d >= -SignatureWindow
}
