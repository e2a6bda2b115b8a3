package policy

import "fmt"

// Quorum rules: an ask rule with approvals: N > 1 needs N distinct people
// to approve the call (the store counts them; see pending.Ballot). The
// policy's part is to say so on every ask verdict the rule matches, and
// to keep anything one person granted from covering the call:
//
//   - the rule outranks session and standing grants (step 4): a grant is
//     one person's say, and "for session" is never offered on a quorum
//     Ask, so a grant covering the call was made for something else;
//   - an ask the call gets for another reason (a built-in danger, a
//     command that cannot be checked) still carries the quorum, so
//     chaining `; eval x` onto `terraform apply` cannot lower it to one;
//   - of several matching quorum rules the largest N holds.
//
// Mode full still allows (it is set in the config only), and mode never
// still denies.

// checkApprovals validates a rule's approvals field.
func checkApprovals(r Rule) (string, bool) {
	switch {
	case r.Approvals < 0:
		return fmt.Sprintf("must be at least 1, got %d", r.Approvals), false
	case r.Approvals != 0 && r.Decision != Ask:
		return fmt.Sprintf("only ask rules need approvals (this rule is %s)", r.Decision), false
	case r.Approvals > maxApprovals:
		return fmt.Sprintf("at most %d, got %d", maxApprovals, r.Approvals), false
	}
	return "", true
}

// maxApprovals bounds approvals: N; more people than this never answer
// one request in time.
const maxApprovals = 10

// needsQuorum is r's approvals when it asks for more than one.
func (r rule) needsQuorum() bool { return r.Decision == Ask && r.Approvals > 1 }

// bashQuorum is the quorum rule of the most approvals matching any simple
// command of an (or any file it writes).
func (e *Engine) bashQuorum(an *analysis, ws string) (best rule, matched string, ok bool) {
	for _, r := range e.ask {
		if !r.needsQuorum() || (ok && r.Approvals <= best.Approvals) {
			continue
		}
		if r.Tool == ToolBash {
			for _, s := range an.cmds {
				if couldMatch(r.prefix, s.words, true) {
					best, matched, ok = r, fmt.Sprintf("the rules need %d approvals before %q (matches %q)", r.Approvals, r.Command, s.String()), true
					break
				}
			}
			continue
		}
		for _, t := range an.writes {
			if w, hit := e.writeRule([]rule{r}, ws, t); hit {
				best, matched, ok = w, fmt.Sprintf("the rules need %d approvals before write_file of %s (the command writes it)", r.Approvals, shownPath(t.shown)), true
				break
			}
		}
	}
	return best, matched, ok
}

// fileQuorum is the quorum rule of the most approvals matching a file call.
func (e *Engine) fileQuorum(c Call, abs, rel string, inside bool) (best rule, ok bool) {
	for _, r := range e.ask {
		if r.needsQuorum() && r.Tool == c.Tool && r.matchesPath(abs, rel, inside) && (!ok || r.Approvals > best.Approvals) {
			best, ok = r, true
		}
	}
	return best, ok
}

// toolQuorum is the quorum rule of the most approvals for another tool.
func (e *Engine) toolQuorum(tool string) (best rule, ok bool) {
	for _, r := range e.ask {
		if r.needsQuorum() && r.Tool == tool && (!ok || r.Approvals > best.Approvals) {
			best, ok = r, true
		}
	}
	return best, ok
}

// withQuorum makes an ask verdict carry quorum rule q (and name it).
func withQuorum(v Verdict, q rule) Verdict {
	if v.Decision != Ask || q.Approvals <= v.Approvals {
		return v
	}
	v.Approvals = q.Approvals
	switch v.Rule {
	case "":
		v.Rule = q.name
	case q.name:
	default:
		v.Rule += "; " + q.name
	}
	return v
}

// quorumVerdict is the ask verdict of quorum rule q, with why.
func quorumVerdict(q rule, why string) Verdict {
	return Verdict{Decision: Ask, Rule: q.name, Approvals: q.Approvals, Reason: q.why(why)}
}
