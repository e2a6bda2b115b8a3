package pending

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/askops/askops/internal/redistest"
)

// Secrets in a command never rest in clear in Redis: not in the Ask's
// record, not in the audit stream, not compressed, not after a decision.
func TestRedisStoreKeepsNoSecretAtRest(t *testing.T) {
	const (
		github = "ghp_0123456789abcdefghijABCDEFGHIJ012345"
		pgpass = "s3cr3t-Pg-Pass"
		pemKey = "MIIEowIBAAKCAQEAvR9x1yKkeyMaterialThatMustNotRest0123456789"
	)
	command := "PGPASSWORD=" + pgpass + " psql -h db -c 'select 1' && " +
		"curl -H 'Authorization: token " + github + "' https://api.github.com/user && " +
		"printf '%s' '-----BEGIN RSA PRIVATE KEY-----\n" + pemKey + "\n-----END RSA PRIVATE KEY-----' > key.pem " +
		strings.Repeat("# padding so the record is compressed ", 20)
	args, _ := json.Marshal(map[string]string{"command": command})
	secrets := []string{github, pgpass, pemKey}

	srv := redistest.Start(t)
	s := newRedisStore(t, srv.URL(), Options{Logger: quietLogger()})
	ctx := t.Context()
	req := sampleRequest(1)
	req.Tool, req.Args, req.Summary = "bash", string(args), command
	req.Reason = "asked because of token " + github
	a, err := s.Create(ctx, req, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	pending, err := s.ListPending(ctx, Filter{})
	if err != nil || len(pending) != 1 {
		t.Fatalf("ListPending = %d asks, %v", len(pending), err)
	}
	if _, err := s.Decide(ctx, a.ID, Denied, "U0APPROVER", "do not paste "+github+" here"); err != nil {
		t.Fatal(err)
	}
	got, err := s.Get(ctx, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	// What readers get back is the redacted text, still telling what ran.
	for _, v := range []string{a.Args, a.Summary, pending[0].Args, got.Args, got.Summary, got.Reason, got.DecisionReason} {
		for _, sec := range secrets {
			if strings.Contains(v, sec) {
				t.Errorf("a reader got %q back from the store", sec)
			}
		}
	}
	if !strings.Contains(got.Summary, "PGPASSWORD=[REDACTED] psql -h db") {
		t.Errorf("summary lost its shape: %.200q", got.Summary)
	}

	// Every key of the namespace, read raw: the hash, the index, the stream.
	raw := newRedisClient(t, srv.URL())
	keys, err := raw.Keys(ctx, "askops:*").Result()
	if err != nil || len(keys) < 2 {
		t.Fatalf("KEYS = %v, %v", keys, err)
	}
	var dump strings.Builder
	for _, k := range keys {
		d, err := raw.Dump(ctx, k).Result()
		if err != nil {
			t.Fatal(err)
		}
		dump.WriteString(d)
		switch typ := raw.Type(ctx, k).Val(); typ {
		case "hash":
			h := raw.HGetAll(ctx, k).Val()
			for f, v := range h {
				dump.WriteString(f + "=" + v + "\n")
				if f == fieldRequestZ {
					p, err := (&requestCodec{}).inflate(v)
					if err != nil {
						t.Fatal(err)
					}
					dump.Write(p)
				}
			}
			if _, ok := h[fieldRequestZ]; !ok && strings.Contains(k, ":ask:") { // not the audit head
				t.Errorf("%s: the request was not compressed; the test means to look inside a compressed one", k)
			}
		case "stream":
			for _, m := range raw.XRange(ctx, k, "-", "+").Val() {
				for f, v := range m.Values {
					dump.WriteString(f + "=" + v.(string) + "\n")
				}
			}
		case "zset":
			dump.WriteString(strings.Join(raw.ZRange(ctx, k, 0, -1).Val(), "\n"))
		}
	}
	t.Logf("read %d keys (%d bytes) raw from Redis", len(keys), dump.Len())
	for _, sec := range secrets {
		if strings.Contains(dump.String(), sec) {
			t.Errorf("secret %q rests in clear in Redis", sec)
		}
	}
}

// The memory store keeps what Redis keeps: the same redacted request.
func TestStoresKeepTheSameRedactedRequest(t *testing.T) {
	srv := redistest.Start(t)
	r := newRedisStore(t, srv.URL(), Options{Logger: quietLogger()})
	m := NewMemoryStore(Options{})
	t.Cleanup(func() { _ = m.Close() })
	req := sampleRequest(1)
	req.Args = `{"command":"PGPASSWORD=hunter2 psql","password":"hunter2"}`
	req.Summary = "PGPASSWORD=hunter2 psql"
	var got []Request
	for _, s := range []Store{r, m} {
		a, err := s.Create(t.Context(), req, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if a, err = s.Get(t.Context(), a.ID); err != nil {
			t.Fatal(err)
		}
		got = append(got, a.Request)
	}
	if got[0] != got[1] {
		t.Errorf("redis keeps %+v\nmemory keeps %+v", got[0], got[1])
	}
	if strings.Contains(got[1].Args+got[1].Summary, "hunter2") {
		t.Errorf("memory store keeps the secret: %+v", got[1])
	}
}

// An event appended from outside the store (a refused vote, the API's
// self-approval refusal) rests redacted like an Ask's own: both stores.
func TestAppendEventKeepsNoSecret(t *testing.T) {
	const pass = "Sup3rSecretPw9"
	srv := redistest.Start(t)
	for name, s := range map[string]interface {
		AppendEvent(ctx context.Context, e Event) (Event, error)
		Audit(ctx context.Context, limit int) ([]Event, error)
	}{
		"memory": NewMemoryStore(Options{Logger: quietLogger()}),
		"redis":  newRedisStore(t, srv.URL(), Options{Logger: quietLogger()}),
	} {
		t.Run(name, func(t *testing.T) {
			_, err := s.AppendEvent(t.Context(), Event{Kind: EventRefused, AskID: "ask-1", Tool: "bash", Outcome: Denied, By: "U1",
				Reason: "refused: mysql -uroot -p" + pass + " app", Detail: "sshpass -p " + pass + " ssh host"})
			if err != nil {
				t.Fatal(err)
			}
			events, err := s.Audit(t.Context(), 10)
			if err != nil || len(events) != 1 {
				t.Fatalf("Audit = %v, %v", events, err)
			}
			e := events[0]
			if strings.Contains(e.Reason+e.Detail, pass) || !strings.Contains(e.Reason, "-p[REDACTED] app") || !strings.Contains(e.Detail, "sshpass -p [REDACTED] ssh host") {
				t.Errorf("audit event: reason %q, detail %q", e.Reason, e.Detail)
			}
		})
	}
}
