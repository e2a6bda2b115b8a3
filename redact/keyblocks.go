package redact

import (
	"encoding/base64"
	"regexp"
	"strconv"
	"strings"
)

// Private keys that are not PEM blocks: PuTTY's .ppk files, PEM encoded
// once more in base64 (kubeconfig's client-key-data, a Kubernetes
// Secret's tls.key), and JSON Web Keys' private members.

// puttyPrivateLines is the header before a PuTTY key's private part.
var puttyPrivateLines = regexp.MustCompile(`(?m)^[ \t]*Private-Lines:[ \t]*([0-9]{1,3})[ \t]*\r?$`)

// puttyKeys hides the Private-Lines of every PuTTY-User-Key-File: the
// public lines, the comment and the MAC stay.
func puttyKeys(s string) string {
	if !strings.Contains(s, "PuTTY-User-Key-File-") {
		return s
	}
	return rewriteAfter(s, puttyPrivateLines.FindAllStringSubmatchIndex(s, -1), func(b *strings.Builder, m []int) int {
		n, _ := strconv.Atoi(s[m[2]:m[3]])
		p := m[1]
		for ; n > 0 && p < len(s) && s[p] == '\n'; n-- {
			end := strings.IndexByte(s[p+1:], '\n')
			if end < 0 {
				end = len(s)
			} else {
				end += p + 1
			}
			line := s[p+1 : end]
			trimmed := strings.TrimLeft(line, " \t")
			run := base64Run(strings.TrimRight(trimmed, "\r"))
			if run == "" || run != strings.TrimRight(trimmed, "\r") {
				break // not key material: shown, and the block ends
			}
			b.WriteByte('\n')
			b.WriteString(line[:len(line)-len(trimmed)])
			b.WriteString(Marker)
			b.WriteString(trimmed[len(run):])
			p = end
		}
		return p
	})
}

// base64PEM is a run of base64 that starts with "-----BEGIN" encoded.
var base64PEM = regexp.MustCompile(`LS0tLS1CRUdJTi[A-Za-z0-9+/]{20,}={0,2}`)

// base64Keys hides base64 that decodes to a PEM private key block; a
// certificate (LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0t) stays.
func base64Keys(s string) string {
	if !strings.Contains(s, "LS0tLS1CRUdJTi") {
		return s
	}
	return base64PEM.ReplaceAllStringFunc(s, func(run string) string {
		head := run[:min(len(run), 80)&^3]
		dec, err := base64.StdEncoding.DecodeString(head)
		if err != nil || !strings.Contains(string(dec), "PRIVATE KEY") {
			return run
		}
		return Marker
	})
}

// jwkMember is a JSON Web Key's private member in JSON text: RSA's d, p,
// q, dp, dq, qi, EC and OKP's d, a symmetric key's k.
var jwkMember = regexp.MustCompile(`"(?:d|p|q|dp|dq|qi|k)"[ \t]*:[ \t]*"([A-Za-z0-9_-]{8,})"`)

// jwkPrivate are those members' names (see JSONValue).
var jwkPrivate = set("d", "p", "q", "dp", "dq", "qi", "k", "oth")

// jwkKeys hides the private members of JSON Web Keys in text that has a
// "kty" member.
func jwkKeys(s string) string {
	if !strings.Contains(s, `"kty"`) {
		return s
	}
	return replaceGroup(s, jwkMember, 1, func([]string) bool { return true }, func(string, []string) string { return Marker })
}

// secretDataKey starts a Kubernetes Secret's data or stringData map.
var (
	kindSecret    = regexp.MustCompile(`(?m)\bkind:[ \t]*["']?Secret["']?[ \t]*\r?$`)
	secretDataKey = regexp.MustCompile(`(?m)^([ \t]*)(?:data|stringData):[ \t]*\r?$`)
)

