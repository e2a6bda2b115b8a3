// Package secretshapes is the corpus of secrets as they show up in
// commands, files and tool arguments that askops's tests redact: each
// shape a realistic example with the secret part marked. The redact
// package's tests check the redactor against it; the stores', Slack's and
// the console's tests check that what they keep and show holds none of it.
// It is for tests only.
package secretshapes

import (
	"crypto/ed25519"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
)

// fakes makes realistic fake secret values: the right alphabet and length,
// deterministic so a failure names the same value every run.
type fakes struct{ r *rand.Rand }

const (
	b64Chars = alnum + "+/"
	alnum    = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	upperD   = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	lowHex   = "0123456789abcdef"
	b64      = alnum + "+/"
	urlSafe  = alnum + "_-"
)

func (f fakes) of(alphabet string, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[f.r.IntN(len(alphabet))]
	}
	return string(b)
}

// mnemonic is n of the given words (the BIP-39 English list).
func mnemonic(f fakes, words []string, n int) string {
	out := make([]string, n)
	for i := range out {
		out[i] = words[f.r.IntN(len(words))]
	}
	return strings.Join(out, " ")
}

// Shape is one way a secret shows up in a command or a file: In, with
// Secret (the part that must not survive) in it.
type Shape struct {
	Name, In, Secret string
	// Around are the template's words that hold no part of the secret:
	// each must survive, so the approver still reads what the text does.
	Around []string
}

