package aap

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/askops/askops/internal/outbound"
	"github.com/askops/askops/internal/recordid"
)

// This file is async mode's outbound side: a delivery configuration's
// checks, Standard Webhooks signing, the one HTTP client every
// verification and notification goes through (no redirects, 10 s, every
// connection to an address that passed the destination checks), and
// receiver verification.

// Webhook limits (the provider's numbers, documented in docs/aap.md).
const (
	AttemptTimeout   = 10 * time.Second // one verification or delivery attempt
	maxResponse      = 64 << 10         // bytes of a receiver's answer read
	verifyPerMinute  = 10               // verifications per provisioner per minute, across the fleet
	deliveryBatch    = 50               // notifications one replica sends per turn, one at a time
	DeliveryWindow   = 168 * time.Hour  // retries end this long after decided_at
	deliveryGrace    = 24 * time.Hour   // records outlive the end of delivery this long
	firstRetry       = 5 * time.Second
	maxRetryInterval = time.Hour
)

// delivery is an instance's verified webhook configuration. The secret
// is kept to sign with; it is never answered.
type delivery struct {
	URL            string `json:"url"`
	RegistrationID string `json:"registration_id"`
	Secret         string `json:"secret"`
	// Since is when the instance's delivery began (a replacement keeps
	// it: delivery did not stop): requests that ended before it gain no
	// notification.
	Since time.Time `json:"since,omitzero"`
}

// deliveryJSON is the protocol's WebhookDelivery.
type deliveryJSON struct {
	Type           string `json:"type"`
	URL            string `json:"url"`
	RegistrationID string `json:"registration_id"`
}

var secretRe = regexp.MustCompile(`^whsec_[A-Za-z0-9+/]{42}[AEIMQUYcgkosw048]=$`)

// readDelivery parses a WebhookDeliveryInput.
func readDelivery(raw json.RawMessage, allowPrivate bool) (delivery, error) {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 || t[0] != '{' {
		return delivery{}, invalid("invalid_field", "delivery", "delivery must be a JSON object.")
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(t, &m); err != nil {
		return delivery{}, invalid("invalid_field", "delivery", "delivery must be a JSON object.")
	}
	if err := unknownMember(m, "type", "url", "registration_id", "signing_secret"); err != nil {
		return delivery{}, err
	}
	typ, _, err := stringField(m, "type")
	if err != nil {
		return delivery{}, err
	}
	if typ != "webhook" {
		return delivery{}, invalid("unsupported_delivery_type", "delivery.type", "Only webhook delivery is supported.")
	}
	var d delivery
	var has bool
	if d.URL, has, err = stringField(m, "url"); err != nil || !has {
		return delivery{}, invalid("invalid_webhook_url", "delivery.url", "delivery.url is required.")
	}
	if err := checkURL(d.URL, allowPrivate); err != nil {
		return delivery{}, invalid("invalid_webhook_url", "delivery.url", "%s.", err.Error())
	}
	if d.RegistrationID, _, err = stringField(m, "registration_id"); err != nil || !recordid.ValidUUID(strings.ToLower(d.RegistrationID)) {
		return delivery{}, invalid("invalid_field", "delivery.registration_id", "delivery.registration_id must be a UUID.")
	}
	if d.Secret, _, err = stringField(m, "signing_secret"); err != nil || !secretRe.MatchString(d.Secret) {
		return delivery{}, invalid("invalid_field", "delivery.signing_secret", "delivery.signing_secret must be whsec_ and the canonical base64 of 32 random bytes.")
	}
	return d, nil
}

// checkURL checks a receiver URL (outbound.CheckURL): HTTPS and a
// public host; plain http and private hosts only with allowPrivate
// (local development and tests).
func checkURL(raw string, allowPrivate bool) error {
	return outbound.CheckURL("delivery.url", raw, allowPrivate)
}

// webhookClient is the one client of outbound webhooks (outbound.Client):
// every connection is checked at dial time, redirects are never
// followed, and an attempt ends within AttemptTimeout.
func webhookClient(allowPrivate bool) *http.Client {
	return outbound.Client(outbound.Options{AllowPrivate: allowPrivate, Timeout: AttemptTimeout, Refused: "aap"})
}

// sign is the Standard Webhooks v1 signature of one attempt.
func sign(secret, id string, ts int64, body []byte) string {
	key, _ := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	mac := hmac.New(sha256.New, key)
	fmt.Fprintf(mac, "%s.%d.", id, ts)
	mac.Write(body)
	return "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil))
}

// post sends one signed attempt of body (message id) to d and returns
// the receiver's status, its Retry-After, and its answer (bounded).
func (s *Server) post(ctx context.Context, d delivery, id string, body []byte) (int, time.Duration, []byte, error) {
	ctx, cancel := context.WithTimeout(ctx, AttemptTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, d.URL, bytes.NewReader(body))
	if err != nil {
		return 0, 0, nil, err
	}
	ts := s.cfg.Now().Unix()
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "askops-aap")
	req.Header.Set("webhook-id", id)
	req.Header.Set("webhook-timestamp", strconv.FormatInt(ts, 10))
	req.Header.Set("webhook-signature", sign(d.Secret, id, ts, body))
	resp, err := s.hooks.Do(req)
	if err != nil {
		return 0, 0, nil, err
	}
	defer resp.Body.Close()
	answer, _ := io.ReadAll(io.LimitReader(resp.Body, maxResponse))
	return resp.StatusCode, retryAfter(resp.Header.Get("Retry-After"), s.cfg.Now()), answer, nil
}

