package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/askops/askops/policy"
)

// ParamType is the JSON type of a tool argument.
type ParamType string

const (
	String  ParamType = "string"
	Integer ParamType = "integer"
)

// Param declares one argument of a tool. The same declaration produces the
// JSON schema the model sees and checks what the model sent, so the two
// cannot drift apart.
type Param struct {
	Name        string
	Type        ParamType
	Required    bool
	Description string
}

// Tool is one function the model may call.
type Tool struct {
	Name        string
	Description string
	Params      []Param
	Safety      policy.Safety

	// Prepare turns checked arguments into an Action without doing anything:
	// paths are resolved and confined here, so a refused path never reaches
	// the policy or a human. An error is told to the model as is.
	Prepare func(env Env, args Args) (Action, error)
}

// Env is what a tool may know about the run it serves.
type Env struct {
	Workspace      string // real absolute path
	Cwd            string // real absolute path inside Workspace
	MaxOutputBytes int
	DefaultTimeout time.Duration
	MaxTimeout     time.Duration
}

// Resolve confines p to the workspace (see PathError).
func (e Env) Resolve(p string) (string, error) { return confine(e.Workspace, e.Cwd, p) }

// Action is a prepared call: what the policy and a human judge, and how to run it.
type Action struct {
	Command string // bash: the command line (policy.Call.Command)
	Path    string // file tools: the resolved absolute path (policy.Call.Path)
	Summary string // short human summary for the Ask
	Effect  Effect // what the call does, as an approver is shown it
	Run     func(ctx context.Context) (string, error)
	// Bounded runs the call inside the Runner's OS bound (Config.Bound),
	// as a call the policy allowed without a person runs; nil for a call
	// that starts no process (the file tools, which askops performs
	// itself, confined to the workspace).
	Bounded func(ctx context.Context) (string, error)
}

// EffectKind says what a prepared call does. Its words are the approval
// store's (package pending's CallKind), one for one.
type EffectKind string

const (
	EffectCommand EffectKind = "command" // a shell command runs
	EffectWrite   EffectKind = "write"   // a file gets a whole new content
	EffectEdit    EffectKind = "edit"    // a file has one text replaced by another
)

// Effect is what a prepared call does, in the terms an approver reads it,
// from the tool's own preparation: the command that runs (as it runs), or
// the file and what goes into it. The zero Effect (a tool that describes
// nothing) is shown as the call's arguments.
type Effect struct {
	Kind    EffectKind
	Command string // EffectCommand
	Path    string // EffectWrite, EffectEdit: the file as the model named it
	Content string // EffectWrite: the whole new content
	Old     string // EffectEdit: the text replaced
	New     string // EffectEdit: its replacement
}

// Args are a call's arguments after they were checked against the tool's Params.
type Args struct {
	raw    string // the arguments' JSON as the model sent it
	fields map[string]json.RawMessage
}

// String returns a string argument ("" if absent). Where the argument's
// text stands unescaped in the arguments' JSON it is a slice of that
// text, which the conversation keeps anyway: a run waiting on a 1 KB
// command then holds the command once, not twice.
func (a Args) String(name string) string {
	var s string
	if raw, ok := a.fields[name]; ok {
		_ = json.Unmarshal(raw, &s)
	}
	if s == "" {
		return s
	}
	if i := strings.Index(a.raw, s); i >= 0 {
		return a.raw[i : i+len(s)]
	}
	return s
}

// Has reports whether an argument was given (null counts as absent).
func (a Args) Has(name string) bool { _, ok := a.fields[name]; return ok }

// Int returns an integer argument and whether it was given.
func (a Args) Int(name string) (int, bool) {
	raw, ok := a.fields[name]
	if !ok {
		return 0, false
	}
	var f float64
	_ = json.Unmarshal(raw, &f)
	return int(f), true
}