// All is the corpus. words is the BIP-39 English word list (the redact
// package ships it; a test reads it from there), for the mnemonic shapes.
// The fake secrets are deterministic, so a failure names the same value
// every run.
func All(words []string) []Shape {
	f := fakes{rand.New(rand.NewPCG(8, 2026))}
	pemLines := func(n int) (string, string) {
		var lines []string
		for range n {
			lines = append(lines, f.of(b64, 64))
		}
		lines = append(lines, f.of(b64, 22)+"==")
		return strings.Join(lines, "\n"), lines[0]
	}
	rsa, rsa0 := pemLines(4)
	pgp, _ := pemLines(3)
	ossh, _ := pemLines(3)
	ec, _ := pemLines(2)
	enc, _ := pemLines(2)
	gcpKey := f.of(b64, 64)

	shapes := []Shape{}
	add := func(name, tmpl, secret string) {
		var around []string
		for _, w := range strings.Fields(tmpl) {
			// A PGP armor checksum (=Ab12) is part of the key block.
			if !strings.Contains(w, "⟨S⟩") && !(len(w) == 5 && w[0] == '=') {
				around = append(around, w)
			}
		}
		shapes = append(shapes, Shape{name, strings.ReplaceAll(tmpl, "⟨S⟩", secret), secret, around})
	}
	// The nineteen the review found leaking.
	add("PGPASSWORD env", "PGPASSWORD=⟨S⟩ psql -h db -U app app", f.of(alnum, 18))
	add("curl -u user:pass", "curl -u deploy:⟨S⟩ https://ci.example/api", f.of(alnum, 16))
	add("curl -u quoted", "curl -s -u 'deploy:⟨S⟩' https://ci.example/api", f.of(alnum, 16))
	add("curl -uuser:pass attached", "curl -udeploy:⟨S⟩ https://ci.example/api", f.of(alnum, 16))
	add("docker login -p", "docker login -u bob -p ⟨S⟩ registry.example.com", f.of(alnum, 24))
	add("docker login --password", "docker login --username bob --password ⟨S⟩ ghcr.io", f.of(alnum, 24))
	add("podman login -p=", "podman login -u bob -p=⟨S⟩ quay.io", f.of(alnum, 24))
	add("sshpass -p", "sshpass -p ⟨S⟩ ssh root@10.0.0.7 uptime", f.of(alnum, 14))
	add("sshpass -p attached", "sshpass -p⟨S⟩ scp x root@10.0.0.7:", f.of(alnum, 14))
	add("aws configure set secret", "aws configure set aws_secret_access_key ⟨S⟩", f.of(b64, 40))
	add("aws configure set session token", "aws configure set default.aws_session_token ⟨S⟩ --profile p", f.of(b64, 60))
	add("PGP private key block", "gpg --import <<'EOF'\n-----BEGIN PGP PRIVATE KEY BLOCK-----\nVersion: GnuPG v2\n\n⟨S⟩\n=Ab12\n-----END PGP PRIVATE KEY BLOCK-----\nEOF", pgp)
	add("Azure AccountKey", `az storage blob list --connection-string "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=⟨S⟩;EndpointSuffix=core.windows.net"`, f.of(b64, 86)+"==")
	add(".npmrc _authToken", "echo '//registry.npmjs.org/:_authToken=⟨S⟩' >> ~/.npmrc", f.of(urlSafe, 36))
	add("Stripe whsec_", "STRIPE_WH=whsec_⟨S⟩ ./serve", f.of(alnum, 32))
	add("Hugging Face hf_", "huggingface-cli login --token hf_⟨S⟩", f.of(alnum, 34))
	add("SendGrid SG.", "curl -H 'X-Key: SG.⟨S⟩' https://api.sendgrid.com", f.of(urlSafe, 22)+"."+f.of(urlSafe, 43))
	add("Shopify shpat_", "echo shpat_⟨S⟩", f.of(lowHex, 32))
	add("DigitalOcean dop_v1_", "doctl auth init -t dop_v1_⟨S⟩", f.of(lowHex, 64))
	add("Vault hvs.", "vault kv get -address=https://v:8200 secret/x # hvs.⟨S⟩", f.of(urlSafe, 90))
	add("Telegram bot token", "curl https://api.telegram.org/bot5432198765:AA⟨S⟩/getMe", f.of(urlSafe, 33))
	add("AGE-SECRET-KEY-1", "echo AGE-SECRET-KEY-1⟨S⟩ > key.txt", f.of(upperD, 58))
	add("htpasswd -b", "htpasswd -b /etc/nginx/.htpasswd admin ⟨S⟩", f.of(alnum, 14))
	add("htpasswd -cb", "htpasswd -cbB .htpasswd admin ⟨S⟩", f.of(alnum, 14))
	add("htpasswd -nb", "htpasswd -nb admin ⟨S⟩", f.of(alnum, 14))
	// Private keys.
	add("RSA PEM", "cat > id_rsa <<EOF\n-----BEGIN RSA PRIVATE KEY-----\n⟨S⟩\n-----END RSA PRIVATE KEY-----\nEOF", rsa)
	add("OpenSSH key", "printf '%s\\n' '-----BEGIN OPENSSH PRIVATE KEY-----\n⟨S⟩\n-----END OPENSSH PRIVATE KEY-----' > k", ossh)
	add("EC key indented", "  -----BEGIN EC PRIVATE KEY-----\n  ⟨S⟩\n  -----END EC PRIVATE KEY-----", strings.ReplaceAll(ec, "\n", "\n  "))
	add("encrypted PKCS#8", "-----BEGIN ENCRYPTED PRIVATE KEY-----\n⟨S⟩\n-----END ENCRYPTED PRIVATE KEY-----", enc)
	add("PEM in JSON, literal \\n", `echo '{"private_key":"-----BEGIN PRIVATE KEY-----\n⟨S⟩\n-----END PRIVATE KEY-----\n"}' > sa.json`, gcpKey)
	add("PEM cut short", "-----BEGIN RSA PRIVATE KEY-----\n⟨S⟩", rsa0)
	// Provider tokens.
	add("GitHub classic PAT", "git clone https://ghp_⟨S⟩@github.com/o/r", f.of(alnum, 36))
	add("GitHub fine-grained", "GH_TOKEN=github_pat_⟨S⟩ gh pr list", "11A"+f.of(alnum, 19)+"_"+f.of(alnum, 59))
	add("GitHub app token", "git -c http.extraheader='x: ghs_⟨S⟩' fetch", f.of(alnum, 36))
	add("GitLab PAT", "glab auth login --token glpat-⟨S⟩", f.of(urlSafe, 20))
	add("GitLab deploy token", "echo gldt-⟨S⟩", f.of(urlSafe, 20))
	add("Slack bot token", "curl -d token=xoxb-⟨S⟩ https://slack.com/api/auth.test", "1234567890-"+f.of(alnum, 24))
	add("Slack app token", "SLACK_APP_TOKEN=xapp-⟨S⟩ ./bot", "1-A0123-"+f.of(alnum, 40))
	add("Slack webhook", "curl -X POST https://hooks.slack.com/services/T0123ABCD/B0456EFGH/⟨S⟩", f.of(alnum, 24))
	add("Discord webhook", "curl https://discord.com/api/webhooks/123456789012345678/⟨S⟩", f.of(urlSafe, 68))
	add("Discord bot token", "DISCORD=⟨S⟩ node bot.js", "M"+f.of(urlSafe, 23)+"."+f.of(urlSafe, 6)+"."+f.of(urlSafe, 27))
	add("OpenAI key", "export OPENAI_API_KEY=sk-⟨S⟩", f.of(alnum, 48))
	add("OpenAI project key", "curl -H 'Authorization: Bearer sk-proj-⟨S⟩' https://api.openai.com", f.of(urlSafe, 100))
	add("Anthropic key", "x-api-key: sk-ant-api03-⟨S⟩", f.of(urlSafe, 93))
	add("Stripe secret key", "curl https://api.stripe.com -u sk_live_⟨S⟩:", f.of(alnum, 24))
	add("Stripe restricted key", "echo rk_test_⟨S⟩", f.of(alnum, 24))
	add("npm token", "npm config set //registry.npmjs.org/:_authToken npm_⟨S⟩", f.of(alnum, 36))
	add("PyPI token", "twine upload -p pypi-⟨S⟩ dist/*", "AgEIcHlwaS5vcmc"+f.of(urlSafe, 60))
	add("Google API key", "curl 'https://maps.googleapis.com/x?key=AIza⟨S⟩'", f.of(urlSafe, 35))
	add("Google OAuth client secret", "echo GOCSPX-⟨S⟩", f.of(urlSafe, 28))
	add("Google OAuth access token", "curl -H 'X: ya29.⟨S⟩' https://www.googleapis.com", f.of(urlSafe, 120))
	add("Google OAuth refresh token", "echo 1//0⟨S⟩", f.of(urlSafe, 60))
	add("AWS access key id", "aws configure set aws_access_key_id AKIA⟨S⟩", f.of(upperD, 16))
	add("AWS STS key id", "echo ASIA⟨S⟩", f.of(upperD, 16))
	add("AWS secret env", "AWS_SECRET_ACCESS_KEY=⟨S⟩ aws s3 ls", f.of(b64, 40))
	add("Docker Hub PAT", "echo dckr_pat_⟨S⟩ | docker login -u bob --password-stdin", f.of(urlSafe, 27))
	add("Databricks token", "DATABRICKS_HOST=x databricks --token dapi⟨S⟩", f.of(lowHex, 32))
	add("Atlassian API token", "curl -u me@x.com:ATATT3⟨S⟩ https://x.atlassian.net", f.of(urlSafe, 180))
	add("Linear key", "echo lin_api_⟨S⟩", f.of(alnum, 40))
	add("Notion token", "echo ntn_⟨S⟩", f.of(alnum, 46))
	add("Grafana cloud token", "echo glc_⟨S⟩", f.of(alnum, 80))
	add("Grafana service account", "echo glsa_⟨S⟩", f.of(alnum, 32)+"_"+f.of(lowHex, 8))
	add("New Relic key", "echo NRAK-⟨S⟩", f.of(upperD, 27))
	add("Sentry token", "SENTRY=sntrys_⟨S⟩ make", f.of(alnum, 80))
	add("Doppler token", "echo dp.pt.⟨S⟩", f.of(alnum, 43))
	add("Pulumi token", "echo pul-⟨S⟩", f.of(lowHex, 40))
	add("Postman key", "echo PMAK-⟨S⟩", f.of(lowHex, 24)+"-"+f.of(lowHex, 34))
	add("Terraform Cloud token", "echo ⟨S⟩", f.of(alnum, 14)+".atlasv1."+f.of(urlSafe, 67))
	add("Fly.io token", "echo fo1_⟨S⟩", f.of(urlSafe, 43))
	add("Square token", "echo sq0atp-⟨S⟩", f.of(urlSafe, 22))
	add("Supabase token", "echo sbp_⟨S⟩", f.of(lowHex, 40))
	add("Replicate token", "echo r8_⟨S⟩", f.of(alnum, 37))
	add("Groq key", "echo gsk_⟨S⟩", f.of(alnum, 52))
	add("xAI key", "echo xai-⟨S⟩", f.of(alnum, 80))
	add("Perplexity key", "echo pplx-⟨S⟩", f.of(alnum, 48))
	add("Twilio API key", "echo SK⟨S⟩", f.of(lowHex, 32))
	add("Mailgun key", "curl -s --user 'api:key-⟨S⟩' https://api.mailgun.net", f.of(alnum, 32))
	add("Mailchimp key", "echo ⟨S⟩-us21", f.of(lowHex, 32))
	add("Contentful token", "echo CFPAT-⟨S⟩", f.of(urlSafe, 43))
	add("Dynatrace token", "echo dt0c01.⟨S⟩", f.of(upperD, 24)+"."+f.of(upperD, 64))
	add("PlanetScale token", "echo pscale_tkn_⟨S⟩", f.of(urlSafe, 43))
	add("RubyGems key", "echo rubygems_⟨S⟩", f.of(lowHex, 48))
	add("Heroku key", "echo HRKU-⟨S⟩", f.of(urlSafe, 60))
	add("Azure AD client secret", "az login --service-principal -u x -p ⟨S⟩ --tenant t", f.of(alnum, 3)+"8Q~"+f.of(urlSafe, 34))
	add("Azure SAS sig", "curl 'https://a.blob.core.windows.net/c/b?sv=2022-11-02&sig=⟨S⟩'", f.of(alnum, 43)+"%3D")
	add("Mapbox secret token", "echo sk.⟨S⟩", "eyJ"+f.of(urlSafe, 60)+"."+f.of(urlSafe, 22))
	add("JWT", "curl -b session=⟨S⟩ https://x", "eyJhbGciOiJIUzI1NiJ9.eyJ"+f.of(urlSafe, 40)+"."+f.of(urlSafe, 43))
	// Generic places for secrets.
	add("Authorization Basic", "curl -H 'Authorization: Basic ⟨S⟩' https://x", f.of(b64, 28)+"=")
	add("URL userinfo", "git push https://bob:⟨S⟩@gitlab.example.com/o/r", f.of(alnum, 20))
	add("postgres URL", "psql postgres://app:⟨S⟩@db:5432/app", f.of(alnum, 20))
	add("mysql -p attached", "mysqldump -uroot -p⟨S⟩ app > dump.sql", f.of(alnum, 12))
	add("redis-cli -a", "redis-cli -h cache -a ⟨S⟩ ping", f.of(alnum, 24))
	add("ldapsearch -w", "ldapsearch -x -D cn=admin -w ⟨S⟩ -b dc=x", f.of(alnum, 16))
	add("openssl -passout", "openssl genrsa -aes256 -passout pass:⟨S⟩ 2048", f.of(alnum, 16))
	add("smbclient -U user%pass", "smbclient //fs/share -U admin%⟨S⟩", f.of(alnum, 16))
	add("query access_token", "curl 'https://x.example/a?access_token=⟨S⟩&b=2'", f.of(alnum, 30))
	add("YAML password", "password: ⟨S⟩", f.of(alnum, 20))
	add("JSON client_secret", `{"client_secret":"⟨S⟩"}`, f.of(alnum, 30))
	add("--token=", "kubectl --token=⟨S⟩ get pods", f.of(alnum, 40))
	add("--api-key space", "tool --api-key ⟨S⟩ --verbose", f.of(alnum, 32))
	add("X-Api-Key header", "curl -H 'X-Api-Key: ⟨S⟩' https://x", f.of(alnum, 32))
	add("MYSQL_PWD env", "MYSQL_PWD=⟨S⟩ mysql app", f.of(alnum, 16))
	add("DB password in .env", "echo 'DB_PASSWORD=⟨S⟩' >> .env", f.of(alnum, 16))
	add("client secret glued", "export CLIENTSECRET=⟨S⟩", f.of(alnum, 30))
	// Round 3: the shapes the third review found leaking, and the rest of
	// gitleaks' families and the credential positions the first two rounds
	// had not covered.
	hex := func(n int) string { return f.of(lowHex, n) }
	uuid := func() string { return hex(8) + "-" + hex(4) + "-" + hex(4) + "-" + hex(4) + "-" + hex(12) }
	// Key blocks of every format.
	putty, _ := pemLines(2)
	add("PuTTY private key", "cat > id.ppk <<'EOF'\nPuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nComment: eddsa-key-20260101\nPublic-Lines: 2\nAAAAC3NzaC1lZDI1NTE5AAAAIBNxdW9yZXB1YmxpY2tleWJ5dGVzMDEyMzQ1Njc4\nOQ==\nPrivate-Lines: 3\n⟨S⟩\nPrivate-MAC: "+hex(64)+"\nEOF", putty)
	ssh2, _ := pemLines(3)
	add("RFC 4716 private key", "---- BEGIN SSH2 ENCRYPTED PRIVATE KEY ----\nComment: \"rsa-key-20260101\"\n⟨S⟩\n---- END SSH2 ENCRYPTED PRIVATE KEY ----", ssh2)
	dsa, _ := pemLines(3)
	add("DSA PEM", "-----BEGIN DSA PRIVATE KEY-----\n⟨S⟩\n-----END DSA PRIVATE KEY-----", dsa)
	legacy, _ := pemLines(3)
	add("encrypted legacy PEM", "-----BEGIN RSA PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,"+strings.ToUpper(hex(32))+"\n\n⟨S⟩\n-----END RSA PRIVATE KEY-----", legacy)
	crlf, _ := pemLines(2)
	add("PEM with CRLF", "-----BEGIN PRIVATE KEY-----\r\n"+"⟨S⟩"+"\r\n-----END PRIVATE KEY-----\r\n", strings.ReplaceAll(crlf, "\n", "\r\n"))
	pgp2, _ := pemLines(3)
	add("PGP secret subkeys export", "gpg --import <<EOF\n-----BEGIN PGP PRIVATE KEY BLOCK-----\nComment: exported subkeys\n\n⟨S⟩\n=Zx9q\n-----END PGP PRIVATE KEY BLOCK-----\nEOF", pgp2)
	b64pem := base64.StdEncoding.EncodeToString([]byte("-----BEGIN RSA PRIVATE KEY-----\n" + rsa + "\n-----END RSA PRIVATE KEY-----\n"))
	add("base64 PEM in a command", "echo ⟨S⟩ | base64 -d > /etc/ssl/private/app.key", b64pem)
	add("kubeconfig client-key-data", "users:\n- name: admin\n  user:\n    client-certificate-data: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0t\n    client-key-data: ⟨S⟩", b64pem)
	add("k8s secret tls.key", "apiVersion: v1\nkind: Secret\ntype: kubernetes.io/tls\ndata:\n  tls.key: ⟨S⟩", b64pem)
	add("JWK RSA d", `echo '{"kty":"RSA","e":"AQAB","n":"`+f.of(urlSafe, 86)+`","d":"⟨S⟩"}' > key.jwk`, f.of(urlSafe, 86))
	add("JWK EC d", `cat > k.json <<'EOF'`+"\n"+`{"kty": "EC", "crv": "P-256", "x": "`+f.of(urlSafe, 43)+`", "y": "`+f.of(urlSafe, 43)+`", "d": "⟨S⟩"}`+"\nEOF", f.of(urlSafe, 43))
	add("JWK oct k", `{"keys":[{"kty":"oct","kid":"hmac-1","alg":"HS256","k":"⟨S⟩"}]}`, f.of(urlSafe, 43))
	add("JWK RSA p", `{"kty":"RSA","p":"⟨S⟩","e":"AQAB"}`, f.of(urlSafe, 64))
	add("JWK RSA q", `{"kty":"RSA","q":"⟨S⟩","e":"AQAB"}`, f.of(urlSafe, 64))
	add("JWK RSA dp", `{"kty":"RSA","dp":"⟨S⟩","e":"AQAB"}`, f.of(urlSafe, 64))
	add("JWK RSA dq", `{"kty":"RSA","dq":"⟨S⟩","e":"AQAB"}`, f.of(urlSafe, 64))
	add("JWK RSA qi", `{"kty":"RSA","qi":"⟨S⟩","e":"AQAB"}`, f.of(urlSafe, 64))
	// Credential positions of the tools that take a password there.
	add("mariadb -p quoted attached", "mariadb -h db -u root -p'⟨S⟩' -e 'show databases'", f.of(alnum, 14))
	add("zip -P", "zip -r -P ⟨S⟩ backup.zip reports/", f.of(alnum, 14))
	add("zip --password", "zip --password ⟨S⟩ -r backup.zip reports/", f.of(alnum, 14))
	add("unzip -P", "unzip -o -P ⟨S⟩ backup.zip -d /tmp/out", f.of(alnum, 14))
	add("7z -p attached", "7z a -p⟨S⟩ -mhe=on backup.7z reports/", f.of(alnum, 14))
	add("7z x -p quoted", "7z x -p'⟨S⟩' backup.7z -o/tmp/out", f.of(alnum, 14))
	add("openssl enc -k", "openssl enc -aes-256-cbc -salt -in db.sql -out db.enc -k ⟨S⟩", f.of(alnum, 16))
	add("openssl enc -pass pass:", "openssl enc -d -aes-256-cbc -in db.enc -out db.sql -pass pass:⟨S⟩", f.of(alnum, 16))
	add("openssl pkcs12 -password pass:", "openssl pkcs12 -export -in c.pem -inkey k.pem -out c.p12 -password pass:⟨S⟩", f.of(alnum, 16))
	add("openssl enc -K raw key", "openssl enc -aes-128-cbc -K ⟨S⟩ -iv "+hex(32)+" -in f -out f.enc", hex(32))
	add("sqlcmd -P", `sqlcmd -S tcp:db,1433 -U sa -P ⟨S⟩ -Q "SELECT 1"`, f.of(alnum, 16))
	add("bcp -P", "bcp dbo.orders out orders.dat -S db -U sa -P ⟨S⟩ -c", f.of(alnum, 16))
	add("sshpass -p quoted", "sshpass -p '⟨S⟩' ssh deploy@10.0.0.7 uptime", f.of(alnum, 14))
	add("curl --proxy-user", "curl --proxy-user bob:⟨S⟩ -x http://proxy:3128 https://x.example", f.of(alnum, 14))
	add("lftp -u user,pass", "lftp -u deploy,⟨S⟩ sftp://files.example.com", f.of(alnum, 14))
	add("mount cifs password=", "mount -t cifs //fs/share /mnt -o username=bob,password=⟨S⟩,vers=3.0", f.of(alnum, 14))
	add("ssh-keygen -N", "ssh-keygen -t ed25519 -N '⟨S⟩' -f ~/.ssh/id_deploy", f.of(alnum, 14))
	add("ssh-keygen -P old", "ssh-keygen -p -P ⟨S⟩ -N '' -f ~/.ssh/id_rsa", f.of(alnum, 14))
	add("keytool -srcstorepass", "keytool -importkeystore -srckeystore a.p12 -srcstorepass ⟨S⟩ -destkeystore k.jks", f.of(alnum, 14))
	add("keytool -keypass", "keytool -genkeypair -alias app -keystore k.jks -keypass ⟨S⟩ -dname CN=app", f.of(alnum, 14))
	add("mongosh -p", "mongosh --host db -u admin -p ⟨S⟩ --authenticationDatabase admin", f.of(alnum, 16))
	add("psql conninfo password=", `psql "host=db user=app password=⟨S⟩ dbname=app"`, f.of(alnum, 16))
	add("rabbitmqctl add_user", "rabbitmqctl add_user deploy ⟨S⟩", f.of(alnum, 16))
	add("rabbitmqctl change_password", "rabbitmqctl change_password deploy ⟨S⟩", f.of(alnum, 16))
	add("mysqladmin password", "mysqladmin -u root password ⟨S⟩", f.of(alnum, 16))
	add("net user", "net user svc_backup ⟨S⟩ /add", f.of(alnum, 16))
	add("git config token", "git config --global github.token ⟨S⟩", f.of(alnum, 40))
	add("yarn config npmAuthToken", "yarn config set npmAuthToken ⟨S⟩", uuid())
	add("kubectl --from-literal", "kubectl create secret generic db --from-literal=password=⟨S⟩ -n prod", f.of(alnum, 18))
	add("helm --set rootPassword", "helm install db bitnami/postgresql --set auth.postgresPassword=⟨S⟩", f.of(alnum, 18))
	add("vault userpass", "vault login -method=userpass username=bob password=⟨S⟩", f.of(alnum, 18))
	add("wget --password", "wget --user=bob --password=⟨S⟩ https://files.example/r.tgz", f.of(alnum, 16))
	add("gpg --passphrase", "gpg --batch --pinentry-mode loopback --passphrase ⟨S⟩ -d secrets.gpg", f.of(alnum, 16))
	// Passwords fed on stdin: the echoed or printf'd text before the pipe.
	add("echo | docker login --password-stdin", "echo ⟨S⟩ | docker login -u bob --password-stdin ghcr.io", f.of(alnum, 20))
	add("printf | helm --password-stdin", "printf '%s' '⟨S⟩' | helm registry login -u bob --password-stdin r.example.io", f.of(alnum, 20))
	add("echo | sudo -S", "echo '⟨S⟩' | sudo -S apt-get update", f.of(alnum, 14))
	add("echo -n | sudo -kS", "echo -n \"⟨S⟩\" | sudo -kS systemctl restart app", f.of(alnum, 14))
	add("echo | chpasswd", "echo \"deploy:⟨S⟩\" | sudo chpasswd", f.of(alnum, 14))
	add("echo | passwd --stdin", "echo ⟨S⟩ | passwd --stdin deploy", f.of(alnum, 14))
	add("echo -e | passwd", "echo -e '⟨S⟩\\n⟨S⟩' | passwd deploy", f.of(alnum, 14))
	add("echo | gh auth --with-token", "echo ⟨S⟩ | gh auth login --with-token", f.of(alnum, 40))
	add("printf | gh secret set", "printf '%s\\n' ⟨S⟩ | gh secret set DB_PASSWORD", f.of(alnum, 20))
	add("echo | sudo -S in prose", "denied: not with echo ⟨S⟩ | sudo -S reboot, ask the on-call", f.of(alnum, 14))
	add("ssh host echo | sudo -S", "ssh bastion echo ⟨S⟩ | sudo -S systemctl restart app", f.of(alnum, 14))
	add("sudo -S here-string", "sudo -S id <<< '⟨S⟩'", f.of(alnum, 14))
	add("echo | cryptsetup", "echo \"⟨S⟩\" | cryptsetup luksOpen /dev/sdb1 data", f.of(alnum, 20))
	add("printf aws credentials", "printf 'aws_secret_access_key=⟨S⟩\\n' >> ~/.aws/credentials", f.of(b64, 40))
	add("printf aws ini with spaces", "printf '[default]\\nregion = eu-west-1\\naws_secret_access_key = ⟨S⟩\\n' > ~/.aws/credentials", f.of(b64, 40))
	add("git credential approve", "printf 'protocol=https\\nhost=github.com\\nusername=bob\\npassword=⟨S⟩\\n' | git credential approve", f.of(alnum, 20))
	// .netrc and .pgpass lines.
	add(".netrc one line", `echo "machine github.com login bob password ⟨S⟩" >> ~/.netrc`, f.of(alnum, 20))
	add(".netrc heredoc", "cat > ~/.netrc <<EOF\nmachine api.heroku.com\n  login me@example.com\n  password ⟨S⟩\nEOF", uuid())
	add(".pgpass line", "echo 'db.internal:5432:app:app:⟨S⟩' >> ~/.pgpass", f.of(alnum, 18))
	add(".pgpass wildcards", "echo '*:*:*:postgres:⟨S⟩' > ~/.pgpass && chmod 600 ~/.pgpass", f.of(alnum, 18))
	// Environment assignments whose name says secret.
	add("MYSQL_ROOT_PW", "MYSQL_ROOT_PW=⟨S⟩ docker compose up -d", f.of(alnum, 16))
	add("GH_PAT", "GH_PAT=⟨S⟩ ./release.sh", f.of(alnum, 40))
	add("docker -e POSTGRES_PASSWORD", "docker run -d -e POSTGRES_PASSWORD=⟨S⟩ postgres:16", f.of(alnum, 16))
	add("SMTP_PASS", "export SMTP_PASS=⟨S⟩", f.of(alnum, 16))
	add("REDIS_PASSWD", "export REDIS_PASSWD=⟨S⟩", f.of(alnum, 16))
	add("DB_PASSWORD_PROD", "export DB_PASSWORD_PROD=⟨S⟩", f.of(alnum, 16))
	add("APP_SECRET_VALUE", "export APP_SECRET_VALUE=⟨S⟩", f.of(alnum, 32))
	add("AZURE_CLIENT_CREDENTIALS", "export AZURE_CLIENT_CREDENTIALS=⟨S⟩", f.of(alnum, 32))
	add("SIGNING_KEY", "SIGNING_KEY=⟨S⟩ go run ./cmd/sign", f.of(b64, 44))
	add("TF_VAR_db_password", "TF_VAR_db_password=⟨S⟩ terraform apply", f.of(alnum, 16))
	add("env DEPLOY_TOKEN", "env DEPLOY_TOKEN=⟨S⟩ make deploy", f.of(alnum, 32))
	// JSON and YAML members with secret-ish keys at any depth.
	add("MCP input pw", `{"host": "db", "pw": "⟨S⟩"}`, f.of(alnum, 16))
	add("nested passwd", `{"db":{"auth":{"user":"app","passwd":"⟨S⟩"}}}`, f.of(alnum, 16))
	add("YAML nested pwd", "database:\n  user: app\n  pwd: ⟨S⟩", f.of(alnum, 16))
	add("dockerconfigjson auth", `{"auths":{"ghcr.io":{"auth":"⟨S⟩"}}}`, f.of(b64, 40)+"=")
	add("JSON apiKey", `const cfg = {"apiKey": "⟨S⟩", "region": "eu"}`, f.of(alnum, 32))
	add("JSON private_key (not PEM)", `{"private_key": "⟨S⟩"}`, f.of(b64, 44))
	add("escaped JSON in curl -d", `curl -d "{\"username\":\"bob\",\"password\":\"⟨S⟩\"}" https://x.example/login`, f.of(alnum, 16))
	add("XML password element", "<server><id>nexus</id><username>ci</username><password>⟨S⟩</password></server>", f.of(alnum, 16))
	add("NuGet ClearTextPassword", `<add key="ClearTextPassword" value="⟨S⟩" />`, f.of(alnum, 16))
	add("PHP define", "define('DB_PASSWORD', '⟨S⟩');", f.of(alnum, 16))
	add("TOML token", `token = "⟨S⟩"`, f.of(alnum, 32))
	add("properties password", "spring.datasource.password=⟨S⟩", f.of(alnum, 16))
	add("GitHub Actions env", "env:\n  DEPLOY_KEY: ⟨S⟩", f.of(alnum, 32))
	// HTTP headers.
	add("Cookie header", "curl -H 'Cookie: session=⟨S⟩' https://app.example", f.of(urlSafe, 32))
	add("Set-Cookie header", "Set-Cookie: sid=⟨S⟩; Path=/; HttpOnly", f.of(urlSafe, 32))
	add("curl -b cookie", "curl -b 'sessionid=⟨S⟩' https://app.example", f.of(alnum, 32))
	add("curl --cookie", `curl --cookie "JSESSIONID=⟨S⟩" https://app.example`, strings.ToUpper(hex(32)))
	add("Okta SSWS", `curl -H "Authorization: SSWS ⟨S⟩" https://acme.okta.com/api/v1/users`, "00"+f.of(urlSafe, 40))
	add("X-Auth-Token", "curl -H 'X-Auth-Token: ⟨S⟩' https://x.example", f.of(alnum, 32))
	add("GitLab PRIVATE-TOKEN", "curl --header 'PRIVATE-TOKEN: ⟨S⟩' https://gitlab.example/api/v4/user", f.of(alnum, 20))
	add("Proxy-Authorization", "curl -H 'Proxy-Authorization: Basic ⟨S⟩' https://x.example", f.of(b64, 24)+"=")
	add("apikey header", "curl -H 'apikey: ⟨S⟩' https://x.supabase.co/rest/v1/t", f.of(alnum, 40))
	add("Bearer opaque", "curl -H 'Authorization: Bearer ⟨S⟩' https://x.example", f.of(alnum, 40))
	// URL userinfo and query parameters.
	add("query session", "curl 'https://app.example/dl?session=⟨S⟩'", f.of(alnum, 32))
	add("X-Amz-Signature", "curl 'https://b.s3.amazonaws.com/k?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Date=20260101T000000Z&X-Amz-Expires=900&X-Amz-SignedHeaders=host&X-Amz-Signature=⟨S⟩'", hex(64))
	add("X-Goog-Signature", "curl 'https://storage.googleapis.com/b/o?X-Goog-Algorithm=GOOG4-RSA-SHA256&X-Goog-Expires=900&X-Goog-Signature=⟨S⟩'", hex(128))
	add("query signature", "curl 'https://cdn.example/v.mp4?expires=1767225600&signature=⟨S⟩'", f.of(urlSafe, 43))
	add("query sig", "curl 'https://cdn.example/a?exp=1767225600&sig=⟨S⟩'", hex(40))
	add("OAuth code", "curl 'https://app.example/callback?code=⟨S⟩&state=xyz'", f.of(urlSafe, 40))
	add("fragment access_token", "open 'https://app.example/cb#access_token=⟨S⟩&token_type=bearer'", f.of(urlSafe, 40))
	add("query X-Amz-Security-Token", "curl 'https://b.s3.amazonaws.com/k?X-Amz-Security-Token=⟨S⟩'", f.of(urlSafe, 60))
	add("redis URL no user", "redis-cli -u redis://:⟨S⟩@cache:6379/0 ping", f.of(alnum, 24))
	add("amqp URL", "celery -b amqp://app:⟨S⟩@mq:5672// worker", f.of(alnum, 20))
	add("mongodb+srv URL", `mongosh "mongodb+srv://app:⟨S⟩@cluster0.x.mongodb.net/app"`, f.of(alnum, 20))
	add(".git-credentials", "echo 'https://bob:⟨S⟩@github.com' >> ~/.git-credentials", f.of(alnum, 20))
	// Provider tokens from gitleaks' rule set.
	add("Slack xoxd cookie", "curl -b 'd=xoxd-⟨S⟩' https://app.slack.com/api/users.list", f.of(alnum, 40)+"%2F"+f.of(alnum, 30)+"%3D")
	add("Slack xoxc", "curl -d token=xoxc-⟨S⟩ https://slack.com/api/auth.test", "1234567890-1234567890-"+f.of(alnum, 40))
	add("Slack xoxe refresh", "echo xoxe-1-⟨S⟩", f.of(alnum, 140))
	add("Slack xoxe.xoxp", "echo xoxe.xoxp-1-⟨S⟩", f.of(alnum, 140))
	add("1Password service account", "echo ops_⟨S⟩", "eyJ"+f.of(b64, 250))
	add("Tailscale key", "tailscale up --auth-key=tskey-auth-⟨S⟩", "k1234CNTRL-"+f.of(alnum, 32))
	add("Airtable PAT", "echo ⟨S⟩", "pat"+f.of(alnum, 14)+"."+hex(64))
	add("Alibaba key id", "echo LTAI⟨S⟩", f.of(alnum, 20))
	add("Artifactory key", "echo AKCp⟨S⟩", f.of(alnum, 69))
	add("Clojars token", "echo CLOJARS_⟨S⟩", hex(60))
	add("Duffel token", "echo duffel_test_⟨S⟩", f.of(urlSafe, 43))
	add("EasyPost key", "echo EZAK⟨S⟩", hex(54))
	add("Flutterwave secret", "echo FLWSECK_TEST-⟨S⟩-X", hex(32))
	add("Frame.io token", "echo fio-u-⟨S⟩", f.of(urlSafe, 64))
	add("HubSpot PAT", "echo pat-na1-⟨S⟩", uuid())
	add("Infracost key", "echo ico-⟨S⟩", f.of(alnum, 32))
	add("OpenShift token", "echo sha256~⟨S⟩", f.of(urlSafe, 43))
	add("Plaid access token", "echo access-sandbox-⟨S⟩", uuid())
	add("Prefect key", "echo pnu_⟨S⟩", f.of(alnum, 36))
	add("Readme key", "echo rdme_⟨S⟩", hex(70))
	add("Brevo key", "echo xkeysib-⟨S⟩", hex(64)+"-"+f.of(alnum, 16))
	add("Shippo token", "echo shippo_live_⟨S⟩", hex(40))
	add("Sourcegraph token", "echo sgp_⟨S⟩", hex(16)+"_"+hex(40))
	add("Typeform token", "echo tfp_⟨S⟩", f.of(urlSafe, 59))
	add("SonarQube token", "echo squ_⟨S⟩", hex(40))
	add("Buildkite token", "echo bkua_⟨S⟩", hex(40))
	add("Hugging Face org token", "echo api_org_⟨S⟩", f.of(alnum, 34))
	add("LangSmith key", "echo lsv2_pt_⟨S⟩", hex(32)+"_"+hex(10))
	add("Figma token", "echo figd_⟨S⟩", f.of(urlSafe, 40))
	add("Firebase FCM server key", "echo AAAA⟨S⟩", f.of(urlSafe, 7)+":"+f.of(urlSafe, 140))
	add("Cloudflare origin CA key", "echo v1.0-⟨S⟩", hex(24)+"-"+hex(146))
	add("Harness PAT", "echo pat.⟨S⟩", f.of(urlSafe, 22)+"."+hex(24)+"."+f.of(alnum, 20))
	add("Octopus key", "echo API-⟨S⟩", f.of(upperD, 26))
	add("GitLab runner registration", "gitlab-runner register --url https://gitlab.example --registration-token GR1348941⟨S⟩", f.of(urlSafe, 20))
	add("CircleCI PAT", "echo CCIPAT_⟨S⟩", f.of(alnum, 22)+"_"+hex(40))
	add("OpenRouter key", "echo sk-or-v1-⟨S⟩", hex(64))
	add("Anthropic admin key", "echo sk-ant-admin01-⟨S⟩", f.of(urlSafe, 93))
	add("Pinecone key", "echo pcsk_⟨S⟩", f.of(alnum, 6)+"_"+f.of(alnum, 60))
	// The rest of gitleaks' rule set: more provider formats, a Secret's
	// data whatever its keys, names and separators of other languages.
	add("1Password secret key", "echo A3-⟨S⟩", f.of(upperD, 6)+"-"+f.of(upperD, 11)+"-"+f.of(upperD, 5)+"-"+f.of(upperD, 5)+"-"+f.of(upperD, 5))
	add("Adobe client secret", "echo p8e-⟨S⟩", f.of(alnum, 32))
	add("ClickHouse key", "echo 4b1d⟨S⟩", f.of(alnum, 38))
	add("Artifactory reference token", "echo cmVmd⟨S⟩", f.of(alnum, 59))
	add("Defined Networking key", "echo dnkey-⟨S⟩", f.of(urlSafe, 26)+"-"+f.of(urlSafe, 52))
	add("Facebook page token", "echo EAAM⟨S⟩", f.of(alnum, 120))
	add("Square EAAA token", "echo EAAA⟨S⟩", f.of(urlSafe, 60))
	add("Grafana API key", "echo eyJrIjoi⟨S⟩", f.of(alnum, 80))
	add("base64 JWT", "echo ZXlK⟨S⟩", "aGJHY2lPaU"+f.of(alnum, 60))
	add("Intra42 secret", "echo s-s4t2ud-⟨S⟩", hex(64))
	add("Scalingo token", "echo tk-us-⟨S⟩", f.of(urlSafe, 48))
	add("Settlemint token", "echo sm_pat_⟨S⟩", f.of(alnum, 16))
	add("MaxMind license key", "echo ⟨S⟩_mmk", f.of(alnum, 6)+"_"+f.of(alnum, 29))
	add("Teams webhook", "curl -d @msg.json https://acme.webhook.office.com/webhookb2/⟨S⟩", uuid()+"@"+uuid()+"/IncomingWebhook/"+hex(32)+"/"+uuid())
	add("GitLab agent token", "echo glagent-⟨S⟩", f.of(urlSafe, 50))
	add("Stripe prod key", "echo sk_prod_⟨S⟩", f.of(alnum, 32))
	add("GitLab session cookie", "curl -b _gitlab_session=⟨S⟩ https://gitlab.example/api/v4/user", hex(32))
	add("k8s Secret data, any key", "apiVersion: v1\nkind: Secret\nmetadata:\n  name: app\ndata:\n  db-url: ⟨S⟩", f.of(b64, 60)+"==")
	add("k8s Secret stringData block", "kind: Secret\nstringData:\n  settings.ini: |\n    ⟨S⟩\nmetadata:\n  name: app", "[db]\n    dsn = "+f.of(alnum, 30))
	add("YAML block password", "db:\n  password: |\n    ⟨S⟩\n  user: app", f.of(alnum, 24))
	add("YAML folded token", "auth:\n  - token: >-\n      ⟨S⟩\n  - name: ci", f.of(alnum, 40))
	add("Ruby hash rocket", "config = { 'password' => '⟨S⟩' }", f.of(alnum, 16))
	add("Go :=", `apiToken := "⟨S⟩"`, f.of(alnum, 32))
	add("Makefile ?=", "DEPLOY_TOKEN ?= ⟨S⟩", f.of(alnum, 32))
	add("name with token inside", "export GITHUB_TOKEN_RO=⟨S⟩", f.of(alnum, 40))
	add("name with creds", "export SVC_CREDS=⟨S⟩", f.of(alnum, 40))
	// BIP-39 mnemonic phrases.
	for _, n := range []int{12, 15, 18, 21, 24} {
		add(fmt.Sprintf("BIP-39 %d words", n), `cast wallet import dev --mnemonic "⟨S⟩"`, mnemonic(f, words, n))
	}
	numbered := func(n int, perLine int) string {
		ws := strings.Fields(mnemonic(f, words, n))
		var b strings.Builder
		for i, w := range ws {
			fmt.Fprintf(&b, "%d. %s", i+1, w)
			switch {
			case i == len(ws)-1:
			case (i+1)%perLine == 0:
				b.WriteString("\n")
			default:
				b.WriteString("  ")
			}
		}
		return b.String()
	}
	add("BIP-39 numbered, one a line", "cat > backup.txt <<EOF\n⟨S⟩\nEOF", numbered(12, 1))
	add("BIP-39 numbered, four a line", "Recovery phrase:\n⟨S⟩", numbered(24, 4))
	add("BIP-39 in a file", "echo ⟨S⟩ > seed.txt", mnemonic(f, words, 12))
	add("BIP-39 in JSON", `{"wallet":"dev","phrase":"⟨S⟩"}`, mnemonic(f, words, 24))
	round4(f, add, pemLines)
	return shapes
}

