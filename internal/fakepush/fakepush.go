// Package fakepush is a push service for tests, speaking the Web Push
// wire protocol as a browser's push service and the browser behind it
// do: it hands out subscriptions (an endpoint on its own TLS server, a
// fresh P-256 key pair and auth secret, bound to the application server
// key the page subscribed with), refuses a push whose VAPID JWT
// (RFC 8292) does not verify against that key, DECRYPTS each body
// (RFC 8291, aes128gcm) with the subscription's private key and auth
// secret as the browser would, and records what it read.
package fakepush

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/ecdh"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/askops/askops/internal/webpush"
)

// Message is one push the fake accepted: the subscription's endpoint, the
// decrypted payload and the headers that shape delivery.
type Message struct {
	Endpoint string
	Payload  []byte
	TTL      int
	Urgency  string
	Topic    string
}

// Server is the fake push service.
type Server struct {
	srv *httptest.Server
	now func() time.Time

	mu       sync.Mutex
	subs     map[string]*sub
	messages []Message
	refused  []string
	changed  chan struct{}
}

type sub struct {
	priv      *ecdh.PrivateKey
	auth      []byte
	serverKey string // the applicationServerKey it was made with
	gone      bool
}

// New starts a fake push service; it stops when t ends. now is the
// clock the JWT's expiry is checked against (nil: time.Now).
func New(t testing.TB, now func() time.Time) *Server {
	if now == nil {
		now = time.Now
	}
	s := &Server{now: now, subs: map[string]*sub{}, changed: make(chan struct{})}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /push/{id}", s.push)
	s.srv = httptest.NewTLSServer(mux)
	t.Cleanup(s.srv.Close)
	return s
}

// TLS is a client configuration that trusts the fake's certificate.
func (s *Server) TLS() *tls.Config {
	pool := x509.NewCertPool()
	pool.AddCert(s.srv.Certificate())
	return &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
}

// Subscribe is what a browser's pushManager.subscribe({applicationServerKey})
// answers: a new subscription bound to serverKey (base64url).
func (s *Server) Subscribe(t testing.TB, serverKey string) webpush.Subscription {
	t.Helper()
	priv, err := ecdh.P256().GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	auth := make([]byte, 16)
	_, _ = rand.Read(auth)
	s.mu.Lock()
	id := "sub" + strconv.Itoa(len(s.subs)+1)
	s.subs[id] = &sub{priv: priv, auth: auth, serverKey: serverKey}
	s.mu.Unlock()
	return webpush.Subscription{Endpoint: s.srv.URL + "/push/" + id, Keys: webpush.Keys{
		P256dh: base64.RawURLEncoding.EncodeToString(priv.PublicKey().Bytes()),
		Auth:   base64.RawURLEncoding.EncodeToString(auth),
	}}
}

// Gone makes the push service answer 410 for endpoint from now on, as for
// a subscription the browser dropped.
func (s *Server) Gone(endpoint string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if u := s.subs[endpoint[strings.LastIndex(endpoint, "/")+1:]]; u != nil {
		u.gone = true
	}
}

// Messages are the pushes accepted so far, oldest first.
func (s *Server) Messages() []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Message(nil), s.messages...)
}

// Refused are the reasons of the pushes refused so far.
func (s *Server) Refused() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.refused...)
}

// Changed is closed at the next push answered (accepted or refused).
func (s *Server) Changed() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.changed
}

func (s *Server) answered(refusal string) {
	if refusal != "" {
		s.refused = append(s.refused, refusal)
	}
	close(s.changed)
	s.changed = make(chan struct{})
}

func (s *Server) push(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 8192))
	s.mu.Lock()
	defer s.mu.Unlock()
	fail := func(code int, why string) {
		s.answered(why)
		http.Error(w, why, code)
	}
	u := s.subs[r.PathValue("id")]
	switch {
	case err != nil:
		fail(http.StatusBadRequest, "unreadable body")
		return
	case u == nil:
		fail(http.StatusNotFound, "no such subscription")
		return
	case u.gone:
		fail(http.StatusGone, "subscription gone")
		return
	case len(body) > 4096:
		fail(http.StatusRequestEntityTooLarge, "body over 4096 bytes")
		return
	case r.Header.Get("Content-Encoding") != "aes128gcm":
		fail(http.StatusBadRequest, "Content-Encoding is not aes128gcm")
		return
	}
	ttl, err := strconv.Atoi(r.Header.Get("TTL"))
	if err != nil || ttl < 0 {
		fail(http.StatusBadRequest, "no TTL header")
		return
	}
	if why := s.checkVAPID(r.Header.Get("Authorization"), u.serverKey); why != "" {
		fail(http.StatusForbidden, why)
		return
	}
	plain, err := Decrypt(body, u.priv, u.auth)
	if err != nil {
		fail(http.StatusBadRequest, "cannot decrypt: "+err.Error())
		return
	}
	s.messages = append(s.messages, Message{Endpoint: s.srv.URL + r.URL.Path, Payload: plain, TTL: ttl,
		Urgency: r.Header.Get("Urgency"), Topic: r.Header.Get("Topic")})
	s.answered("")
	w.WriteHeader(http.StatusCreated)
}

