package gateway

import (
	"fmt"
	"os"
	"sync"

	"github.com/askops/askops/policy"
)

var diffMu sync.Mutex

func init() {
	verdictDiff = func(pc policy.Call, old, new policy.Verdict) {
		diffMu.Lock()
		defer diffMu.Unlock()
		f, _ := os.OpenFile("/tmp/verdictdiff.txt", os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		defer f.Close()
		same := old.Decision == new.Decision && old.Rule == new.Rule && old.Approvals == new.Approvals && old.Dangerous == new.Dangerous && old.Reason == new.Reason
		fmt.Fprintf(f, "%v\t%s %q %q\n  old %s rule=%q n=%d d=%v %q\n  new %s rule=%q n=%d d=%v %q\n", same, pc.Tool, pc.Path, pc.Command, old.Decision, old.Rule, old.Approvals, old.Dangerous, old.Reason, new.Decision, new.Rule, new.Approvals, new.Dangerous, new.Reason)
	}
}
