package scenarios

import (
	"context"
	"fmt"
	"strings"

	"github.com/deadbolt-lab/deadbolt/cluster"
	"github.com/deadbolt-lab/deadbolt/history"
)

// aclRefusals says what deadbolt's own ACL refused the lock's clients in
// a run, or "" when nothing: the nodes' ACL LOG (which a restart empties)
// and the NOPERM replies the history records (which a library may hide).
// A lock user may run every data and scripting command, so any refusal
// means the run tested the harness's rules, not the lock.
// The error is a log that could not be read: what was read is returned.
func aclRefusals(ctx context.Context, cl *cluster.Cluster, ops []history.Op) (string, error) {
	var parts []string
	logged, err := cl.LockRefusals(ctx)
	if len(logged) > 0 {
		parts = append(parts, "the nodes' ACL LOG: "+strings.Join(logged, "; "))
	}
	if n, first := nopermReplies(ops); n > 0 {
		parts = append(parts, fmt.Sprintf("NOPERM replies in the history: %d (the first: %s)", n, first))
	}
	return strings.Join(parts, "; and "), err
}

// nopermReplies counts the operations that failed with Redis's NOPERM
// reply, and describes the first.
func nopermReplies(ops []history.Op) (int, string) {
	n, first := 0, ""
	for _, o := range ops {
		if o.Type == history.Invoke || !strings.Contains(o.Error, "NOPERM") {
			continue
		}
		if n == 0 {
			first = fmt.Sprintf("process %d's %s: %s", o.Process, o.F, o.Error)
		}
		n++
	}
	return n, first
}
