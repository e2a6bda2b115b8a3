package redact

import (
	"bytes"
	"encoding/json"
	"strings"
)

// JSONValue redacts every string in a decoded JSON value with hide, and
// hides the whole value of a key that names a secret ("password": …, a
// JSON Web Key's private members "d", "p", "q", "dp", "dq", "qi", "k",
// and "value" beside a "name" that names a secret) unless it holds an
// object, whose own keys are judged in turn.
func JSONValue(v any, hide func(string) string) any {
	switch t := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, e := range t {
			if secretMember(t, k) {
				if _, nested := e.(map[string]any); !nested {
					out[k] = Marker
					continue
				}
			}
			out[k] = JSONValue(e, hide)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = JSONValue(e, hide)
		}
		return out
	case string:
		return hide(t)
	}
	return v
}

// JSON redacts a tool call's JSON arguments as text: the redacted value,
// compact, keys sorted, without HTML escaping. Arguments with nothing to
// redact come back byte for byte as given, so what carries no secret is
// never rewritten; arguments that are not JSON are redacted as plain text.
func JSON(args string) string {
	return jsonWith(args, Secrets)
}

// QuotingJSON is JSON with every string redacted by Quoting with hidden:
// arguments that quote what a redaction hid elsewhere (see Hidden).
func QuotingJSON(args string, hidden []string) string {
	if len(hidden) == 0 {
		return JSON(args)
	}
	return jsonWith(args, func(s string) string { return Quoting(s, hidden) })
}

// jsonWith is JSON with hide redacting each string and the text that is
// not JSON.
func jsonWith(args string, hide func(string) string) string {
	dec := json.NewDecoder(strings.NewReader(args))
	dec.UseNumber() // numbers keep their exact text
	var v any
	if dec.Decode(&v) != nil || dec.More() {
		return hide(args)
	}
	changed := false
	red := JSONValue(v, func(s string) string {
		r := hide(s)
		if r != s {
			changed = true
		}
		return r
	})
	if !changed && !hidesKey(v) {
		return args
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if enc.Encode(red) != nil {
		return hide(args)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// hidesKey reports whether JSONValue hides a whole value of v because its
// key names a secret.
func hidesKey(v any) bool {
	switch t := v.(type) {
	case map[string]any:
		for k, e := range t {
			if _, nested := e.(map[string]any); secretMember(t, k) && !nested {
				return true
			}
			if hidesKey(e) {
				return true
			}
		}
	case []any:
		for _, e := range t {
			if hidesKey(e) {
				return true
			}
		}
	}
	return false
}

// secretMember reports whether the member k of the object m is a secret:
// its name says so, or m is a JSON Web Key and k one of its private parts.
func secretMember(m map[string]any, k string) bool {
	if SecretKey(k) {
		return true
	}
	if strings.EqualFold(k, "value") && namedSecret(m) {
		return true
	}
	_, jwk := m["kty"]
	return jwk && jwkPrivate[k]
}

// namedSecret reports whether the object m names its value a secret: a
// name or key member that says so ({"name":"DB_PASSWORD","value":…}, a
// Kubernetes or ECS variable), or the type SecureString (an SSM
// parameter).
func namedSecret(m map[string]any) bool {
	for k, v := range m {
		s, ok := v.(string)
		if !ok {
			continue
		}
		switch strings.ToLower(k) {
		case "name", "key", "keyname", "type":
			if namesASecret(s) {
				return true
			}
		}
	}
	return false
}