// retryAfter reads a Retry-After header: seconds or an HTTP date.
func retryAfter(v string, now time.Time) time.Duration {
	if v == "" {
		return 0
	}
	if n, err := strconv.Atoi(v); err == nil && n >= 0 {
		return time.Duration(n) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

var errVerification = &apiError{status: http.StatusUnprocessableEntity, typ: "invalid_request", code: "webhook_verification_failed",
	message: "The webhook receiver could not be verified.", param: "delivery"}

// verify sends the signed WebhookVerification for d and instance to the
// exact URL: only a 200 echoing the fresh challenge within 10 s passes.
func (s *Server) verify(ctx context.Context, rid string, prov provisioner, d delivery, instance string) error {
	if ok, err := s.verifyLimit.allow(ctx, prov.name, s.cfg.Now()); err != nil {
		return s.storeErr(rid, err)
	} else if !ok {
		return &apiError{status: http.StatusTooManyRequests, typ: "rate_limit", code: "verification_rate_limited",
			message: fmt.Sprintf("At most %d receiver verifications a minute per provisioner; retry later.", verifyPerMinute)}
	}
	if ok, err := s.hostLimit.allow(ctx, destination(d.URL), s.cfg.Now()); err != nil {
		return s.storeErr(rid, err)
	} else if !ok {
		return &apiError{status: http.StatusTooManyRequests, typ: "rate_limit", code: "destination_rate_limited",
			message: "The receiver's host has had as many messages this minute as askops sends one host; retry later."}
	}
	challenge := recordid.NewUUID()
	msg := map[string]string{"id": recordid.NewUUID(), "type": "webhook.verification", "registration_id": d.RegistrationID,
		"instance_id": instance, "created_at": stamp(s.now()), "challenge": challenge}
	body := jsonBytes(msg)
	status, _, answer, err := s.post(ctx, d, msg["id"], body)
	if err != nil || status != http.StatusOK {
		s.log.Info("aap: receiver verification failed", "instance", instance, "status", status, "err", err, "request_id", rid)
		return errVerification
	}
	var got struct {
		Challenge string `json:"challenge"`
	}
	if json.Unmarshal(answer, &got) != nil || got.Challenge != challenge {
		s.log.Info("aap: receiver verification failed: no matching challenge", "instance", instance, "request_id", rid)
		return errVerification
	}
	return nil
}

// destination is the host a receiver URL names (lowercase, no port): the
// key of the per-host limit, whatever instance or provisioner sends.
func destination(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	return strings.ToLower(u.Hostname())
}

// perMinute is a per-key limit of n a minute, counted in the Store, so it
// holds across every replica of the serve (a fleet of N replicas does not
// allow N times as much). It counts in fixed minutes: a burst that
// straddles a minute's end may reach 2n.
type perMinute struct {
	store Store
	kind  string // the limit's name in the store's key
	n     int
}

// allow counts one more for key in now's minute and says whether it is
// within the limit; a store that cannot count is an error, never an
// allowance.
func (l perMinute) allow(ctx context.Context, key string, now time.Time) (bool, error) {
	minute := now.Unix() / 60
	n, err := l.store.Count(ctx, limitKey(l.kind, key, minute), 2*time.Minute)
	if err != nil {
		return false, err
	}
	return n <= int64(l.n), nil
}
