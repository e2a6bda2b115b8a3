package redact

import (
	"encoding/base64"
	"encoding/hex"
	"regexp"
	"strings"
	"unicode/utf8"
)

// Secrets that are encoded: a credentials file in base64 piped to
// base64 -d, a kubeconfig or a Docker config.json in an environment
// variable, a private key as hex for xxd -r, a DER key or a PKCS#12 store
// without PEM armor. A blob is hidden when what it decodes to holds a
// secret (as these rules find them) or is a private key, and any blob a
// decoder writes into a credentials file is hidden whatever it holds. A
// blob decoded into an interpreter (| sh, | bash, eval) is code, and
// stays: hiding it would hide what runs.

var (
	// decoder is a command that decodes base64 or hex.
	decoder = regexp.MustCompile(`\b(?:base64|basenc|gbase64)\b[^\n;&|]*?[ \t](?:-d|-D|--decode)\b|\bxxd\b[^\n;&|]*?[ \t]-r|\bopenssl[ \t]+(?:base64|enc)\b[^\n;&|]*?[ \t]-d\b|\bcertutil\b[^\n;&|]*?-decode`)
	// intoInterpreter is a pipe or command that runs what it is given.
	intoInterpreter = regexp.MustCompile(`\|[ \t]*(?:sudo[ \t]+)?(?:ba|z|da|k|fi)?sh\b|\|[ \t]*(?:sudo[ \t]+)?(?:python[0-9.]*|perl|ruby|node|php|source|eval|xargs)\b|\beval\b|\bsource\b|<\(|\$\(`)
)

// decodedBlobs hides the encoded secrets of s, line by line, and the
// base64 lines of a wrapped blob (base64's 76 columns) together.
func decodedBlobs(s string, depth int) string {
	if depth >= maxQuoteDepth || len(s) < 24 {
		return s
	}
	lines := strings.Split(s, "\n")
	changed := false
	for i := 0; i < len(lines); i++ {
		// A wrapped blob: lines that are base64 alone, all as long as the
		// first but the last.
		if n := wrappedBlob(lines[i:]); n > 1 {
			var joined strings.Builder
			for _, l := range lines[i : i+n] {
				joined.WriteString(strings.TrimSpace(l))
			}
			if blobSecret(joined.String(), depth) {
				for j := i; j < i+n; j++ {
					l := lines[j]
					body := strings.TrimLeft(l, " \t")
					cr := ""
					if strings.HasSuffix(body, "\r") {
						cr = "\r"
					}
					lines[j] = l[:len(l)-len(body)] + Marker + cr
				}
				changed = true
			}
			i += n - 1
			continue
		}
		if r := lineBlobs(lines[i], depth); r != lines[i] {
			lines[i], changed = r, true
		}
	}
	if !changed {
		return s
	}
	return strings.Join(lines, "\n")
}

// wrappedBlob is how many lines from lines[0] make one wrapped blob (0 or
// 1: none).
func wrappedBlob(lines []string) int {
	width := -1
	n := 0
	for _, l := range lines {
		t := strings.TrimSpace(l)
		if len(t) < 16 || base64Run(t) != t {
			break
		}
		switch {
		case width < 0:
			if len(t)%4 != 0 || len(t) < 40 {
				return 0
			}
			width = len(t)
		case len(t) > width:
			return n
		case len(t) < width:
			return n + 1 // the last, shorter line
		}
		n++
	}
	return n
}

// lineBlobs hides the blobs of one line.
func lineBlobs(line string, depth int) string {
	if len(line) < 24 {
		return line
	}
	idx := blobRuns(line)
	if len(idx) == 0 {
		return line
	}
	// A decoder writing into a credentials file: every blob of the command
	// is the file's content.
	toCredentials := strings.Contains(line, "-") && decoder.MatchString(line) && writesCredentials(line)
	return rewriteGroup(line, idx, 0, func(m []int) (string, bool) {
		run := line[m[0]:m[1]]
		if m[0] > 0 && blobByte(line[m[0]-1]) || m[1] < len(line) && blobByte(line[m[1]]) {
			return "", false // part of a longer word: a path, a URL, a name
		}
		if strings.HasSuffix(run, Marker) || intoInterpreter.MatchString(commandAround(line, m[0], m[1])) {
			return "", false // decoded into an interpreter: code, shown
		}
		if !(toCredentials && randomLooking(run) || blobSecret(run, depth)) {
			return "", false
		}
		return Marker, true
	})
}