// kubernetesSecrets hides every value under data: and stringData: of a
// manifest of kind Secret, whatever its key is called (db-url:,
// config.json:): in a Secret each one is. A block scalar's lines (key: |)
// are hidden line by line; the keys stay.
func kubernetesSecrets(s string) string {
	if !strings.Contains(s, "Secret") || !kindSecret.MatchString(s) {
		return s
	}
	lines := strings.Split(s, "\n")
	changed := false
	for i := 0; i < len(lines); i++ {
		m := secretDataKey.FindStringSubmatch(lines[i])
		if m == nil {
			continue
		}
		indent := len(m[1])
		block := -1 // indent of the key whose block scalar is being hidden
		for i+1 < len(lines) {
			l := lines[i+1]
			body := strings.TrimLeft(l, " \t")
			in := len(l) - len(body)
			if strings.TrimSpace(body) == "" {
				i++
				continue
			}
			if in <= indent {
				break // the map ended
			}
			i++
			cr := ""
			if strings.HasSuffix(l, "\r") {
				cr = "\r"
			}
			if block >= 0 && in > block {
				// YAML data, not shell: nothing here runs
				if body != Marker+cr {
					lines[i] = l[:in] + Marker + cr
					changed = true
				}
				continue
			}
			block = -1
			key, v, ok := strings.Cut(body, ":")
			v = strings.TrimSpace(v)
			if strings.HasPrefix(v, "#") {
				v = "" // a comment, no value
			}
			if !ok || strings.ContainsAny(key, " \t") {
				continue
			}
			switch {
			case v == "":
			case strings.ContainsAny(v, ";|&`$<>") && !strings.HasPrefix(v, "|") && !strings.HasPrefix(v, ">"):
				// Shell syntax: a command follows the value on its line
				// (a manifest pasted into a command line). Only the value's
				// first word is the value; the rest is shown.
				word, rest, _ := strings.Cut(v, " ")
				if word != "" && !mayBeCode(word) && !strings.HasSuffix(strings.Trim(word, `"'`), Marker) {
					lines[i] = l[:in] + key + ": " + quotedMarker(word) + " " + rest + cr
					changed = true
				}
			case strings.HasPrefix(v, "|") || strings.HasPrefix(v, ">"):
				block = in
			case !strings.HasSuffix(strings.Trim(v, `"'`), Marker):
				lines[i] = l[:in] + key + ": " + quotedMarker(v) + cr
				changed = true
			}
		}
	}
	if !changed {
		return s
	}
	return strings.Join(lines, "\n")
}

// yamlBlockKey is a YAML key whose value is a block scalar (key: |, key: >-).
var yamlBlockKey = regexp.MustCompile(`^([ \t]*(?:-[ \t]+)?)["']?([A-Za-z0-9_.-]+)["']?:[ \t]*[|>][-+0-9]*[ \t]*\r?$`)

// yamlSecretBlocks hides the lines of a block scalar under a key that
// names a secret (password: |, tls.key: >-): the key-value rule sees only
// the "|".
func yamlSecretBlocks(s string) string {
	lines := strings.Split(s, "\n")
	changed := false
	for i := 0; i < len(lines); i++ {
		m := yamlBlockKey.FindStringSubmatch(lines[i])
		if m == nil || !SecretKey(m[2]) {
			continue
		}
		indent := len(m[1])
		for i+1 < len(lines) {
			l := lines[i+1]
			body := strings.TrimLeft(l, " \t")
			if strings.TrimSpace(body) != "" && len(l)-len(body) <= indent {
				break
			}
			i++
			if strings.TrimSpace(body) == "" || strings.HasPrefix(body, Marker) || strings.HasPrefix(body, "-----") {
				continue // blank, done, or a key block's armor (privateKeys hides its body)
			}
			cr := ""
			if strings.HasSuffix(l, "\r") {
				cr = "\r"
			}
			lines[i] = l[:len(l)-len(body)] + Marker + cr
			changed = true
		}
	}
	if !changed {
		return s
	}
	return strings.Join(lines, "\n")
}
