package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// envOverrides maps environment variables to the secret (and URL) keys they
// override. The environment wins over the file when set, so a file can be
// committed without secrets.
func envOverrides(c *Config) []struct {
	env string
	set func(string)
} {
	return []struct {
		env string
		set func(string)
	}{
		{"SLACK_BOT_TOKEN", func(v string) { c.Slack.BotToken = Secret(v) }},
		{"SLACK_APP_TOKEN", func(v string) { c.Slack.AppToken = Secret(v) }},
		{"SLACK_SIGNING_SECRET", func(v string) { c.Slack.SigningSecret = Secret(v) }},
		{"REDIS_URL", func(v string) { c.Redis.URL = Secret(v) }},
		{"OPENAI_BASE_URL", func(v string) { c.OpenAI.BaseURL = v }},
		{"OPENAI_API_KEY", func(v string) { c.OpenAI.APIKey = Secret(v) }},
		{"ASKOPS_VAPID_PRIVATE_KEY", func(v string) { c.Console.VAPIDPrivateKey = Secret(v) }},
	}
}

// Load reads path, applies the environment and validates for
// cmd; see Check.
func Load(path string, getenv func(string) string, cmd Command) (Config, Problems) {
	if path == "" {
		return Config{}, Problems{{Key: "-config", Msg: "required: the path of the config file"}}
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return Config{}, Problems{{Key: "-config", Msg: err.Error()}}
	}
	return Check(b, getenv, cmd)
}

// Parse decodes a config file strictly (unknown keys and wrong types
// are refused, each named by its key) over the defaults, then applies the
// environment overrides. It does not validate; see Config.Validate.
func Parse(b []byte, getenv func(string) string) (Config, error) {
	c := Default()
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	err := dec.Decode(&c)
	switch {
	case errors.Is(err, io.EOF):
		// An empty file is every default; Validate says what is missing.
	case err != nil:
		var te *yaml.TypeError
		if !errors.As(err, &te) {
			// A syntax error: yaml says where ("yaml: line 3: ...").
			return Config{}, Problems{{Msg: err.Error()}}
		}
		var root yaml.Node
		_ = yaml.Unmarshal(b, &root) // it parsed above, so this succeeds
		keys := keysByLine(&root)
		var ps Problems
		for _, e := range te.Errors {
			ps = append(ps, typeProblem(e, keys))
		}
		// yaml decoded everything else; return it too so the caller can
		// report the file's other problems in the same pass.
		applyEnv(&c, getenv)
		c.noSlack = !hasTopKey(b, "slack")
		return c, ps
	}
	applyEnv(&c, getenv)
	c.noSlack = !hasTopKey(b, "slack")
	return c, nil
}

func applyEnv(c *Config, getenv func(string) string) {
	for _, o := range envOverrides(c) {
		if v := getenv(o.env); v != "" {
			o.set(v)
		}
	}
	c.API.resolveEnv(getenv)
	c.AAP.resolveEnv(getenv)
}

// Check parses b and validates it for cmd, returning every problem:
// decode problems (unknown keys, wrong types, bad durations) and then the
// validation problems of keys not already reported.
func Check(b []byte, getenv func(string) string, cmd Command) (Config, Problems) {
	c, err := Parse(b, getenv)
	var ps Problems
	if err != nil {
		if !errors.As(err, &ps) || (len(ps) == 1 && ps[0].Key == "") {
			return Config{}, Problems{{Msg: err.Error()}} // a syntax error: nothing else is known
		}
	}
	seen := map[string]bool{}
	for _, p := range ps {
		seen[p.Key] = true
	}
	for _, p := range c.Validate(cmd) {
		if !seen[p.Key] {
			ps = append(ps, p)
		}
	}
	if len(ps) > 0 {
		return Config{}, ps
	}
	return c, nil
}

// keyAt is one mapping key in the file: its dotted path and its own name.
type keyAt struct {
	path, name string
	value      *yaml.Node
}

