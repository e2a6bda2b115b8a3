// Package webpush is the sending side of the Web Push protocol with the
// standard library alone: a push message is encrypted for one browser's
// subscription (RFC 8291 over RFC 8188's aes128gcm: ECDH on P-256 with
// the subscription's p256dh key, HKDF with its auth secret, AES-128-GCM)
// and sent to its push service with a VAPID identification (RFC 8292: an
// ES256 JWT signed with the sender's P-256 key). It also keeps the
// subscriptions and the VAPID key (Store): in memory, or in Redis so
// every replica signs with one key.
package webpush

import (
	"bytes"
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/ecdh"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// Subscription is a browser's push subscription as its
// PushSubscription.toJSON() gives it: the push service's endpoint and
// the keys a message is encrypted for (base64url).
type Subscription struct {
	Endpoint string `json:"endpoint"`
	Keys     Keys   `json:"keys"`
}

// Keys are a subscription's p256dh public key (an uncompressed P-256
// point, 65 bytes) and its auth secret (16 bytes), base64url.
type Keys struct {
	P256dh string `json:"p256dh"`
	Auth   string `json:"auth"`
}

// decode reads the keys; an error says which is malformed.
func (k Keys) decode() (*ecdh.PublicKey, []byte, error) {
	pub, err := decodeB64(k.P256dh)
	if err != nil {
		return nil, nil, errors.New("keys.p256dh is not base64url")
	}
	ua, err := ecdh.P256().NewPublicKey(pub)
	if err != nil {
		return nil, nil, errors.New("keys.p256dh is not a P-256 public key")
	}
	auth, err := decodeB64(k.Auth)
	if err != nil || len(auth) != 16 {
		return nil, nil, errors.New("keys.auth is not 16 bytes of base64url")
	}
	return ua, auth, nil
}

// Check reports what is wrong with s, if anything, before it is kept.
func (s Subscription) Check() error {
	if _, _, err := s.Keys.decode(); err != nil {
		return err
	}
	if len(s.Endpoint) > 2048 {
		return errors.New("endpoint is longer than 2048 bytes")
	}
	return nil
}

// decodeB64 reads base64url with or without padding (browsers omit it).
func decodeB64(s string) ([]byte, error) {
	for len(s)%4 != 0 {
		s += "="
	}
	return base64.URLEncoding.DecodeString(s)
}

var b64 = base64.RawURLEncoding

// recordSize is the one record's size in the aes128gcm header: a push
// message is one record, at most 4096 bytes as push services take them.
const recordSize = 4096

// MaxPayload is the most plaintext one message carries: a record less
// its tag (16) and delimiter (1), less the header (86) that push
// services count in their 4096.
const MaxPayload = recordSize - 16 - 1 - 86

// Encrypt is payload encrypted for s (RFC 8291): the aes128gcm body,
// header included, that s's browser decrypts with its private key and
// auth secret.
func Encrypt(s Subscription, payload []byte) ([]byte, error) {
	if len(payload) > MaxPayload {
		return nil, fmt.Errorf("webpush: a payload of %d bytes is over %d", len(payload), MaxPayload)
	}
	ua, auth, err := s.Keys.decode()
	if err != nil {
		return nil, err
	}
	as, err := ecdh.P256().GenerateKey(rand.Reader)
	if err != nil {
		return nil, err
	}
	shared, err := as.ECDH(ua)
	if err != nil {
		return nil, err
	}
	salt := make([]byte, 16)
	if _, err := rand.Read(salt); err != nil {
		return nil, err
	}
	asPub := as.PublicKey().Bytes()
	cek, nonce, err := contentKeys(shared, auth, salt, ua.Bytes(), asPub)
	if err != nil {
		return nil, err
	}
	aead, err := newGCM(cek)
	if err != nil {
		return nil, err
	}
	var body bytes.Buffer
	body.Write(salt)
	_ = binary.Write(&body, binary.BigEndian, uint32(recordSize))
	body.WriteByte(byte(len(asPub)))
	body.Write(asPub)
	// The last (and only) record ends with the delimiter 2, no padding.
	record := append(append([]byte(nil), payload...), 2)
	return aead.Seal(body.Bytes(), nonce, record, nil), nil
}

// contentKeys derives the content encryption key and nonce (RFC 8291
// section 3.4, RFC 8188 section 2.2) from the ECDH secret, the auth
// secret, the record's salt and both public keys.
func contentKeys(shared, auth, salt, uaPub, asPub []byte) (cek, nonce []byte, err error) {
	info := append(append([]byte("WebPush: info\x00"), uaPub...), asPub...)
	ikm, err := hkdf.Key(sha256.New, shared, auth, string(info), 32)
	if err != nil {
		return nil, nil, err
	}
	prk, err := hkdf.Extract(sha256.New, ikm, salt)
	if err != nil {
		return nil, nil, err
	}
	if cek, err = hkdf.Expand(sha256.New, prk, "Content-Encoding: aes128gcm\x00", 16); err != nil {
		return nil, nil, err
	}
	nonce, err = hkdf.Expand(sha256.New, prk, "Content-Encoding: nonce\x00", 12)
	return cek, nonce, err
}

func newGCM(key []byte) (cipher.AEAD, error) {
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}

// VAPID is the sender's identification (RFC 8292): a P-256 key pair and
// a contact (mailto: or https:) push services may use.
type VAPID struct {
	Key     *ecdsa.PrivateKey
	Subject string
}

// NewVAPIDKey is a new VAPID private key, as the raw 32-byte scalar
// ParseVAPIDKey reads.
func NewVAPIDKey() ([]byte, error) {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	return k.Bytes()
}

// ParseVAPIDKey reads a raw P-256 private scalar (NewVAPIDKey's), given
// as base64url (as other Web Push senders print it) or raw bytes.
func ParseVAPIDKey(b []byte) (*ecdsa.PrivateKey, error) {
	if len(b) != 32 {
		d, err := decodeB64(string(bytes.TrimSpace(b)))
		if err != nil {
			return nil, errors.New("want 32 bytes, or their base64url")
		}
		b = d
	}
	k, err := ecdsa.ParseRawPrivateKey(elliptic.P256(), b)
	if err != nil {
		return nil, fmt.Errorf("not a P-256 private key: %w", err)
	}
	return k, nil
}

// PublicKey is v's public key as browsers take it for
// applicationServerKey: the uncompressed point, base64url.
func (v VAPID) PublicKey() string {
	b, _ := v.Key.PublicKey.Bytes()
	return b64.EncodeToString(b)
}

// authorization is the Authorization header for a push to endpoint:
// "vapid t=JWT, k=PUBLIC", the JWT's audience the endpoint's origin.
func (v VAPID) authorization(endpoint string, now time.Time) (string, error) {
	u, err := url.Parse(endpoint)
	if err != nil {
		return "", err
	}
	claims, _ := json.Marshal(struct {
		Aud string `json:"aud"`
		Exp int64  `json:"exp"`
		Sub string `json:"sub,omitempty"`
	}{u.Scheme + "://" + u.Host, now.Add(12 * time.Hour).Unix(), v.Subject})
	signing := b64.EncodeToString([]byte(`{"typ":"JWT","alg":"ES256"}`)) + "." + b64.EncodeToString(claims)
	sum := sha256.Sum256([]byte(signing))
	r, s, err := ecdsa.Sign(rand.Reader, v.Key, sum[:])
	if err != nil {
		return "", err
	}
	sig := make([]byte, 64)
	r.FillBytes(sig[:32])
	s.FillBytes(sig[32:])
	return "vapid t=" + signing + "." + b64.EncodeToString(sig) + ", k=" + v.PublicKey(), nil
}

// Message is one push: its payload (JSON the service worker reads), how
// long the push service may hold it for an offline browser, and its
// urgency ("high" wakes a phone at once).
type Message struct {
	Payload []byte
	TTL     time.Duration
	Urgency string
	// Topic, when set, replaces a message to the same subscription still
	// held by the push service (at most 32 base64url characters).
	Topic string
}

// ErrGone is Send's error when the push service says the subscription
// no longer exists (404, 410): the caller drops it.
var ErrGone = errors.New("webpush: the subscription is gone")

// Send encrypts m for s and posts it to s's push service through hc,
// identified by v. A 201 (or any 2xx) is delivered; 404 and 410 are
// ErrGone; anything else an error naming the status.
func Send(ctx context.Context, hc *http.Client, v VAPID, s Subscription, m Message, now time.Time) error {
	body, err := Encrypt(s, m.Payload)
	if err != nil {
		return err
	}
	auth, err := v.authorization(s.Endpoint, now)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.Endpoint, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", auth)
	req.Header.Set("Content-Encoding", "aes128gcm")
	req.Header.Set("Content-Type", "application/octet-stream")
	req.Header.Set("TTL", strconv.FormatInt(max(0, int64(m.TTL/time.Second)), 10))
	if m.Urgency != "" {
		req.Header.Set("Urgency", m.Urgency)
	}
	if m.Topic != "" {
		req.Header.Set("Topic", m.Topic)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	answer, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	switch {
	case resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusGone:
		return ErrGone
	case resp.StatusCode/100 != 2:
		return fmt.Errorf("webpush: the push service answered %s: %s", resp.Status, bytes.TrimSpace(answer))
	}
	return nil
}
