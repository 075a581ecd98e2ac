package workloads

import (
	"context"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/deadbolt-lab/deadbolt/history"
)

// inspectTimeout bounds the harness's read of a key after a refusal, as
// patiently as cluster setup: the token lives a TTL, and a read that does
// not answer makes the run unknown (checker/uses.go), so a loaded machine
// must not cut it short.
const inspectTimeout = 5 * time.Second

// inspect reads key on the lock service's nodes right after lease's
// acquire was refused, the lock having said it tried token, and records
// whether a node held that very token: an acquire that says "not taken"
// while its own value sits on a node (a SET NX sent again after its first
// attempt took effect) has left a lock nobody holds. The read changes
// nothing; without Config.Inspect nothing is read.
func (r *Runner) inspect(ctx context.Context, key, lease, token string) {
	if r.cfg.Inspect == nil {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, inspectTimeout)
	defer cancel()
	values, unanswered := r.cfg.Inspect(ctx, key)
	inv := history.Op{Type: history.Invoke, Process: history.HarnessProcess, F: history.Inspect, Key: key, Lease: lease, Owner: token}
	done := history.Op{Type: history.OK, Process: history.HarnessProcess, F: history.Inspect, Key: key, Lease: lease}
	var held []string
	for node, v := range values {
		if v == token {
			held = append(held, node)
		}
	}
	if len(unanswered) > 0 && len(held) == 0 {
		// A node that did not answer may hold the token; one that did
		// and holds it is the finding, whatever the others said. Node
		// names the nodes that did not answer, so that the checker can
		// tell a node the run's own fault had killed or stopped.
		nodes := slices.Sorted(maps.Keys(unanswered))
		var errs []string
		for _, n := range nodes {
			errs = append(errs, n+": "+unanswered[n].Error())
		}
		done.Type, done.Error, done.Node = history.Info, strings.Join(errs, "; "), strings.Join(nodes, ",")
	}
	if len(held) > 0 {
		slices.Sort(held)
		done.Owner, done.Node = token, strings.Join(held, ",")
	}
	// The harness is one history process, and reads run in every session:
	// each read is recorded once it is done, its invocation and completion
	// together.
	r.inspecting.Lock()
	defer r.inspecting.Unlock()
	r.cfg.Rec.Record(inv)
	r.cfg.Rec.Record(done)
}