// ReadWords reads the BIP-39 word list the redact package ships, from a
// test in a sibling package (its working directory is its own).
func ReadWords() ([]string, error) {
	b, err := os.ReadFile("../redact/bip39_english.txt")
	if err != nil {
		return nil, err
	}
	return strings.Fields(string(b)), nil
}

// Corpus is every shape, over the word list ReadWords reads: what a
// sibling package's corpus test sends through its code. A word list that
// cannot be read fails t.
func Corpus(t testing.TB) []Shape {
	t.Helper()
	words, err := ReadWords()
	if err != nil {
		t.Fatal(err)
	}
	return All(words)
}

// Parts are the pieces of sh's secret a leak would show: its runs of
// token characters (letters, digits, spaces and + / = _ . ~ % -) six long
// or more, spaces trimmed, so a secret split over lines, by literal \r\n
// or by a backslash-newline leaks if any piece of it survives (and a
// phrase is one piece, not its words).
func (sh Shape) Parts() []string {
	var out []string
	for _, p := range strings.FieldsFunc(sh.Secret, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("+/=_.~%- \t", r))
	}) {
		if p = strings.TrimSpace(p); len(p) >= 6 {
			out = append(out, p)
		}
	}
	return out
}

// Leaked reports whether text holds a piece of sh's secret (see Parts),
// raw or as JSON or Go would quote it.
func (sh Shape) Leaked(text string) bool {
	for _, part := range sh.Parts() {
		if strings.Contains(text, part) || strings.Contains(text, strings.Trim(fmt.Sprintf("%q", part), `"`)) {
			return true
		}
	}
	return false
}