// checkVAPID verifies an Authorization header "vapid t=JWT, k=KEY"
// (RFC 8292) for this service: k is the key the subscription was made
// with, the JWT is ES256 signed by it, its aud is this origin, its exp
// within 24 hours, its sub a mailto: or https: contact. "" when good.
func (s *Server) checkVAPID(h, serverKey string) string {
	scheme, params, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "vapid") {
		return "Authorization is not vapid"
	}
	var tok, key string
	for p := range strings.SplitSeq(params, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(p), "=")
		switch k {
		case "t":
			tok = v
		case "k":
			key = v
		}
	}
	if key != serverKey {
		return "k is not the applicationServerKey the subscription was made with"
	}
	pubBytes, err := base64.RawURLEncoding.DecodeString(key)
	if err != nil {
		return "k is not base64url"
	}
	pub, err := ecdsa.ParseUncompressedPublicKey(elliptic.P256(), pubBytes)
	if err != nil {
		return "k is not a P-256 public key"
	}
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		return "t is not a JWT"
	}
	var head struct{ Alg, Typ string }
	var claims struct {
		Aud string `json:"aud"`
		Exp int64  `json:"exp"`
		Sub string `json:"sub"`
	}
	if decodeJSON(parts[0], &head) != nil || head.Alg != "ES256" {
		return "the JWT's alg is not ES256"
	}
	if decodeJSON(parts[1], &claims) != nil {
		return "the JWT's claims are not JSON"
	}
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil || len(sig) != 64 {
		return "the JWT's signature is not 64 bytes"
	}
	sum := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if !ecdsa.Verify(pub, sum[:], new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:])) {
		return "the JWT's signature does not verify"
	}
	now := s.now().Unix()
	switch {
	case claims.Aud != s.srv.URL:
		return fmt.Sprintf("the JWT's aud %q is not %q", claims.Aud, s.srv.URL)
	case claims.Exp <= now || claims.Exp > now+24*3600:
		return "the JWT's exp is not within 24 hours"
	case !strings.HasPrefix(claims.Sub, "mailto:") && !strings.HasPrefix(claims.Sub, "https:"):
		return fmt.Sprintf("the JWT's sub %q is not a mailto: or https: contact", claims.Sub)
	}
	return ""
}

func decodeJSON(part string, v any) error {
	b, err := base64.RawURLEncoding.DecodeString(part)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}

// Decrypt is a browser's reading of a push body (RFC 8291 section 3.4,
// RFC 8188 section 2): body decrypted with the subscription's private
// key and auth secret. It shares no code with the sender's encryption,
// so a sender that derives a key wrongly fails here.
func Decrypt(body []byte, priv *ecdh.PrivateKey, auth []byte) ([]byte, error) {
	if len(body) < 21 {
		return nil, errors.New("body shorter than the aes128gcm header")
	}
	salt, rs, idlen := body[:16], binary.BigEndian.Uint32(body[16:20]), int(body[20])
	if rs < 18 || len(body) < 21+idlen {
		return nil, errors.New("bad aes128gcm header")
	}
	keyID, records := body[21:21+idlen], body[21+idlen:]
	if uint32(len(records)) > rs {
		return nil, errors.New("more than one record")
	}
	senderPub, err := ecdh.P256().NewPublicKey(keyID)
	if err != nil {
		return nil, fmt.Errorf("the header's keyid is not the sender's P-256 key: %w", err)
	}
	ecdhSecret, err := priv.ECDH(senderPub)
	if err != nil {
		return nil, err
	}
	// key_info = "WebPush: info" || 0x00 || ua_public || as_public
	var keyInfo []byte
	keyInfo = append(keyInfo, "WebPush: info"...)
	keyInfo = append(keyInfo, 0)
	keyInfo = append(keyInfo, priv.PublicKey().Bytes()...)
	keyInfo = append(keyInfo, keyID...)
	prkKey := hmacSHA256(auth, ecdhSecret)
	ikm := hmacSHA256(prkKey, append(keyInfo, 1))[:32]
	prk := hmacSHA256(salt, ikm)
	cek := hmacSHA256(prk, append([]byte("Content-Encoding: aes128gcm\x00"), 1))[:16]
	nonce := hmacSHA256(prk, append([]byte("Content-Encoding: nonce\x00"), 1))[:12]
	block, err := aes.NewCipher(cek)
	if err != nil {
		return nil, err
	}
	gcm, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	plain, err := gcm.Open(nil, nonce, records, nil)
	if err != nil {
		return nil, fmt.Errorf("AES-GCM: %w", err)
	}
	i := len(plain) - 1
	for i >= 0 && plain[i] == 0 {
		i--
	}
	if i < 0 || plain[i] != 2 {
		return nil, errors.New("the record does not end with the last-record delimiter 2")
	}
	return plain[:i], nil
}

// hmacSHA256 is HMAC-SHA-256(key, data): HKDF's extract, and its expand
// for one block (T(1) = HMAC(PRK, info || 0x01)).
func hmacSHA256(key, data []byte) []byte {
	m := hmac.New(sha256.New, key)
	m.Write(data)
	return m.Sum(nil)
}
