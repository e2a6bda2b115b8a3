package aap

import (
	"bytes"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/askops/askops/internal/recordid"
)

// apiError is a refusal in the protocol's envelope: its status, type,
// code and a message safe to show (never a credential or an internal).
type apiError struct {
	status  int
	typ     string
	code    string
	message string
	param   string
}

func (e *apiError) Error() string { return e.code + ": " + e.message }

func invalid(code, param, format string, args ...any) *apiError {
	return &apiError{status: http.StatusBadRequest, typ: "invalid_request", code: code, param: param, message: fmt.Sprintf(format, args...)}
}

var (
	errUnauthenticated = &apiError{status: http.StatusUnauthorized, typ: "authentication", code: "invalid_credential", message: "The credential is missing or invalid."}
	errNotFound        = &apiError{status: http.StatusNotFound, typ: "not_found", code: "not_found", message: "The resource is unavailable to the caller."}
	errUnavailable     = &apiError{status: http.StatusServiceUnavailable, typ: "dependency", code: "store_unavailable", message: "askops' store is unavailable; retry later. This is not a decision."}
	errInternal        = &apiError{status: http.StatusInternalServerError, typ: "internal", code: "internal", message: "askops could not complete the operation. This does not permit tool execution."}
	errTooLarge        = &apiError{status: http.StatusRequestEntityTooLarge, typ: "invalid_request", code: "body_too_large", message: fmt.Sprintf("The body is over %d bytes.", MaxBody)}
)

func forbidden(msg string) *apiError {
	return &apiError{status: http.StatusForbidden, typ: "authorization", code: "forbidden", message: msg}
}

func conflict(code, msg string) *apiError {
	return &apiError{status: http.StatusConflict, typ: "conflict", code: code, message: msg}
}

// handler answers one exchange: a status and a body to write as JSON
// (nil body: none), or an error. rid is the exchange's X-Request-ID.
type handler func(r *http.Request, rid string) (status int, body any, err error)

// exchange gives every response its X-Request-ID, refuses a method the
// path does not have and a credential in the URL, and writes the
// handler's answer or its error in the envelope.
func (s *Server) exchange(methods map[string]handler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		rid := recordid.NewUUID()
		w.Header().Set("X-Request-ID", rid)
		w.Header().Set("Cache-Control", "no-store")
		h, ok := methods[r.Method]
		switch {
		case methods == nil:
			s.writeError(w, rid, errNotFound)
			return
		case !ok:
			allow := make([]string, 0, len(methods))
			for m := range methods {
				allow = append(allow, m)
			}
			w.Header().Set("Allow", strings.Join(allow, ", "))
			s.writeError(w, rid, &apiError{status: http.StatusMethodNotAllowed, typ: "invalid_request", code: "method_not_allowed", message: "The path does not have method " + r.Method + "."})
			return
		}
		if err := credentialInURL(r); err != nil {
			s.writeError(w, rid, err)
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, MaxBody)
		status, body, err := h(r, rid)
		if err != nil {
			s.writeError(w, rid, err)
			return
		}
		if body == nil {
			w.WriteHeader(status)
			return
		}
		writeJSON(w, status, body)
	}
}

// credentialInURL refuses a request whose query names a credential: a
// credential is read only from the Authorization header, and one in a URL
// has already leaked (logs, proxies), so it is refused, not ignored.
func credentialInURL(r *http.Request) error {
	for k := range r.URL.Query() {
		switch strings.ToLower(k) {
		case "token", "access_token", "credential", "api_key", "key", "authorization", "bearer":
			return invalid("credential_in_url", k, "Credentials are accepted only in the Authorization header, never in the URL.")
		}
	}
	return nil
}