// parseArgs checks the raw JSON arguments against params and says exactly
// what is wrong, in words the model can act on.
func parseArgs(toolName string, params []Param, raw string) (Args, error) {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		raw = "{}" // some servers send nothing for a call without arguments
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal([]byte(raw), &fields); err != nil || fields == nil {
		msg := "not a JSON object"
		if err != nil {
			msg = err.Error()
		}
		return Args{}, fmt.Errorf("invalid arguments for %s: the arguments must be a JSON object (%s); got %s", toolName, msg, clip(raw, 200))
	}
	known := make(map[string]Param, len(params))
	for _, p := range params {
		known[p.Name] = p
	}
	var problems []string
	var unknown []string
	for name := range fields {
		if _, ok := known[name]; !ok {
			unknown = append(unknown, name)
		}
	}
	sort.Strings(unknown)
	for _, name := range unknown {
		problems = append(problems, fmt.Sprintf("unknown field %q", name))
	}
	for _, p := range params {
		v, ok := fields[p.Name]
		if ok && bytes.Equal(bytes.TrimSpace(v), []byte("null")) {
			delete(fields, p.Name)
			ok = false
		}
		if !ok {
			if p.Required {
				problems = append(problems, fmt.Sprintf("missing required field %q (%s)", p.Name, p.Type))
			}
			continue
		}
		if err := checkType(p, v); err != nil {
			problems = append(problems, err.Error())
		}
	}
	if len(problems) > 0 {
		return Args{}, fmt.Errorf("invalid arguments for %s: %s. Expected fields: %s",
			toolName, strings.Join(problems, "; "), describeParams(params))
	}
	return Args{raw: raw, fields: fields}, nil
}

func checkType(p Param, v json.RawMessage) error {
	switch p.Type {
	case String:
		var s string
		if err := json.Unmarshal(v, &s); err != nil {
			return fmt.Errorf("field %q must be a string, got %s", p.Name, jsonKind(v))
		}
	case Integer:
		var f float64
		if err := json.Unmarshal(v, &f); err != nil {
			return fmt.Errorf("field %q must be an integer, got %s", p.Name, jsonKind(v))
		}
		if f != math.Trunc(f) || math.Abs(f) > 1<<53 {
			return fmt.Errorf("field %q must be an integer, got %s", p.Name, clip(string(v), 40))
		}
	}
	return nil
}

func jsonKind(v json.RawMessage) string {
	s := strings.TrimSpace(string(v))
	switch {
	case s == "":
		return "nothing"
	case s[0] == '"':
		return "a string " + clip(s, 40)
	case s[0] == '{':
		return "an object"
	case s[0] == '[':
		return "an array"
	case s == "true" || s == "false":
		return "a boolean"
	default:
		return "a number " + clip(s, 40)
	}
}

func describeParams(params []Param) string {
	var parts []string
	for _, p := range params {
		opt := ""
		if !p.Required {
			opt = ", optional"
		}
		parts = append(parts, fmt.Sprintf("%s (%s%s)", p.Name, p.Type, opt))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

// definition is the tool as the model sees it. The parameters' schema is
// encoded here, once a run, not by every request of the run: as nested
// maps it was most of a request's encoding (go-openai marshals the whole
// request each time), on the path from an approval to the model's next
// request (BenchmarkClickToResume, replica A's trace).
func (t Tool) definition() openai.Tool {
	props := map[string]any{}
	required := []string{}
	for _, p := range t.Params {
		props[p.Name] = map[string]any{"type": string(p.Type), "description": p.Description}
		if p.Required {
			required = append(required, p.Name)
		}
	}
	schema := map[string]any{
		"type":                 "object",
		"properties":           props,
		"required":             required,
		"additionalProperties": false,
	}
	var params any = schema
	if b, err := json.Marshal(schema); err == nil { // strings and bools: it cannot fail
		params = json.RawMessage(b)
	}
	return openai.Tool{
		Type: openai.ToolTypeFunction,
		Function: &openai.FunctionDefinition{
			Name:        t.Name,
			Description: t.Description,
			Parameters:  params,
		},
	}
}

// toolNames lists the registry's names, sorted, for "unknown tool" messages.
func toolNames(tools map[string]*Tool) string {
	names := make([]string, 0, len(tools))
	for n := range tools {
		names = append(names, n)
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
