// Package apitest is the tests' one client for askops' JSON HTTP APIs (the
// Ask API, the hook API, AAP): a request with a bearer token and a body,
// and its reply as status, headers, bytes and parsed JSON, so a test reads
// what the server said rather than how it was fetched.
package apitest

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// Reply is one response, read whole.
type Reply struct {
	Status int
	Header http.Header
	Raw    []byte
	Body   map[string]any // Raw as a JSON object; nil when it is not one
}

// requestLife bounds one exchange: longer than the longest long poll
// (30 s), so a held request is answered, never cut off by the client.
const requestLife = 60 * time.Second

// Do sends method to url with token ("" for none) and body: nil for none,
// a string or []byte as it is, anything else as its JSON. A body goes with
// Content-Type application/json; headers are name, value pairs set after
// that, an empty value removing the header. A transport failure fails
// the test; any HTTP status is the caller's to judge.
func Do(t testing.TB, method, url, token string, body any, headers ...string) Reply {
	t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case []byte:
		rd = bytes.NewReader(b)
	default:
		j, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(j)
	}
	ctx, cancel := context.WithTimeout(t.Context(), requestLife)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		if headers[i+1] == "" {
			req.Header.Del(headers[i])
		} else {
			req.Header.Set(headers[i], headers[i+1])
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	r := Reply{Status: resp.StatusCode, Header: resp.Header, Raw: raw}
	_ = json.Unmarshal(raw, &r.Body)
	return r
}
