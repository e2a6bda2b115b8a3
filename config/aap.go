package config

import (
	"fmt"
	"regexp"
	"time"
)

// AAPConfig is askops as an Agent Approval Protocol provider (aap: in the
// file), served under /aap on http.listen when Enabled.
type AAPConfig struct {
	Enabled bool `yaml:"enabled"`
	// Provisioners are who may create, read, update and delete AAP
	// instances: each a name and the environment variable holding its
	// token. Instance credentials are issued by askops, never configured.
	Provisioners []AAPProvisioner `yaml:"provisioners"`
	// ExecutionWindow is how long an approval lets the adapter start the
	// call: decision.expires_at = decided_at + ExecutionWindow.
	ExecutionWindow Duration `yaml:"execution_window"`
	// AllowPrivateWebhooks lets webhook receivers be loopback or private
	// addresses over plain http (local development and tests).
	AllowPrivateWebhooks bool `yaml:"allow_private_webhooks"`
	// ShellTools are the adapters' tools that run a shell command, beside
	// the ones askops knows (Bash, shell, exec_command): each is judged by
	// the bash analysis of its command argument, as Bash is, instead of by
	// its name alone.
	ShellTools []AAPShellTool `yaml:"shell_tools"`
}

// AAPShellTool is one aap.shell_tools entry: a tool an adapter names and
// the argument that holds its command (a string, or an argv array).
type AAPShellTool struct {
	Tool       string `yaml:"tool"`
	CommandArg string `yaml:"command_arg"`
}

// Shells is aap.shell_tools as tool name → command argument.
func (c AAPConfig) Shells() map[string]string {
	m := make(map[string]string, len(c.ShellTools))
	for _, t := range c.ShellTools {
		m[t.Tool] = t.CommandArg
	}
	return m
}

// AAPProvisioner is one provisioner token, read from TokenEnv.
type AAPProvisioner struct {
	Name     string `yaml:"name"`
	TokenEnv string `yaml:"token_env"`

	token Secret // TokenEnv's value, read when the file is loaded
}

// Token is the provisioner's token.
func (p AAPProvisioner) Token() Secret { return p.token }

// DefaultExecutionWindow is aap.execution_window when the file leaves it out.
const DefaultExecutionWindow = 5 * time.Minute

// minProvisionerToken is the shortest provisioner token askops accepts:
// it guards every instance's creation.
const minProvisionerToken = 16

// envNameRe is an environment variable's name.
var envNameRe = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// resolveEnv reads every token_env.
func (c *AAPConfig) resolveEnv(getenv func(string) string) {
	for i := range c.Provisioners {
		if e := c.Provisioners[i].TokenEnv; e != "" {
			c.Provisioners[i].token = Secret(getenv(e))
		}
	}
}

// Window is the execution window in force.
func (c AAPConfig) Window() time.Duration {
	if c.ExecutionWindow <= 0 {
		return DefaultExecutionWindow
	}
	return c.ExecutionWindow.D()
}

// problems checks the aap section (never printing a token). Only serve
// and check-config need the tokens' values.
func (c AAPConfig) problems(cmd Command, api APIConfig) Problems {
	var ps Problems
	if c.ExecutionWindow < 0 {
		ps.add("aap.execution_window", "must be > 0, got %s", c.ExecutionWindow)
	} else if c.ExecutionWindow > 0 && c.ExecutionWindow.D() < time.Second {
		ps.add("aap.execution_window", "at least 1s (an approval must leave time to start the call), got %s", c.ExecutionWindow)
	}
	tools := map[string]int{}
	for i, t := range c.ShellTools {
		key := fmt.Sprintf("aap.shell_tools[%d]", i)
		switch {
		case t.Tool == "":
			ps.add(key+".tool", "required: the tool name the adapter sends")
		case len(t.Tool) > 256:
			ps.add(key+".tool", "longer than 256 bytes")
		default:
			if j, dup := tools[t.Tool]; dup {
				ps.add(key+".tool", "%q is also aap.shell_tools[%d]'s tool", t.Tool, j)
			}
			tools[t.Tool] = i
		}
		if t.CommandArg == "" {
			ps.add(key+".command_arg", "required: the argument that holds the command (a string or an argv array)")
		}
	}
	if !c.Enabled {
		return ps
	}
	serves := cmd == Serve || cmd == CheckConfig
	if len(c.Provisioners) == 0 {
		ps.add("aap.provisioners", "required when aap.enabled: at least one {name, token_env} that may create instances")
	}
	names := map[string]int{}
	values := map[Secret]int{}
	apiValues := map[Secret]string{}
	for _, t := range api.Tokens {
		if v := t.Value(); v != "" {
			apiValues[v] = t.Name
		}
	}
	for i, p := range c.Provisioners {
		key := fmt.Sprintf("aap.provisioners[%d]", i)
		switch {
		case p.Name == "":
			ps.add(key+".name", "required: who holds the token (named in logs)")
		case !tokenNameRe.MatchString(p.Name):
			ps.add(key+".name", "want letters, digits, '.', '_' or '-', got %q", p.Name)
		default:
			if j, dup := names[p.Name]; dup {
				ps.add(key+".name", "%q is also aap.provisioners[%d]'s name", p.Name, j)
			}
			names[p.Name] = i
		}
		switch {
		case p.TokenEnv == "":
			ps.add(key+".token_env", "required: the environment variable holding the provisioner's token")
		case !envNameRe.MatchString(p.TokenEnv):
			ps.add(key+".token_env", "want an environment variable's name, got %q", p.TokenEnv)
		case p.token == "" && serves:
			ps.add(key+".token_env", "%s is not set", p.TokenEnv)
		case p.token != "" && len(p.token) < minProvisionerToken:
			ps.add(key+".token_env", "%s holds a token shorter than %d characters", p.TokenEnv, minProvisionerToken)
		}
		if p.token != "" {
			if j, dup := values[p.token]; dup {
				ps.add(key, "the same token as aap.provisioners[%d]: give each provisioner its own", j)
			}
			values[p.token] = i
			if name, dup := apiValues[p.token]; dup {
				ps.add(key, "the same token as the api token %q: a provisioner token must only manage instances", name)
			}
		}
	}
	return ps
}

// tokenNameRe is a provisioner's name: it is logged and keys its
// idempotency records.
var tokenNameRe = regexp.MustCompile(`^[A-Za-z0-9._-]{1,64}$`)
