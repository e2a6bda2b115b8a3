// Package decidetest holds the tests that drive one table through every
// door and surface and check they agree. The deciding half: one table of
// deciding rules through every surface a person decides on (a Slack
// click, the console's form, the HTTP API): the rules are
// approval.Decider's, and each surface only parses and words them. The
// asking half: one table of calls through every door an agent asks
// through (the hooks, the MCP prompt, the Ask API, AAP): the verdict is
// the policy's, once, and what the approver is shown is askview's. The
// effects: one table of calls read back from every surface an approver
// reads (the Slack message, the App Home, the console's card and the
// HTTP Ask API), each showing the same effect lines, first: the lines are
// askview's, worked out once when the Ask is made, and each surface only
// renders them.
package decidetest