// blobRuns are the runs of base64 (standard or URL-safe, with their
// padding) or hex in line long enough to hold a credential (24 or more).
func blobRuns(line string) [][]int {
	var out [][]int
	for i := 0; i < len(line); {
		if !b64URLByte(line[i]) {
			i++
			continue
		}
		j := i
		for j < len(line) && b64URLByte(line[j]) {
			j++
		}
		for k := 0; k < 2 && j < len(line) && line[j] == '='; k++ {
			j++
		}
		if j-i >= 24 {
			out = append(out, []int{i, j})
		}
		i = j
	}
	return out
}

func b64URLByte(c byte) bool {
	return c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '+' || c == '/' || c == '_' || c == '-'
}

// commandAround is the command of line around line[from:to]: from the
// ;, && or || before it to the one after it (a pipeline stays whole).
func commandAround(line string, from, to int) string {
	start := 0
	for _, sep := range []string{";", "&&", "||"} {
		if i := strings.LastIndex(line[:from], sep); i >= 0 && i+len(sep) > start {
			start = i + len(sep)
		}
	}
	end := len(line)
	for _, sep := range []string{";", "&&", "||"} {
		if i := strings.Index(line[to:], sep); i >= 0 && to+i < end {
			end = to + i
		}
	}
	return line[start:end]
}

// looksLikeCode reports whether decoded text holds shell syntax a
// credentials file has no use for: then it may be a script that a later
// command runs, and the blob stays shown.
func looksLikeCode(t string) bool {
	return strings.Contains(t, "$(") || strings.Contains(t, "`") || strings.Contains(t, "|") ||
		strings.Contains(t, "; ") || strings.Contains(t, "&&") || strings.Contains(t, "#!")
}

// blobByte continues a blob run's word: it is not a blob of its own.
func blobByte(c byte) bool {
	return c == '.' || c == '\\' || c == '%' || c == ':' || c == '@' || c >= 0x80
}

// randomLooking is a run that has the mix of upper and lower case
// letters and digits random base64 has, or is hex with letters and
// digits: not a path or a word.
func randomLooking(run string) bool {
	if keyLike(run) {
		return true
	}
	return len(run) >= 32 && isHex(run) && strings.ContainsAny(run, "0123456789") && strings.ContainsAny(strings.ToLower(run), "abcdef")
}

func isHex(s string) bool {
	for i := 0; i < len(s); i++ {
		if !(s[i] >= '0' && s[i] <= '9' || s[i] >= 'a' && s[i] <= 'f' || s[i] >= 'A' && s[i] <= 'F') {
			return false
		}
	}
	return true
}

// blobSecret reports whether run decodes (as hex, or as base64) to a
// private key, or to text that holds a secret.
func blobSecret(run string, depth int) bool {
	for _, d := range decodings(run) {
		if privateDER(d) {
			return true
		}
		if t := string(d); textual(t) && !looksLikeCode(t) && secrets(t, depth+1) != t {
			return true
		}
	}
	return false
}

// decodings are what run may encode: hex (an even run of hex digits),
// standard or URL-safe base64, padded or not.
func decodings(run string) [][]byte {
	var out [][]byte
	if len(run)%2 == 0 && isHex(run) {
		if d, err := hex.DecodeString(run); err == nil {
			out = append(out, d)
		}
	}
	enc := base64.StdEncoding
	if strings.ContainsAny(run, "-_") {
		enc = base64.URLEncoding
	}
	if strings.ContainsAny(run, "-_") && strings.ContainsAny(run, "+/") {
		return out
	}
	if len(run)%4 != 0 {
		enc = enc.WithPadding(base64.NoPadding)
		run = strings.TrimRight(run, "=")
	}
	if d, err := enc.DecodeString(run); err == nil {
		out = append(out, d)
	}
	return out
}

// textual reports whether decoded bytes are text: valid UTF-8, nearly all
// printable (a credentials file, JSON, YAML, a PEM block).
func textual(s string) bool {
	if !utf8.ValidString(s) || len(s) < 8 {
		return false
	}
	bad := 0
	for _, r := range s {
		if r < 0x20 && r != '\n' && r != '\r' && r != '\t' || r == 0x7f || r == utf8.RuneError {
			bad++
		}
	}
	return bad*50 <= len(s)
}

