package webpush_test

import (
	"encoding/base64"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/askops/askops/internal/fakepush"
	"github.com/askops/askops/internal/outbound"
	"github.com/askops/askops/internal/webpush"
)

// vapid is a fresh VAPID identity.
func vapid(t *testing.T) webpush.VAPID {
	t.Helper()
	raw, err := webpush.NewVAPIDKey()
	if err != nil {
		t.Fatal(err)
	}
	k, err := webpush.ParseVAPIDKey([]byte(base64.RawURLEncoding.EncodeToString(raw)))
	if err != nil {
		t.Fatal(err)
	}
	return webpush.VAPID{Key: k, Subject: "mailto:ops@example.com"}
}

// A push reaches the push service signed and encrypted as the protocol
// says: the fake verifies the JWT against the key the browser subscribed
// with and decrypts the body with the browser's keys. Another key's
// signature is refused; a subscription the service dropped is ErrGone.
func TestSendSignsAndEncrypts(t *testing.T) {
	ctx := t.Context()
	svc := fakepush.New(t, nil)
	hc := outbound.Client(outbound.Options{AllowPrivate: true, Timeout: 10 * time.Second, TLS: svc.TLS()})
	v := vapid(t)
	sub := svc.Subscribe(t, v.PublicKey())
	payload := []byte(`{"title":"askops: 1 waiting","body":"Deletes build/","ask":"ask_1"}`)
	m := webpush.Message{Payload: payload, TTL: 10 * time.Minute, Urgency: "high"}
	if err := webpush.Send(ctx, hc, v, sub, m, time.Now()); err != nil {
		t.Fatalf("send: %v (refused: %v)", err, svc.Refused())
	}
	got := svc.Messages()
	if len(got) != 1 || string(got[0].Payload) != string(payload) || got[0].TTL != 600 || got[0].Urgency != "high" {
		t.Fatalf("the push service read %+v", got)
	}

	if err := webpush.Send(ctx, hc, vapid(t), sub, m, time.Now()); err == nil || !strings.Contains(err.Error(), "403") {
		t.Errorf("a push signed by another key: %v", err)
	}
	big := webpush.Message{Payload: []byte(strings.Repeat("x", webpush.MaxPayload))}
	if err := webpush.Send(ctx, hc, v, sub, big, time.Now()); err != nil {
		t.Errorf("a push of MaxPayload bytes: %v (refused: %v)", err, svc.Refused())
	}
	svc.Gone(sub.Endpoint)
	if err := webpush.Send(ctx, hc, v, sub, m, time.Now()); !errors.Is(err, webpush.ErrGone) {
		t.Errorf("a push to a dropped subscription: %v, want ErrGone", err)
	}
}

// The outbound guard stands: a push service on a private address is
// refused at dial time unless private addresses are allowed.
func TestSendRefusesPrivateEndpoints(t *testing.T) {
	svc := fakepush.New(t, nil)
	v := vapid(t)
	sub := svc.Subscribe(t, v.PublicKey())
	hc := outbound.Client(outbound.Options{Timeout: 5 * time.Second, TLS: svc.TLS(), Refused: "web push"})
	err := webpush.Send(t.Context(), hc, v, sub, webpush.Message{Payload: []byte("{}")}, time.Now())
	if err == nil || !strings.Contains(err.Error(), "non-public") {
		t.Errorf("a push to 127.0.0.1 without allow-private: %v", err)
	}
	if len(svc.Messages()) != 0 {
		t.Errorf("the push reached the service")
	}
}

// BenchmarkEncrypt is one message's encryption (an ECDH key pair, the
// HKDFs, AES-GCM) for a console push's size.
func BenchmarkEncrypt(b *testing.B) {
	svc := fakepush.New(b, nil)
	sub := svc.Subscribe(b, "unused")
	payload := []byte(`{"title":"(3) askops approvals","body":"deploy-bot: Runs rm · Deletes build/ inside the workspace","ask":"ask_0123456789abcdefghijklmnop"}`)
	for b.Loop() {
		if _, err := webpush.Encrypt(sub, payload); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSend is one push end to end over a kept-alive TLS connection
// to the fake push service, which verifies and decrypts it.
func BenchmarkSend(b *testing.B) {
	svc := fakepush.New(b, nil)
	raw, _ := webpush.NewVAPIDKey()
	k, _ := webpush.ParseVAPIDKey(raw)
	v := webpush.VAPID{Key: k, Subject: "mailto:ops@example.com"}
	sub := svc.Subscribe(b, v.PublicKey())
	hc := outbound.Client(outbound.Options{AllowPrivate: true, Timeout: 10 * time.Second, TLS: svc.TLS()})
	defer hc.CloseIdleConnections()
	m := webpush.Message{Payload: []byte(`{"title":"(1) askops approvals","body":"Runs rm","ask":"ask_1"}`), TTL: time.Minute, Urgency: "high"}
	for b.Loop() {
		if err := webpush.Send(b.Context(), hc, v, sub, m, time.Now()); err != nil {
			b.Fatal(err)
		}
	}
}