// CommandArgs is sh's text as a shell tool call's arguments, in the JSON
// an agent sends them.
func (sh Shape) CommandArgs() string { return jsonText(map[string]string{"command": sh.In}) }

// WriteArgs is sh's text as the content of a file write to path, in the
// JSON an agent sends it.
func (sh Shape) WriteArgs(path string) string {
	return jsonText(map[string]string{"path": path, "content": sh.In})
}

// LeakedInJSON is Leaked on v's JSON: what an API or a Slack payload
// carries. A v that has no JSON fails t.
func (sh Shape) LeakedInJSON(t testing.TB, v any) bool {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return sh.Leaked(string(b))
}

func jsonText(v map[string]string) string {
	b, _ := json.Marshal(v) // a map of strings always has JSON
	return string(b)
}

// round4 adds the shapes the fourth review found leaking (a credentials
// file in base64 piped to base64 -d, Tencent's secretKey, gh secret set
// --body, a PEM key with \r\n line ends, a secret split by a
// backslash-newline, vault kv put … password=- <<<) and their families
// across vendors: blobs decoded into credential files, continuation lines,
// line ends, the secret-bearing flags and operands of CLIs, here-strings
// and here-documents feeding a secret, name/value pairs, connection
// strings and URLs.
func round4(f fakes, add func(name, tmpl, secret string), pemLines func(int) (string, string)) {
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	awsSecret := f.of(b64Chars, 40)
	awsCreds := "[default]\naws_access_key_id = AKIA" + f.of(upperD, 16) + "\naws_secret_access_key = " + awsSecret + "\n"
	// Decoded into a credentials file, or holding one whatever its name.
	add("base64 credentials | base64 -d > ~/.aws/credentials", "echo ⟨S⟩ | base64 -d > ~/.aws/credentials", b64(awsCreds))
	add("base64 --decode <<< > ~/.docker/config.json", "base64 --decode <<< ⟨S⟩ > ~/.docker/config.json",
		b64(`{"auths":{"registry.example.io":{"auth":"`+b64("ci:"+f.of(alnum, 20))+`"}}}`))
	add("base64 kubeconfig | tee ~/.kube/config", "echo '⟨S⟩' | base64 -d | tee ~/.kube/config > /dev/null",
		b64("apiVersion: v1\nkind: Config\nusers:\n- name: ci\n  user:\n    token: "+f.of(urlSafe, 60)+"\n"))
	wrapped := b64(awsCreds + "[prod]\naws_access_key_id = AKIA" + f.of(upperD, 16) + "\naws_secret_access_key = " + f.of(b64Chars, 40) + "\n")
	var lines []string
	for len(wrapped) > 76 {
		lines, wrapped = append(lines, wrapped[:76]), wrapped[76:]
	}
	add("base64 -d heredoc, 76 columns", "base64 -d > ~/.aws/credentials <<'EOF'\n⟨S⟩\nEOF", strings.Join(append(lines, wrapped), "\n"))
	ossh, _ := pemLines(3)
	add("hex | xxd -r -p > ~/.ssh/id_ed25519", "printf %s ⟨S⟩ | xxd -r -p > ~/.ssh/id_ed25519",
		hex.EncodeToString([]byte("-----BEGIN OPENSSH PRIVATE KEY-----\n"+ossh+"\n-----END OPENSSH PRIVATE KEY-----\n")))
	add("base64 service-account JSON in an env", "export GCP_SA=⟨S⟩",
		b64(`{"type":"service_account","project_id":"p","private_key_id":"`+f.of(lowHex, 40)+`","client_secret":"`+f.of(alnum, 24)+`"}`))
	der, _ := x509.MarshalPKCS8PrivateKey(ed25519.NewKeyFromSeed([]byte(f.of(alnum, 32))))
	add("base64 DER private key, no armor", "echo ⟨S⟩ | base64 -d > signing.der", base64.StdEncoding.EncodeToString(der))
	pfx := append([]byte{0x30, 0x82, 0x09, 0x71, 0x02, 0x01, 0x03, 0x30, 0x82, 0x09, 0x37, 0x06, 0x09, 0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x07, 0x01}, []byte(f.of(alnum, 90))...)
	add("base64 PKCS#12 to a .p12", "echo ⟨S⟩ | base64 -d > client.p12", base64.StdEncoding.EncodeToString(pfx))
	// Continuation lines: the secret split by a backslash-newline.
	add("split by backslash-newline, env", "export AWS_SECRET_ACCESS_KEY=⟨S⟩ && aws s3 ls", f.of(alnum, 20)+"\\\n"+f.of(alnum, 20))
	add("split by backslash-newline, ghp_", "git clone https://ghp_⟨S⟩@github.com/o/r", f.of(alnum, 12)+"\\\n"+f.of(alnum, 24))
	add("split by backslash-newline, header", "curl -H \"Authorization: Bearer \\\n  ⟨S⟩\" https://api.example.com", f.of(alnum, 40))
	add("split by backslash-newline, flag and value", "tool deploy --api-token \\\n    ⟨S⟩ --verbose", f.of(alnum, 32))
	add("split by backslash-newline, Stripe", "curl https://api.stripe.com/v1/charges -u sk_live_⟨S⟩: -d amount=100", f.of(alnum, 10)+"\\\n"+f.of(alnum, 14))
	// Line ends and escapes a PEM key is written with.
	crlf, _ := pemLines(2)
	add("PEM in JSON, literal \\r\\n", `{"private_key":"-----BEGIN PRIVATE KEY-----\r\n⟨S⟩\r\n-----END PRIVATE KEY-----\r\n"}`, strings.ReplaceAll(crlf, "\n", `\r\n`))
	cr, _ := pemLines(2)
	add("PEM with CR line ends", "-----BEGIN EC PRIVATE KEY-----\r⟨S⟩\r-----END EC PRIVATE KEY-----\r", strings.ReplaceAll(cr, "\n", "\r"))
	slashes, _ := pemLines(2)
	add("PEM in JSON with escaped slashes", `{"private_key":"-----BEGIN PRIVATE KEY-----\n⟨S⟩\n-----END PRIVATE KEY-----\n"}`,
		strings.ReplaceAll(strings.ReplaceAll(slashes, "/", `\/`), "\n", `\n`))
	quoted, _ := pemLines(2)
	add("PEM as printf's quoted words", "printf '%s\\n' '-----BEGIN OPENSSH PRIVATE KEY-----' '⟨S⟩' '-----END OPENSSH PRIVATE KEY-----' > ~/.ssh/id_deploy",
		strings.ReplaceAll(quoted, "\n", "' '"))
	// CLIs' secret-bearing flags and operands.
	add("gh secret set --body", "gh secret set DB_PASSWORD --body ⟨S⟩ --repo o/r", f.of(alnum, 20))
	add("gh secret set -b attached", "gh secret set API_KEY -b⟨S⟩", f.of(alnum, 20))
	add("gh secret set --body=", "gh secret set WEBHOOK --body='⟨S⟩' --env prod", f.of(alnum, 20))
	add("glab variable set", "glab variable set DEPLOY_TOKEN ⟨S⟩ --masked", f.of(alnum, 20))
	add("Tencent tccli configure pairs", "tccli configure set secretId $TENCENTCLOUD_SECRET_ID secretKey ⟨S⟩ region ap-guangzhou", f.of(alnum, 32))
	add("Tencent SecretId", "export TENCENTCLOUD_SECRET_ID=AKID⟨S⟩", f.of(alnum, 32))
	add("Tencent coscmd -s", "coscmd config -a $COS_SECRET_ID -s ⟨S⟩ -b bucket-1250000000 -r ap-beijing", f.of(alnum, 32))
	add("Alibaba ossutil -k", "ossutil config -e oss-cn-hangzhou.aliyuncs.com -i $OSS_ACCESS_KEY_ID -k ⟨S⟩", f.of(alnum, 30))
	add("Huawei obsutil -k=", "obsutil config -i="+f.of(upperD, 20)+" -k=⟨S⟩ -e=obs.cn-north-4.myhuaweicloud.com", f.of(alnum, 40))
	add("Huawei SDK SK env", "HUAWEICLOUD_SDK_SK=⟨S⟩ terraform apply", f.of(alnum, 40))
	add("vault kv put password=- <<<", "vault kv put secret/db password=- <<< ⟨S⟩", f.of(alnum, 20))
	add("vault kv put any key", "vault kv put -mount=secret app api=⟨S⟩", f.of(alnum, 24))
	add("vault login token operand", "vault login ⟨S⟩", "s."+f.of(alnum, 24))
	add("kubectl create secret --from-literal any key", "kubectl create secret generic app --from-literal=stripe=⟨S⟩ -n prod", f.of(alnum, 24))
	add("fly secrets set any key", "fly secrets set WEBHOOK_URL_SIG=⟨S⟩ -a app", f.of(alnum, 24))
	add("az keyvault secret set --value", "az keyvault secret set --vault-name kv --name db --value ⟨S⟩", f.of(alnum, 24))
	add("aws ssm put-parameter SecureString", "aws ssm put-parameter --name /prod/db/password --type SecureString --value ⟨S⟩ --overwrite", f.of(alnum, 24))
	add("mc alias set", "mc alias set prod https://s3.example.com $AWS_ACCESS_KEY_ID ⟨S⟩", f.of(b64Chars, 40))
	add("rclone config create pairs", "rclone config create r2 s3 provider Cloudflare access_key_id "+f.of(lowHex, 32)+" secret_access_key ⟨S⟩ endpoint https://x.r2.cloudflarestorage.com", f.of(lowHex, 64))
	add("poetry config pypi-token", "poetry config pypi-token.pypi ⟨S⟩", f.of(alnum, 40))
	add("poetry config http-basic", "poetry config http-basic.internal bob ⟨S⟩", f.of(alnum, 20))
	add("twine -p opaque", "twine upload -u bob -p ⟨S⟩ --repository-url https://pypi.example.com dist/*", f.of(alnum, 20))
	add("cargo login token", "cargo login ⟨S⟩", "cio"+f.of(alnum, 32))
	add("docker login -p attached", "docker login registry.example.io -u bob -p⟨S⟩", f.of(alnum, 24))
	add("unrar -p attached", "unrar x -p⟨S⟩ backup.rar /tmp/out/", f.of(alnum, 16))
	add("httpie -a", "http -a bob:⟨S⟩ https://api.example.com/me", f.of(alnum, 20))
	add("curl --oauth2-bearer", "curl --oauth2-bearer ⟨S⟩ https://api.example.com/me", f.of(alnum, 40))
	add("curl -u with a variable user", `curl -X POST https://api.twilio.com/2010-04-01/Accounts/x/Messages.json -u "$TWILIO_SID:⟨S⟩"`, f.of(lowHex, 32))
	// Here-strings and here-documents feeding a secret.
	add("read VAR <<<", "read -r DB_PASSWORD <<< '⟨S⟩'", f.of(alnum, 20))
	add("kubectl --from-file=/dev/stdin <<<", "kubectl create secret generic api --from-file=token=/dev/stdin <<< ⟨S⟩", f.of(alnum, 32))
	add("sshfs password_stdin <<<", "sshfs -o password_stdin bob@files:/srv /mnt/files <<< '⟨S⟩'", f.of(alnum, 16))
	add("docker login heredoc", "docker login -u bob --password-stdin registry.example.io <<EOF\n⟨S⟩\nEOF", f.of(alnum, 24))
	add("gcloud secrets create stdin", "printf %s ⟨S⟩ | gcloud secrets create db-pass --data-file=-", f.of(alnum, 24))
	// A bare value echoed into a file that holds one secret.
	add("echo > ~/.vault-token", "echo ⟨S⟩ > ~/.vault-token", "hvs"+f.of(alnum, 24))
	add("echo > config/master.key", "echo ⟨S⟩ > config/master.key", f.of(lowHex, 32))
	add("printf > /run/secrets/db_password", "printf %s ⟨S⟩ > /run/secrets/db_password", f.of(alnum, 20))
	// Names beside their values.
	add("k8s env name/value", "env:\n  - name: DB_PASSWORD\n    value: ⟨S⟩\n  - name: LOG_LEVEL\n    value: info", f.of(alnum, 20))
	add("JSON name/value (ECS)", `{"environment":[{"name":"STRIPE_SECRET","value":"⟨S⟩"},{"name":"REGION","value":"eu"}]}`, f.of(alnum, 24))
	add("SSM SecureString output", `{"Parameter":{"Name":"/prod/db/conn","Type":"SecureString","Value":"⟨S⟩","Version":3}}`, f.of(alnum, 24))
	// Tokens and URLs.
	add("JWE compact", "curl -b token=⟨S⟩ https://x.example", "eyJhbGciOiJSU0EtT0FFUCIsImVuYyI6IkEyNTZHQ00ifQ."+f.of(urlSafe, 80)+"."+f.of(urlSafe, 16)+"."+f.of(urlSafe, 60)+"."+f.of(urlSafe, 22))
	add("URL password with @", "git clone https://bob:⟨S⟩@git.example.com/o/r", f.of(alnum, 8)+"@"+f.of(alnum, 8))
	add("Azure DevOps PAT as URL user", "git clone https://⟨S⟩@dev.azure.com/org/proj/_git/repo", f.of("abcdefghijklmnopqrstuvwxyz234567", 52))
	add("Oracle sqlplus user/pass@", "sqlplus scott/⟨S⟩@//db.example.com:1521/ORCL @report.sql", f.of(alnum, 16))
	add("JDBC Oracle thin", `java -jar app.jar --url "jdbc:oracle:thin:scott/⟨S⟩@db:1521:ORCL"`, f.of(alnum, 16))
	add("Go MySQL DSN", `DSN="app:⟨S⟩@tcp(db:3306)/app?parseTime=true" ./server`, f.of(alnum, 16))
	add("ODBC PWD in braces", `isql -k "Driver={ODBC Driver 18};Server=db;UID=sa;PWD={⟨S⟩};"`, f.of(alnum, 8)+";"+f.of(alnum, 8))
	add("Azure Service Bus SharedAccessKey", `export SB="Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=Root;SharedAccessKey=⟨S⟩"`, f.of(b64Chars, 43)+"=")
	add("npm _auth", "npm config set //registry.example.com/:_auth ⟨S⟩", b64("bob:"+f.of(alnum, 16)))
}
