package slackui

import (
	"bytes"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestVerified(t *testing.T) {
	const secret = "s3cret"
	now := time.Unix(1_800_000_000, 0)
	body := []byte("payload=%7B%22type%22%3A%22block_actions%22%7D")
	ts := strconv.FormatInt(now.Unix(), 10)
	good := Sign(secret, ts, body)

	tests := []struct {
		name    string
		body    []byte
		ts, sig string
		want    int
	}{
		{"signed by Slack", body, ts, good, http.StatusOK},
		{"timestamp 4m59s old", body, strconv.FormatInt(now.Add(-299*time.Second).Unix(), 10),
			Sign(secret, strconv.FormatInt(now.Add(-299*time.Second).Unix(), 10), body), http.StatusOK},
		{"forged with another secret", body, ts, Sign("guess", ts, body), http.StatusUnauthorized},
		{"body changed after signing", append([]byte("x"), body...), ts, good, http.StatusUnauthorized},
		{"timestamp changed after signing", body, strconv.FormatInt(now.Unix()-1, 10), good, http.StatusUnauthorized},
		{"timestamp 6 minutes old, correctly signed", body, strconv.FormatInt(now.Add(-6*time.Minute).Unix(), 10),
			Sign(secret, strconv.FormatInt(now.Add(-6*time.Minute).Unix(), 10), body), http.StatusUnauthorized},
		{"timestamp 6 minutes ahead", body, strconv.FormatInt(now.Add(6*time.Minute).Unix(), 10),
			Sign(secret, strconv.FormatInt(now.Add(6*time.Minute).Unix(), 10), body), http.StatusUnauthorized},
		{"no signature", body, ts, "", http.StatusUnauthorized},
		{"no timestamp", body, "", good, http.StatusUnauthorized},
		{"signature not hex", body, ts, "v0=zz", http.StatusUnauthorized},
		{"v1 signature", body, ts, "v1=" + good[3:], http.StatusUnauthorized},
		{"2 MiB body", bytes.Repeat([]byte("a"), 2<<20), ts, Sign(secret, ts, bytes.Repeat([]byte("a"), 2<<20)), http.StatusRequestEntityTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var reached []byte
			var logged bytes.Buffer
			log := slog.New(slog.NewTextHandler(&logged, nil))
			h := VerifiedLogged(secret, func() time.Time { return now }, log, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				reached, _ = io.ReadAll(r.Body)
			}))
			rec := serveSlackRequest(h, httptest.NewRequest(http.MethodPost, "/slack/interactions", bytes.NewReader(tt.body)), tt.ts, tt.sig)
			if rec.Code != tt.want {
				t.Fatalf("status = %d, want %d (%s)", rec.Code, tt.want, rec.Body)
			}
			if tt.want != http.StatusOK && reached != nil {
				t.Fatal("the wrapped handler ran for a rejected request")
			}
			if rejected := tt.want != http.StatusOK; rejected != strings.Contains(logged.String(), "rejected Slack request") {
				t.Fatalf("rejected %v but log says %q", rejected, logged.String())
			}
			if tt.want == http.StatusOK && !bytes.Equal(reached, tt.body) {
				t.Fatalf("wrapped handler got body %q, want the raw body %q", reached, tt.body)
			}
		})
	}
}

// serveSlackRequest serves req by h with Slack's timestamp and signature
// headers set to ts and sig (a header left out where empty) and returns
// h's answer.
func serveSlackRequest(h http.Handler, req *http.Request, ts, sig string) *httptest.ResponseRecorder {
	if ts != "" {
		req.Header.Set("X-Slack-Request-Timestamp", ts)
	}
	if sig != "" {
		req.Header.Set("X-Slack-Signature", sig)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

// mustNotRun is the handler behind a check that must refuse every
// request of the test: reaching it is an error.
func mustNotRun(t *testing.T) http.Handler {
	return http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
		t.Error("wrapped handler ran")
	})
}

// A body without Content-Length (chunked) is cut at the cap while reading.
func TestVerifiedCapsChunkedBody(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	ts := strconv.FormatInt(now.Unix(), 10)
	body := bytes.Repeat([]byte("a"), 2<<20)
	h := Verified("s", func() time.Time { return now }, mustNotRun(t))
	req := httptest.NewRequest(http.MethodPost, "/slack/interactions", io.MultiReader(bytes.NewReader(body)))
	req.ContentLength = -1
	rec := serveSlackRequest(h, req, ts, Sign("s", ts, body))
	if rec.Code != http.StatusRequestEntityTooLarge {
		t.Fatalf("status = %d, want 413", rec.Code)
	}
}

func TestVerifiedWithoutSecretRefusesEverything(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	ts := strconv.FormatInt(now.Unix(), 10)
	body := []byte("payload={}")
	h := Verified("", func() time.Time { return now }, mustNotRun(t))
	rec := serveSlackRequest(h, httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(body)), ts, Sign("", ts, body))
	if rec.Code != http.StatusUnauthorized {
		t.Fatalf("status = %d, want 401", rec.Code)
	}
}
