package policy

import (
	"errors"
	"testing"
)

func TestQuorumRules(t *testing.T) {
	rules := []Rule{
		{Tool: ToolBash, Command: "terraform apply", Decision: Ask, Approvals: 2},
		{Tool: ToolBash, Command: "terraform", Decision: Ask},
		{Tool: ToolBash, Command: "kubectl delete", Decision: Ask, Approvals: 3},
		{Tool: ToolBash, Command: "ls", Decision: Allow},
		{Tool: ToolWriteFile, Path: "prod/**", Decision: Ask, Approvals: 2},
		{Tool: "deploy", Decision: Ask, Approvals: 2},
	}
	everything := func(Call) (string, bool, error) { return "g-1 a grant", true, nil }
	e, err := New(Config{Rules: rules, Grants: &fakeGrants{grant: everything, standing: everything}})
	if err != nil {
		t.Fatal(err)
	}
	session := func(c Call) Call { c.SessionID = "s1"; return c }
	cases := []struct {
		name      string
		c         Call
		want      Decision
		approvals int
	}{
		{"quorum rule asks two, before any grant", session(bashCall("terraform apply -auto-approve")), Ask, 2},
		{"a plain ask rule is still covered by a grant", session(bashCall("terraform plan")), Allow, 0},
		{"the largest quorum of several holds", bashCall("terraform apply && kubectl delete pod x"), Ask, 3},
		{"code nobody can read takes the largest quorum", bashCall("terraform apply; eval \"$X\""), Ask, 3},
		{"a danger keeps the quorum", bashCall("terraform apply && rm -rf /"), Ask, 2},
		{"a write the command makes", bashCall("echo x > prod/main.tf"), Ask, 2},
		{"write_file under the quorum glob", session(Call{Tool: ToolWriteFile, Path: "prod/a.tf", Cwd: testWorkspace, Workspace: testWorkspace, Safety: SideEffect}), Ask, 2},
		{"another tool", session(Call{Tool: "deploy", Safety: SideEffect}), Ask, 2},
		{"mode never still denies", func() Call { c := bashCall("terraform apply"); c.Mode = ModeNever; return c }(), Deny, 0},
		{"no quorum where none matches", bashCall("ls"), Allow, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			v := e.Evaluate(t.Context(), tc.c)
			if v.Decision != tc.want || (v.Decision == Ask && v.Approvals != tc.approvals) {
				t.Errorf("Evaluate = %s with %d approvals (%s; rule %q); want %s with %d", v.Decision, v.Approvals, v.Reason, v.Rule, tc.want, tc.approvals)
			}
		})
	}
}

func TestQuorumRuleValidation(t *testing.T) {
	cases := []struct {
		name string
		r    Rule
		ok   bool
	}{
		{"ask with 2", Rule{Tool: ToolBash, Command: "terraform apply", Decision: Ask, Approvals: 2}, true},
		{"ask with 1", Rule{Tool: ToolBash, Command: "terraform apply", Decision: Ask, Approvals: 1}, true},
		{"negative", Rule{Tool: ToolBash, Command: "terraform apply", Decision: Ask, Approvals: -1}, false},
		{"on allow", Rule{Tool: ToolBash, Command: "ls", Decision: Allow, Approvals: 2}, false},
		{"on deny", Rule{Tool: ToolBash, Command: "rm", Decision: Deny, Approvals: 1}, false},
		{"too many", Rule{Tool: ToolBash, Command: "x", Decision: Ask, Approvals: 11}, false},
	}
	for _, tc := range cases {
		_, err := New(Config{Rules: []Rule{tc.r}})
		var re *RuleError
		switch {
		case tc.ok && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case !tc.ok && (!errors.As(err, &re) || re.Field != "approvals"):
			t.Errorf("%s: %v; want a rules[0].approvals error", tc.name, err)
		}
	}
}
