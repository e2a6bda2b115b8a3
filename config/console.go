package config

import (
	"crypto/ecdsa"
	"crypto/tls"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/askops/askops/internal/consoleuser"
	"github.com/askops/askops/internal/webpush"
)

// ConsoleConfig is the local approvals console (package console).
type ConsoleConfig struct {
	// Enabled turns the console on beside Slack. Without a slack section
	// serve runs the console alone, whatever this says.
	Enabled bool `yaml:"enabled"`
	// Listen is where it serves; loopback by default, since whoever holds a
	// sign-in link may decide.
	Listen string `yaml:"listen"`
	// User is the name people signing in decide as ("console:" + User);
	// default $USER.
	User string `yaml:"user"`
	// SlackUser is the Slack user id of the person who signs in, if they
	// have one: a quorum then counts the console's approval as theirs (once
	// with their Slack click). Without it the console's user may be anyone,
	// and counts toward a quorum beside nobody named (see People).
	SlackUser string `yaml:"slack_user"`
	// TLSFiles (tls_cert, tls_key): with both, the console serves HTTPS,
	// as a phone reaching it over a network should (and as browsers
	// require for notifications anywhere but the machine itself).
	TLSFiles `yaml:",inline"`

	// WebPush pushes each new Ask to the devices whose console asked for
	// notifications, with no console tab open (Web Push, VAPID).
	WebPush bool `yaml:"web_push"`
	// VAPIDSubject is the contact push services may use about askops'
	// pushes: mailto:… or https:…. Apple's push service refuses a
	// localhost one, so set it for Safari and iOS.
	VAPIDSubject string `yaml:"vapid_subject"`
	// VAPIDPrivateKey is the VAPID key (base64url of the raw P-256
	// scalar, env ASKOPS_VAPID_PRIVATE_KEY); empty: the serve makes one
	// and keeps it in its store (Redis: shared by every replica).
	VAPIDPrivateKey Secret `yaml:"vapid_private_key"`
	// PushAllowPrivate accepts push endpoints on plain http or
	// non-public addresses: tests and a push service of one's own only.
	PushAllowPrivate bool `yaml:"push_allow_private"`
}

// DefaultVAPIDSubject is console.vapid_subject when the file leaves it
// out.
const DefaultVAPIDSubject = "mailto:askops@localhost"

// Subject is the VAPID contact: vapid_subject, else DefaultVAPIDSubject.
func (c ConsoleConfig) Subject() string {
	if c.VAPIDSubject == "" {
		return DefaultVAPIDSubject
	}
	return c.VAPIDSubject
}

// VAPIDKey is vapid_private_key read; nil when it is unset.
func (c ConsoleConfig) VAPIDKey() (*ecdsa.PrivateKey, error) {
	if c.VAPIDPrivateKey == "" {
		return nil, nil
	}
	return webpush.ParseVAPIDKey([]byte(c.VAPIDPrivateKey.Reveal()))
}

// pushProblems checks the web push keys.
func (c ConsoleConfig) pushProblems() Problems {
	var ps Problems
	if s := c.VAPIDSubject; s != "" {
		u, err := url.Parse(s)
		switch {
		case err != nil || (u.Scheme != "mailto" && u.Scheme != "https"):
			ps.add("console.vapid_subject", "want a mailto: or https: contact, got %q", s)
		case u.Scheme == "mailto" && !strings.Contains(u.Opaque, "@"):
			ps.add("console.vapid_subject", "want mailto:someone@example.com, got %q", s)
		case u.Scheme == "https" && u.Host == "":
			ps.add("console.vapid_subject", "want an https URL with a host, got %q", s)
		}
	}
	if _, err := c.VAPIDKey(); err != nil {
		ps = append(ps, Problem{Key: "console.vapid_private_key", Msg: err.Error() + " (the value is not shown)"})
	}
	if !c.WebPush && (c.VAPIDSubject != "" || c.VAPIDPrivateKey != "" || c.PushAllowPrivate) {
		ps = append(ps, Problem{Key: "console.web_push", Msg: "vapid_subject, vapid_private_key and push_allow_private do nothing without web_push: true"})
	}
	return ps
}

