package redact

import "strings"

// A key name (an environment variable, a flag, a JSON or YAML member, a
// header, a query parameter) says its value is a secret by its words:
// DB_PASSWORD, MYSQL_ROOT_PW, GH_PAT, clientSecret, tls.key, X-Api-Key.
// The name is cut into words at _ - . / : and at a lower-to-upper case
// change, and judged by its last word, or by a PASS… or SECRET… word
// anywhere unless the last word says the value is about the secret, not
// the secret itself (PASSWORD_FILE, secretName, --password-stdin).

// tailWords end a name whose value is a secret.
var tailWords = set("pass", "password", "passwords", "passwd", "passphrase", "passcode", "passkey",
	"pwd", "pw", "pat", "token", "tokens", "secret", "secrets", "credential", "credentials",
	"auth", "apikey", "cookie", "privatekey", "secretkey", "accesskey", "creds", "mnemonic",
	// a cloud's secret key beside its access key (HUAWEICLOUD_SDK_SK, --sk)
	"sk")

// anywhereWords make a name secret wherever they stand in it (*_PASS*,
// *_SECRET*).
var anywhereWords = set("pass", "password", "passwd", "passphrase", "passcode", "secret", "token",
	"apikey", "credential", "credentials", "creds", "pwd")

// metaWords end a name whose value is about a secret but is not one: where
// it is kept, what it is called, how it is read.
var metaWords = set("file", "files", "path", "dir", "name", "names", "id", "ids", "arn", "ref", "env",
	"var", "length", "len", "min", "max", "policy", "enabled", "disabled", "type", "hint", "prompt",
	"url", "uri", "version", "mode", "field", "header", "param", "count", "manager", "backend",
	"provider", "required", "reset", "stdin", "fd", "command", "cmd", "helper", "store", "source",
	"sources", "namespace", "mount", "engine", "label", "labels", "expiry", "expires", "ttl", "rotation",
	"format", "kind", "scope", "scopes", "algorithm", "alg", "endpoint", "alias", "public", "expiration",
	"lifetime", "interval", "timeout", "seconds", "audience", "issuer", "prefix", "suffix", "size", "location", "host", "port",
	"user", "username", "login", "email", "owner", "by", "at", "date", "time", "created", "updated")

// keyPairs are the words before "key" that make "…-key" and "…Key" a
// secret; after _ or . any key is one (aws_secret_access_key, tls.key),
// but --sort-key and partitionKey name a field.
var keyPairs = set("api", "access", "private", "secret", "signing", "encryption", "master", "auth",
	"account", "license", "ssh", "deploy", "client", "shared", "storage", "service", "admin", "root",
	"app", "webhook", "hmac", "jwt", "session", "crypt", "decryption", "cipher", "consumer", "subscription")

// exactNames are secrets whose words alone would not say so.
var exactNames = set("authorization", "proxy-authorization", "set-cookie", "client-key-data",
	"x-amz-security-token", "ssh-privatekey", "_gitlab_session", "gitlab_session")

// gluedWords end a name written without separators (PGPASSWORD,
// CLIENTSECRET, MYSQLPWD); only words that cannot be the tail of an
// ordinary word count ("bypass", "monkey" are not secrets).
var gluedWords = []string{"password", "passwd", "passphrase", "token", "secret", "apikey", "accountkey",
	"accesskey", "privatekey", "authkey", "masterkey", "secretkey", "storepass", "keypass"}

func set(words ...string) map[string]bool {
	m := make(map[string]bool, len(words))
	for _, w := range words {
		m[w] = true
	}
	return m
}

// nameWords cuts a key name into lower-case words and the separator
// before each (0 for the first, 'A' for a case change).
func nameWords(k string) (words []string, seps []byte) {
	start := 0
	var sep byte
	flush := func(end int, next byte) {
		if end > start {
			words = append(words, strings.ToLower(k[start:end]))
			seps = append(seps, sep)
		}
		sep = next
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		switch {
		case c == '_' || c == '-' || c == '.' || c == '/' || c == ':' || c == ' ':
			flush(i, c)
			start = i + 1
		case c >= 'A' && c <= 'Z' && i > start && k[i-1] >= 'a' && k[i-1] <= 'z':
			flush(i, 'A')
			start = i
		}
	}
	flush(len(k), 0)
	return words, seps
}

// SecretKey reports whether a value stored under the key name k is a secret
// whatever it looks like ("password", "X-Api-Key", "Authorization",
// "MYSQL_ROOT_PW", "tls.key"). PWD and OLDPWD are directories, not
// passwords.
func SecretKey(k string) bool {
	if k == "PWD" || k == "OLDPWD" || k == "" {
		return false
	}
	lower := strings.ToLower(strings.Trim(k, "-_"))
	if exactNames[lower] {
		return true
	}
	words, seps := nameWords(strings.Trim(k, "-_"))
	if len(words) == 0 {
		return false
	}
	last := words[len(words)-1]
	switch {
	case metaWords[last]:
		return false
	case tailWords[last]:
		return true
	case (last == "key" || last == "keys") && len(words) > 1:
		if s := seps[len(seps)-1]; s == '_' || s == '.' || keyPairs[words[len(words)-2]] {
			return true
		}
	}
	for _, w := range words[:len(words)-1] {
		if anywhereWords[w] {
			return true
		}
	}
	for _, g := range gluedWords {
		if strings.HasSuffix(lower, g) {
			return true
		}
	}
	return false
}

// queryNames are query parameters (and cookies) whose value is a secret
// there, though the same word elsewhere is not: ?session=, ?sig=, ?code=.
var queryNames = set("session", "sessionid", "session_id", "sid", "sig", "signature", "x-amz-signature",
	"x-goog-signature", "code", "key", "jwt", "ticket", "otp")

// secretParam reports whether a URL query parameter (or fragment
// parameter) named k holds a secret.
func secretParam(k string) bool {
	return queryNames[strings.ToLower(k)] || SecretKey(k)
}