// keysByLine indexes every mapping key by the line it is on, so yaml's
// line-numbered errors can be reported by key.
func keysByLine(root *yaml.Node) map[int][]keyAt {
	m := map[int][]keyAt{}
	var walk func(n *yaml.Node, path string)
	walk = func(n *yaml.Node, path string) {
		switch n.Kind {
		case yaml.DocumentNode:
			for _, c := range n.Content {
				walk(c, path)
			}
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				k, v := n.Content[i], n.Content[i+1]
				p := k.Value
				if path != "" {
					p = path + "." + k.Value
				}
				m[k.Line] = append(m[k.Line], keyAt{path: p, name: k.Value, value: v})
				walk(v, p)
			}
		case yaml.SequenceNode:
			for i, c := range n.Content {
				p := fmt.Sprintf("%s[%d]", path, i)
				if c.Kind != yaml.MappingNode && c.Kind != yaml.SequenceNode {
					m[c.Line] = append(m[c.Line], keyAt{path: p, value: c})
				}
				walk(c, p)
			}
		}
	}
	walk(root, "")
	return m
}

// yaml's error texts, parsed to name the key and say what is wrong.
var (
	yamlLineRe   = regexp.MustCompile(`^line (\d+): (.*)$`)
	unknownKeyRe = regexp.MustCompile(`^field (\S+) not found in type \S+$`)
	wrongTypeRe  = regexp.MustCompile("^cannot unmarshal (!!\\w+)(?: `(.*)`)? into (.+)$")
)

// wantedType says in words what a Go field type wants.
func wantedType(goType string) string {
	switch {
	case goType == "int":
		return "a whole number"
	case goType == "bool":
		return "true or false"
	case goType == "string":
		return "a string"
	case strings.HasPrefix(goType, "[]"):
		return "a list"
	case strings.HasPrefix(goType, "map[") || strings.Contains(goType, "."):
		return "a mapping"
	}
	return goType
}

// givenType says in words what a YAML tag holds.
func givenType(tag string) string {
	switch tag {
	case "!!seq":
		return "a list"
	case "!!map":
		return "a mapping"
	case "!!str":
		return "a string"
	case "!!int", "!!float":
		return "a number"
	case "!!bool":
		return "a boolean"
	case "!!null":
		return "nothing"
	}
	return tag
}

// typeProblem turns one of yaml's "line N: ..." messages into a Problem
// named by the key on that line.
func typeProblem(e string, keys map[int][]keyAt) Problem {
	m := yamlLineRe.FindStringSubmatch(e)
	if m == nil {
		return Problem{Msg: e}
	}
	line, _ := strconv.Atoi(m[1])
	msg := m[2]
	cands := keys[line]
	pick := func(match func(keyAt) bool) string {
		for _, k := range cands {
			if match(k) {
				return k.path
			}
		}
		if len(cands) > 0 {
			return cands[0].path
		}
		return fmt.Sprintf("line %d", line)
	}
	if u := unknownKeyRe.FindStringSubmatch(msg); u != nil {
		return Problem{Key: pick(func(k keyAt) bool { return k.name == u[1] }), Msg: "unknown key"}
	}
	if w := wrongTypeRe.FindStringSubmatch(msg); w != nil {
		tag, val, goType := w[1], w[2], w[3]
		want, got := wantedType(goType), givenType(tag)
		if val != "" {
			got += fmt.Sprintf(" (%s)", val)
		}
		key := pick(func(k keyAt) bool {
			return k.value != nil && k.value.Line == line && k.value.ShortTag() == tag && (val == "" || strings.HasPrefix(k.value.Value, strings.TrimSuffix(val, "...")))
		})
		return Problem{Key: key, Msg: fmt.Sprintf("want %s, got %s", want, got)}
	}
	// Our own messages (Duration) and anything else: name the key, keep the text.
	return Problem{Key: pick(func(k keyAt) bool { return k.value != nil && k.value.Line == line && k.value.Kind == yaml.ScalarNode }), Msg: msg}
}