// writeError writes err in the envelope; an error that is no apiError is
// logged and answered as internal, or unavailable for a store failure.
func (s *Server) writeError(w http.ResponseWriter, rid string, err error) {
	var ae *apiError
	if mbe := (*http.MaxBytesError)(nil); errors.As(err, &mbe) {
		ae = errTooLarge
	} else if !errors.As(err, &ae) {
		s.log.Error("aap: internal error", "request_id", rid, "err", err)
		ae = errInternal
	}
	if ae == errUnavailable {
		w.Header().Set("Retry-After", "5")
	}
	if ae.status == http.StatusTooManyRequests {
		w.Header().Set("Retry-After", "60")
	}
	if ae.status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Bearer realm="askops-aap"`)
	}
	e := map[string]string{"type": ae.typ, "code": ae.code, "message": ae.message, "request_id": rid}
	if ae.param != "" {
		e["param"] = ae.param
	}
	writeJSON(w, ae.status, map[string]any{"error": e})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}

// bearer is the Authorization header's bearer credential, "" when none.
func bearer(r *http.Request) string {
	h := r.Header.Get("Authorization")
	scheme, tok, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return ""
	}
	return strings.TrimSpace(tok)
}

// provisioner is a configured provisioner with its token's digest: tokens
// are compared digest to digest in constant time.
type provisioner struct {
	name   string
	digest [32]byte
	token  string // the sealing key's ingredient for replays (instances.go)
}

func newProvisioner(p Provisioner) provisioner {
	return provisioner{name: p.Name, digest: sha256.Sum256([]byte(p.Token)), token: p.Token}
}

// provisionerOf authenticates r as a provisioner. A credential that is
// an instance's instead gets 403 (it may not manage instances).
func (s *Server) provisionerOf(r *http.Request) (provisioner, error) {
	tok := bearer(r)
	if tok == "" {
		return provisioner{}, errUnauthenticated
	}
	d := sha256.Sum256([]byte(tok))
	found := -1
	for i, p := range s.provs { // every entry compared: no early exit to time
		if subtle.ConstantTimeCompare(d[:], p.digest[:]) == 1 {
			found = i
		}
	}
	if found >= 0 {
		return s.provs[found], nil
	}
	if _, ok, err := s.instanceOfCredential(r.Context(), tok); err == nil && ok {
		return provisioner{}, forbidden("An instance credential cannot manage instances.")
	}
	return provisioner{}, errUnauthenticated
}

// credentialDigest is how a credential is stored and looked up: its
// SHA-256 (a credential is 256 random bits, so no slow hash is needed).
func credentialDigest(tok string) string {
	d := sha256.Sum256([]byte(tok))
	return hex.EncodeToString(d[:])
}

// keyDigest names an idempotency key in the store: the key is the
// caller's text, of any shape, so it is hashed into the store's name.
func keyDigest(key string) string {
	d := sha256.Sum256([]byte(key))
	return hex.EncodeToString(d[:16])
}

// idempotencyKey is r's Idempotency-Key, required.
func idempotencyKey(r *http.Request) (string, error) {
	k := r.Header.Get("Idempotency-Key")
	switch {
	case k == "":
		return "", invalid("missing_idempotency_key", "Idempotency-Key", "The Idempotency-Key header is required.")
	case len(k) > MaxKey:
		return "", invalid("invalid_idempotency_key", "Idempotency-Key", "The Idempotency-Key is longer than %d bytes.", MaxKey)
	case !utf8.ValidString(k):
		return "", invalid("invalid_idempotency_key", "Idempotency-Key", "The Idempotency-Key is not valid UTF-8.")
	}
	return k, nil
}

// readObject reads r's body as one JSON object and returns its members
// by their exact names: the content type must be JSON, the body valid
// UTF-8, no deeper than MaxDepth, with no member named twice at any depth
// and nothing after it. Keys are matched exactly by the caller (encoding/
// json would match "TOOL" to tool).
func readObject(r *http.Request) (map[string]json.RawMessage, error) {
	if ct := r.Header.Get("Content-Type"); ct != "" || r.ContentLength != 0 {
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || mt != "application/json" {
			return nil, &apiError{status: http.StatusUnsupportedMediaType, typ: "invalid_request", code: "unsupported_media_type", message: "The body must be application/json."}
		}
	}
	b, err := io.ReadAll(r.Body)
	if err != nil {
		return nil, err
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return nil, invalid("invalid_json", "", "The body must be a JSON object.")
	}
	if !utf8.Valid(b) {
		return nil, invalid("invalid_json", "", "The body is not valid UTF-8.")
	}
	if err := checkJSON(b); err != nil {
		return nil, err
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil || m == nil {
		return nil, invalid("invalid_json", "", "The body must be a JSON object.")
	}
	return m, nil
}

// checkJSON walks b's tokens: one value, well formed, at most MaxDepth
// deep, no object naming a member twice.
func checkJSON(b []byte) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	type frame struct {
		object bool
		keys   map[string]bool
		key    bool // the next token of an object is a key
	}
	var stack []*frame
	bad := func(msg string) error { return invalid("invalid_json", "", "%s", msg) }
	for {
		t, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return bad("The body is not valid JSON.")
		}
		var top *frame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if top != nil && top.object && top.key {
			if d, ok := t.(json.Delim); ok && d == '}' {
				stack = stack[:len(stack)-1]
				continue
			}
			k, _ := t.(string)
			if top.keys[k] {
				return bad(fmt.Sprintf("The member %q is named twice in one object.", clip(k)))
			}
			top.keys[k] = true
			top.key = false
			continue
		}
		if top != nil && top.object {
			top.key = true // this token is the member's value
		}
		switch t {
		case json.Delim('{'):
			stack = append(stack, &frame{object: true, keys: map[string]bool{}, key: true})
		case json.Delim('['):
			stack = append(stack, &frame{})
		case json.Delim(']'), json.Delim('}'):
			stack = stack[:len(stack)-1]
		}
		if len(stack) > MaxDepth {
			return bad(fmt.Sprintf("The body is nested deeper than %d levels.", MaxDepth))
		}
	}
	return nil
}

// clip cuts s for an error message.
func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}

// unknownMember refuses a member m's keys do not name exactly.
func unknownMember(m map[string]json.RawMessage, allowed ...string) error {
	for k := range m {
		known := false
		for _, a := range allowed {
			if k == a {
				known = true
			}
		}
		if !known {
			return invalid("unknown_field", clip(k), "The field %q is not part of this object (field names are matched exactly).", clip(k))
		}
	}
	return nil
}

// stringField reads m[name] as a JSON string ("", false when absent).
func stringField(m map[string]json.RawMessage, name string) (string, bool, error) {
	raw, ok := m[name]
	if !ok {
		return "", false, nil
	}
	// null is no string: encoding/json would leave s "" and take it
	// (the schema's strings are never nullable).
	var s string
	if string(bytes.TrimSpace(raw)) == "null" || json.Unmarshal(raw, &s) != nil {
		return "", true, invalid("invalid_field", name, "%s must be a string.", name)
	}
	return s, true, nil
}

// objectField reads m[name] as a JSON object, compacted.
func objectField(m map[string]json.RawMessage, name string) (json.RawMessage, bool, error) {
	raw, ok := m[name]
	if !ok {
		return nil, false, nil
	}
	t := bytes.TrimSpace(raw)
	if len(t) == 0 || t[0] != '{' {
		return nil, true, invalid("invalid_field", name, "%s must be a JSON object.", name)
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, t); err != nil {
		return nil, true, invalid("invalid_field", name, "%s must be a JSON object.", name)
	}
	return buf.Bytes(), true, nil
}