// privateDER reports whether d is a private key in DER (PKCS#1 RSA, SEC1
// EC, PKCS#8, encrypted PKCS#8) or a PKCS#12 store, or an OpenSSH private
// key: a SEQUENCE whose first element is the version INTEGER 0, 1 or 3
// (a certificate's and a public key's first element is a SEQUENCE), or
// one whose algorithm is a password-based encryption (PKCS#5, PKCS#12).
func privateDER(d []byte) bool {
	if strings.HasPrefix(string(d), "openssh-key-v1\x00") {
		return true
	}
	if len(d) < 16 || d[0] != 0x30 {
		return false
	}
	i := 2
	switch {
	case d[1] == 0x81:
		i = 3
	case d[1] == 0x82:
		i = 4
	case d[1] == 0x83:
		i = 5
	case d[1] > 0x83:
		return false
	}
	if i+3 > len(d) {
		return false
	}
	if d[i] == 0x02 && d[i+1] == 0x01 && (d[i+2] == 0 || d[i+2] == 1 || d[i+2] == 3) {
		return true
	}
	// EncryptedPrivateKeyInfo: SEQUENCE { SEQUENCE { OID pkcs5 or pkcs12 PBE … } … }
	head := string(d[i:min(len(d), i+24)])
	return d[i] == 0x30 && (strings.Contains(head, "\x2a\x86\x48\x86\xf7\x0d\x01\x05") || strings.Contains(head, "\x2a\x86\x48\x86\xf7\x0d\x01\x0c"))
}

// credentialFiles are files whose whole content is a credential, by name.
var credentialFiles = set("credentials", "credentials.json", "credentials.toml", ".netrc", "_netrc", ".pgpass",
	".npmrc", ".pypirc", ".git-credentials", ".vault-token", ".my.cnf", ".env", "kubeconfig", "master.key",
	"id_rsa", "id_dsa", "id_ecdsa", "id_ed25519", "id_ecdsa_sk", "id_ed25519_sk", "hosts.yml", ".terraformrc",
	"terraform.rc", "application_default_credentials.json", ".dockercfg", "authorized_keys2")

// credentialExts are extensions of key and keystore files.
var credentialExts = []string{".pem", ".key", ".p12", ".pfx", ".jks", ".keystore", ".ppk", ".p8", ".der", ".age"}

// credentialPath reports whether a file written at p holds a credential:
// by its name (~/.aws/credentials, .netrc, id_ed25519, *.pem, *.p12),
// its place (~/.docker/config.json, ~/.kube/config, ~/.ssh/, a secrets
// directory), or a name that says secret (db_password, api-token.txt).
func credentialPath(p string) bool {
	p = strings.Trim(p, `"'`)
	if p == "" || strings.ContainsAny(p, "$`") {
		return false
	}
	lower := strings.ToLower(p)
	base := lower[strings.LastIndexByte(lower, '/')+1:]
	if credentialFiles[base] || strings.HasPrefix(base, ".env.") || strings.HasPrefix(base, "id_") && !strings.HasSuffix(base, ".pub") {
		return true
	}
	for _, ext := range credentialExts {
		if strings.HasSuffix(base, ext) {
			return true
		}
	}
	for _, dir := range []string{".docker/config.json", ".kube/config", "/.ssh/", "/secrets/", ".config/gcloud/"} {
		if strings.Contains(lower, dir) {
			return true
		}
	}
	name := p[strings.LastIndexByte(p, '/')+1:]
	for _, ext := range []string{".txt", ".json", ".yaml", ".yml", ".conf", ".cfg", ".ini"} {
		name = strings.TrimSuffix(name, ext)
	}
	return SecretKey(strings.TrimLeft(name, "."))
}

// writeTarget finds where a command line writes: > and >> redirections,
// and tee's files.
var writeTarget = regexp.MustCompile(`(?:[^<>&0-9]|^)[0-9]?>>?[ \t]*("[^"\n]*"|'[^'\n]*'|[^\s;&|<>()]+)|\btee\b((?:[ \t]+-[a-z]+)*)[ \t]+("[^"\n]*"|'[^'\n]*'|[^\s;&|<>()]+)`)

// writesCredentials reports whether line writes a credentials file.
func writesCredentials(line string) bool {
	for _, m := range writeTarget.FindAllStringSubmatch(line, -1) {
		if credentialPath(m[1]) || credentialPath(m[3]) {
			return true
		}
	}
	return false
}
