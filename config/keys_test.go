package config

import (
	"regexp"
	"strings"
	"testing"

	"github.com/askops/askops/slackui"
)

// configKeyRe finds config keys (section.key[.key…]) named in messages.
var configKeyRe = regexp.MustCompile(`\b(slack|http|redis|openai|approvals|agent|policy|log)(\.[a-z_]+)+`)

// Messages users act on name config keys; each named key must be one the
// config file really has, or the advice sends the operator to a key that is
// refused as unknown.
func TestMessagesNameRealConfigKeys(t *testing.T) {
	messages := []string{
		slackui.ErrNoChannel.Error(),
		slackui.ErrNoApprovers.Error(),
	}
	for _, msg := range messages {
		keys := configKeyRe.FindAllString(msg, -1)
		if len(keys) == 0 {
			t.Errorf("%q names no config key; say which key to set", msg)
		}
		for _, key := range keys {
			_, err := Parse([]byte(yamlSetting(key)), noEnv)
			if err != nil && strings.Contains(err.Error(), "unknown key") {
				t.Errorf("%q names %s, which the config file does not have: %v", msg, key, err)
			}
		}
	}
}

// yamlSetting is a config file that sets the dotted key to null.
func yamlSetting(key string) string {
	var b strings.Builder
	for i, part := range strings.Split(key, ".") {
		b.WriteString(strings.Repeat("  ", i) + part + ":\n")
	}
	return strings.TrimSuffix(b.String(), "\n") + " ~\n"
}
