package cliflag

import (
	"bytes"
	"strings"
	"testing"
)

func TestParseInterleaved(t *testing.T) {
	tests := []struct {
		args       []string
		wantConfig string
		wantPos    []string
	}{
		{[]string{"-config", "a.yaml", "do it"}, "a.yaml", []string{"do it"}},
		{[]string{"do it", "--config", "a.yaml"}, "a.yaml", []string{"do it"}},
		{[]string{"-config", "a.yaml", "--", "-not-a-flag"}, "a.yaml", []string{"-not-a-flag"}},
		{[]string{"x", "-config=b", "y"}, "b", []string{"x", "y"}},
	}
	for _, tt := range tests {
		fs := New("run", &bytes.Buffer{}, "")
		config := fs.String("config", "", "")
		pos, _, ok := ParseInterleaved(fs, tt.args)
		if !ok || *config != tt.wantConfig || strings.Join(pos, "|") != strings.Join(tt.wantPos, "|") {
			t.Errorf("ParseInterleaved(%q) = %q, config %q, ok %v; want %q, config %q", tt.args, pos, *config, ok, tt.wantPos, tt.wantConfig)
		}
	}
}

// A verb command names what it wants in words, before or after -config.
func TestVerbParse(t *testing.T) {
	v := Verb{Name: "grants", Synopsis: "-config FILE VERB", Verbs: []string{"list", "add", "revoke"}}
	for _, tt := range []struct {
		args              []string
		wantVerb, wantCfg string
		wantCode          int
		wantErr           string
	}{
		{args: []string{"-config", "a.yaml", "add", "-tool", "bash"}, wantVerb: "add", wantCfg: "a.yaml"},
		{args: []string{"list"}, wantVerb: "list"},
		{args: []string{"-config", "a.yaml"}, wantCode: ExitUsage, wantErr: "bot grants: no verb (want list, add or revoke)\nusage: bot grants -config FILE VERB\n"},
		{args: []string{"grant"}, wantCode: ExitUsage, wantErr: "bot grants: unknown verb \"grant\" (want list, add or revoke)\n"},
		{args: []string{"-h"}, wantCode: ExitHelp, wantErr: "usage: bot grants"},
	} {
		var stderr bytes.Buffer
		verb, cfg, _, code, ok := v.Parse(&stderr, tt.args)
		if verb != tt.wantVerb || cfg != tt.wantCfg || code != tt.wantCode || ok != (tt.wantVerb != "") || !strings.Contains(stderr.String(), tt.wantErr) {
			t.Errorf("Parse(%q) = %q, %q, %d, %v, stderr %q", tt.args, verb, cfg, code, ok, stderr.String())
		}
	}
	fs, cfg := v.Flags(&bytes.Buffer{}, "list", "[-o json]", "a.yaml")
	if fs.Name() != "grants list" || *cfg != "a.yaml" {
		t.Errorf("Flags: %q, -config %q", fs.Name(), *cfg)
	}
}

func TestGiven(t *testing.T) {
	fs := New("grants add", &bytes.Buffer{}, "")
	fs.String("command", "", "")
	fs.String("prefix", "", "")
	fs.String("cwd", "", "")
	if _, ok := Parse(fs, []string{"-prefix", "git", "-cwd", "."}); !ok {
		t.Fatal("parse failed")
	}
	if got := strings.Join(Given(fs, "command", "prefix"), " "); got != "-prefix" {
		t.Errorf("Given = %q, want -prefix", got)
	}
}
