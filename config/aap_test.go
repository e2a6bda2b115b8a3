package config

import (
	"strings"
	"testing"
	"time"
)

// The aap: block as issue 36 states it: provisioner tokens from the
// environment, the execution window defaulting to 5m, and every mistake
// named by its key without printing a token.
func TestAAPConfig(t *testing.T) {
	const secret = "provisioner-token-0123456789"
	good := validYAML + `aap:
  enabled: true
  provisioners:
    - name: platform
      token_env: ASKOPS_AAP_PROVISIONER
  execution_window: 5m
  allow_private_webhooks: false
`
	env := envOf(map[string]string{"ASKOPS_AAP_PROVISIONER": secret})
	c, ps := Check([]byte(good), env, Serve)
	if len(ps) > 0 {
		t.Fatalf("valid aap block refused: %v", ps)
	}
	if !c.AAP.Enabled || c.AAP.Provisioners[0].Token().Reveal() != secret || c.AAP.Window() != 5*time.Minute {
		t.Errorf("aap block read as %+v", c.AAP)
	}
	if c, _ := Check([]byte(validYAML+"aap:\n  enabled: true\n  provisioners: [{name: p, token_env: ASKOPS_AAP_PROVISIONER}]\n"), env, Serve); c.AAP.Window() != DefaultExecutionWindow {
		t.Errorf("execution_window left out: %s, want %s", c.AAP.Window(), DefaultExecutionWindow)
	}
	on := validYAML + "aap:\n  enabled: true\n"
	for _, tc := range []struct{ name, yaml, want string }{
		{"no provisioners", on, "aap.provisioners: required when aap.enabled"},
		{"env not set", validYAML + "aap:\n  enabled: true\n  provisioners: [{name: p, token_env: UNSET_VAR}]\n", "aap.provisioners[0].token_env: UNSET_VAR is not set"},
		{"no name", on + "  provisioners: [{token_env: ASKOPS_AAP_PROVISIONER}]\n", "aap.provisioners[0].name: required"},
		{"bad name", on + "  provisioners: [{name: a b, token_env: ASKOPS_AAP_PROVISIONER}]\n", `aap.provisioners[0].name: want letters`},
		{"no token_env", on + "  provisioners: [{name: p}]\n", "aap.provisioners[0].token_env: required"},
		{"token in the file", on + "  provisioners: [{name: p, token: " + secret + "}]\n", "aap.provisioners[0].token: unknown key"},
		{"same name", on + "  provisioners: [{name: p, token_env: ASKOPS_AAP_PROVISIONER}, {name: p, token_env: OTHER}]\n", `aap.provisioners[1].name: "p" is also aap.provisioners[0]'s name`},
		{"same token", on + "  provisioners: [{name: p, token_env: ASKOPS_AAP_PROVISIONER}, {name: q, token_env: SAME}]\n", "aap.provisioners[1]: the same token as aap.provisioners[0]"},
		{"short token", on + "  provisioners: [{name: p, token_env: SHORT}]\n", "aap.provisioners[0].token_env: SHORT holds a token shorter than 16"},
		{"api token reused", validYAML + "api:\n  tokens: [{name: c, token: " + secret + ", scopes: [decide]}]\n" + "aap:\n  enabled: true\n  provisioners: [{name: p, token_env: ASKOPS_AAP_PROVISIONER}]\n", `aap.provisioners[0]: the same token as the api token "c"`},
		{"negative window", validYAML + "aap:\n  execution_window: -1m\n", "aap.execution_window: must be > 0"},
		{"tiny window", validYAML + "aap:\n  execution_window: 1ms\n", "aap.execution_window: at least 1s"},
		{"unknown key", validYAML + "aap:\n  enable: true\n", "aap.enable: unknown key"},
		{"shell tool without a name", validYAML + "aap:\n  shell_tools: [{command_arg: cmd}]\n", "aap.shell_tools[0].tool: required"},
		{"shell tool without its argument", validYAML + "aap:\n  shell_tools: [{tool: run}]\n", "aap.shell_tools[0].command_arg: required"},
		{"shell tool twice", validYAML + "aap:\n  shell_tools: [{tool: run, command_arg: a}, {tool: run, command_arg: b}]\n", `aap.shell_tools[1].tool: "run" is also aap.shell_tools[0]'s tool`},
		{"shell tool name too long", validYAML + "aap:\n  shell_tools: [{tool: " + strings.Repeat("x", 257) + ", command_arg: a}]\n", "aap.shell_tools[0].tool: longer than 256 bytes"},
		{"shell tool unknown key", validYAML + "aap:\n  shell_tools: [{tool: run, arg: a}]\n", "aap.shell_tools[0].arg: unknown key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, ps := Check([]byte(tc.yaml), envOf(map[string]string{"ASKOPS_AAP_PROVISIONER": secret, "SAME": secret, "OTHER": secret + "x", "SHORT": "abc"}), CheckConfig)
			if !strings.Contains(ps.Error(), tc.want) {
				t.Errorf("problems:\n%v\nwant one containing %q", ps, tc.want)
			}
			if strings.Contains(ps.Error(), secret) {
				t.Errorf("a problem prints the token: %v", ps)
			}
		})
	}
	// Without Slack the serve listens on console.listen and http.listen:
	// the defaults share port 8080.
	_, ps = Check([]byte("aap:\n  enabled: true\n  provisioners: [{name: p, token_env: ASKOPS_AAP_PROVISIONER}]\n"), env, Serve)
	if !strings.Contains(ps.Error(), "http.listen: the console-only serve listens on console.listen") {
		t.Errorf("console-only serve with one port for both: %v", ps)
	}
	if c, ps := Check([]byte(good+"  shell_tools:\n    - {tool: run_command, command_arg: cmdline}\n"), env, Serve); len(ps) > 0 || c.AAP.Shells()["run_command"] != "cmdline" {
		t.Errorf("shell_tools read as %v (%v)", c.AAP.Shells(), ps)
	}
	// Disabled, the section asks for nothing.
	if _, ps := Check([]byte(validYAML+"aap:\n  enabled: false\n"), noEnv, Serve); len(ps) > 0 {
		t.Errorf("disabled aap refused: %v", ps)
	}
}