// TLS is the console's TLS configuration from tls_cert and tls_key; nil
// when neither is set. It reads the files, so a bad pair is an error here,
// at start, not at the first phone's handshake.
func (c ConsoleConfig) TLS() (*tls.Config, error) { return c.TLSFiles.load("console") }

// DefaultConsoleListen is console.listen when the file leaves it out.
const DefaultConsoleListen = "127.0.0.1:8080"

// NoSlack reports whether the file has no slack section: serve then runs
// the local console alone.
func (c Config) NoSlack() bool { return c.noSlack }

// local reports whether cmd runs the console alone: serve (and its
// check-config) with no slack section.
func (c Config) local(cmd Command) bool {
	return c.noSlack && (cmd == Serve || cmd == CheckConfig)
}

// runLocal reports whether cmd is a run that asks the serve on this
// machine (its console): run with no slack section.
func (c Config) runLocal(cmd Command) bool { return c.noSlack && cmd == Run }

// ConsoleOn reports whether serve serves the console.
func (c Config) ConsoleOn() bool { return c.noSlack || c.Console.Enabled }

// consoleProblems checks the console section when the console will run.
func (c Config) consoleProblems(cmd Command) Problems {
	if cmd != Serve && cmd != CheckConfig {
		return nil
	}
	var ps Problems
	if !c.ConsoleOn() {
		if c.Console.WebPush {
			return Problems{{Key: "console.web_push", Msg: "the console sends the pushes: set console.enabled: true too"}}
		}
		return nil
	}
	_, port, err := net.SplitHostPort(c.Console.Listen)
	if err != nil {
		return Problems{{Key: "console.listen", Msg: fmt.Sprintf("want host:port such as %s, got %q", DefaultConsoleListen, c.Console.Listen)}}
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		ps.add("console.listen", "bad port %q", port)
	} else if !c.noSlack && n != 0 {
		if _, hport, err := net.SplitHostPort(c.HTTP.Listen); err == nil && hport == port {
			ps.add("console.listen", "port %s is http.listen's too; give the console another (e.g. 127.0.0.1:8081)", port)
		}
	}
	if c.Console.User != "" {
		if err := consoleuser.Check(c.Console.User); err != nil {
			ps = append(ps, Problem{Key: "console.user", Msg: err.Error()})
		}
	}
	ps = append(ps, c.Console.TLSFiles.problems("console")...)
	ps = append(ps, c.Console.pushProblems()...)
	if u := c.Console.SlackUser; u != "" && !slackUserIDRe.MatchString(u) {
		ps.add("console.slack_user", "want a Slack user id such as U0123ABCD, got %q", u)
	}
	return ps
}

// People is who the config says holds each identity that is no Slack
// user, for counting a quorum's approvals as people (pending.Options.People):
// an API token's name, and the console's decider ("console:" + its user),
// each to the Slack user id of slack_user where it is set. An identity
// left out may be anyone's, so the store counts it beside no named person.
func (c Config) People(getenv func(string) string) map[string]string {
	people := map[string]string{}
	for _, t := range c.API.Tokens {
		if t.SlackUser != "" {
			people[t.Name] = t.SlackUser
		}
	}
	if c.Console.SlackUser != "" {
		people[consoleuser.DeciderPrefix+c.ConsoleUser(getenv)] = c.Console.SlackUser
	}
	return people
}

// hasTopKey reports whether the YAML document b has key at its top level.
func hasTopKey(b []byte, key string) bool {
	var root yaml.Node
	if yaml.Unmarshal(b, &root) != nil || len(root.Content) == 0 || root.Content[0].Kind != yaml.MappingNode {
		return false
	}
	m := root.Content[0]
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return true
		}
	}
	return false
}

// LocalServe is serve's configuration without -config: every default, the
// environment's overrides, and no Slack; with the problems Validate finds.
func LocalServe(getenv func(string) string) (Config, Problems) {
	c := Default()
	applyEnv(&c, getenv)
	c.noSlack = true
	return c, c.Validate(Serve)
}

// ConsoleUser is who signs in to the console: console.user, else $USER,
// else "local".
func (c Config) ConsoleUser(getenv func(string) string) string {
	for _, u := range []string{c.Console.User, getenv("USER")} {
		if u != "" && consoleuser.Check(u) == nil {
			return u
		}
	}
	return "local"
}
