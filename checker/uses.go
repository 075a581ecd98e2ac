package checker

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/deadbolt-lab/deadbolt/history"
)

func init() {
	RegisterScoped("uses", "what the lock's answers led to: a yes (a grant, an extend, a reacquire) that came after the lease it gave had run out by the lock's own clock and was used; a write after the lock found the lease gone, when it never told the holder; a refusal that left its own token on a node", EveryWorkload,
		func(Options) Checker { return uses{} })
}

// uses judges the lock by what its holder went on to do. Two kinds:
//
//   - late-yes-used: the lock's call took longer than the lease it granted
//     or extended (by the client's own stamps of the call, or the
//     harness's when it gave none), so when the yes came the lease may
//     have run out (the SET or PEXPIRE ran at some moment of the call), and
//     the holder then used the resource under it. A lock that checks its
//     own validity (Redlock's rule: TTL less the call's time less drift)
//     says no instead.
//   - write-after-refusal: a renewal (the lock's watchdog, or the
//     holder's) found the lease no longer the holder's, the lock never
//     told the holder (no loss reported before), and the holder wrote
//     under the lease after that.
//   - refused-but-taken: the lock refused an acquire (the key taken) and
//     said which token it tried, and the harness, reading the key on the
//     nodes right after (history.Inspect), found that very token: the
//     acquire took the key (a SET NX sent again after its first attempt
//     landed reads "not set") and nobody holds it until it expires.
type uses struct{}

// Kinds of uses.
const (
	KindLateYesUsed       = "late-yes-used"
	KindWriteAfterRefusal = "write-after-refusal"
	// KindRefusedButTaken is an acquire the lock refused (not taken) that
	// left its own token on a node: a lock nobody holds until it expires.
	KindRefusedButTaken = "refused-but-taken"
)

// BadUse is one use of the resource on a yes the lock could not give.
type BadUse struct {
	Kind    string `json:"kind"`
	Key     string `json:"key"`
	Lease   string `json:"lease"`
	Process int    `json:"process"`
	// Call is the yes (acquire, extend, reacquire) or the refused renewal.
	Call string `json:"call"`
	// Took is how long the lock's call took; TTL the lease it gave.
	Took int64 `json:"took,omitempty"`
	TTL  int64 `json:"ttl,omitempty"`
	// Said is when the lock said it (the call's completion); Used the
	// resource operation's invocation, Use its f.
	Said int64     `json:"said"`
	Used int64     `json:"used"`
	Use  history.F `json:"use"`
	// Node held a refused acquire's own token.
	Node string `json:"node,omitempty"`
}

func (b BadUse) String() string {
	if b.Kind == KindRefusedButTaken {
		return fmt.Sprintf("the acquire of lease %s on key %q was refused (not taken), yet right after it %s held its own token: it took the key and said it did not, leaving a lock nobody holds until it expires",
			b.Lease, b.Key, b.Node)
	}
	if b.Kind == KindLateYesUsed {
		return fmt.Sprintf("process %d's %s of lease %s on key %q said ok at %s after taking %s, longer than the %s lease it gave: the lease may have run out before the yes came, and the holder's %s at %s used it",
			b.Process, b.Call, b.Lease, b.Key, at(b.Said), time.Duration(b.Took).Round(time.Millisecond), time.Duration(b.TTL), b.Use, at(b.Used))
	}
	return fmt.Sprintf("the lock's %s of lease %s on key %q found it no longer the holder's at %s and never told the holder: process %d's %s at %s went on under it",
		b.Call, b.Lease, b.Key, at(b.Said), b.Process, b.Use, at(b.Used))
}

func (uses) Check(in *Input) Result {
	r := newResult("uses")
	found, caught := judgeUses(in)
	r.Details = found
	if caught > 0 {
		r.Metrics["late_uses_rejected"] = int64(caught)
	}
	counts := map[string]int64{}
	for _, b := range found {
		r.Anomalies = append(r.Anomalies, Anomaly{Kind: b.Kind, At: b.Said, Key: b.Key, Leases: []string{b.Lease}, Text: b.String()})
		counts[b.Kind]++
	}
	for k, n := range counts {
		r.Metrics[k] = n
	}
	if len(found) == 0 {
		r.Reason = "no holder used a yes the lock could not give, nor wrote after the lock found its lease gone."
		if caught > 0 {
			r.Reason = fmt.Sprintf("no use of a yes the lock could not give took effect: caught by the fence, the resource rejected %s made on one.", Plural(caught, "use"))
		}
		unread := unreadInspects(in)
		if n := len(unread.impossible); n > 0 {
			// The run's own fault had killed or stopped every node that
			// did not answer: no read could reach it, and what it held
			// was the fault's to keep or lose.
			r.Metrics["inspects_impossible"] = int64(n)
			r.Reason += fmt.Sprintf(" The key of %s could not be read back, its node down by the run's own fault (the first: %s).",
				Plural(n, "refused acquire"), unread.impossible[0])
		}
		if n := len(unread.missed); n > 0 {
			// A refused acquire that took its key is found only by reading
			// the key back; a read that did not answer may hide one.
			r.Verdict = Unknown
			r.Metrics["inspects_unanswered"] = int64(n)
			r.Reason = fmt.Sprintf("the harness could not read back the key of %s right after its refusal (the first: %s), so an acquire that took the key and said it did not may be hidden; otherwise %s",
				Plural(n, "refused acquire"), unread.missed[0], r.Reason)
		}
		return r
	}
	r.Verdict = Invalid
	var uses, refusals []BadUse
	for _, b := range found {
		if b.Kind == KindRefusedButTaken {
			refusals = append(refusals, b)
		} else {
			uses = append(uses, b)
		}
	}
	var said []string
	if len(uses) > 0 {
		said = append(said, fmt.Sprintf("holders went on where the lock could not say yes: %s (the first: %s)", Plural(len(uses), "use"), uses[0]))
	}
	if len(refusals) > 0 {
		said = append(said, fmt.Sprintf("the lock refused acquires that took the key: %s (the first: %s)", Plural(len(refusals), "refusal"), refusals[0]))
	}
	r.Reason = strings.Join(said, "; ") + "."
	return r
}

// unread are the harness's reads of a refused acquire's key that did not
// answer, each described: missed (a node that may hold the token did not
// answer) or impossible (every node that did not answer was down by the
// run's own fault then).
type unread struct{ missed, impossible []string }

// unreadInspects finds the harness's reads of a refused acquire's key
// that did not answer.
func unreadInspects(in *Input) unread {
	var u unread
	for _, p := range in.Pairs {
		if p.Invoke.F != history.Inspect || (p.Complete != nil && p.Complete.Type == history.OK) {
			continue
		}
		what := fmt.Sprintf("lease %s on key %q at %s", p.Invoke.Lease, p.Invoke.Key, at(p.Invoke.Time))
		if p.Complete != nil && p.Complete.Error != "" {
			what += ": " + p.Complete.Error
		}
		if down := downByFault(in.Faults, p); down != "" {
			u.impossible = append(u.impossible, what+" ("+down+")")
			continue
		}
		u.missed = append(u.missed, what)
	}
	return u
}

// downByFault names, for a read of the nodes that did not answer (the
// completion's Node), the faults of the run that killed or stopped each
// of them while the read was out; "" when some node has none, or the
// read names no node (a history recorded before reads named them).
func downByFault(faults []FaultWindow, p history.Operation) string {
	if p.Complete == nil || p.Complete.Node == "" {
		return ""
	}
	var by []string
	for _, node := range strings.Split(p.Complete.Node, ",") {
		i := slices.IndexFunc(faults, func(w FaultWindow) bool {
			return namesNode(w.Node, node) && !w.OnClients() && (w.Effects.Kills || w.Effects.Stops) &&
				w.Start <= p.Complete.Time && w.End >= p.Invoke.Time
		})
		if i < 0 {
			return ""
		}
		if name := faults[i].Name(); !slices.Contains(by, name) {
			by = append(by, name) // one fault may have struck several of them
		}
	}
	return strings.Join(by, ", ")
}

// leaseEvent of uses: a yes, a refusal, a loss told, a resource use.
type useEvent struct {
	t    int64
	kind int // order at one instant: told, yes, refusal, use
	op   history.Operation
}

const (
	useTold = iota
	useYes
	useRefusal
	useResource
)

func badUses(in *Input) []BadUse {
	found, _ := judgeUses(in)
	return found
}

// judgeUses finds the bad uses, and counts the uses a fencing-aware
// resource turned away (a read or write that failed: certainly no
// effect), which did no harm: the fence caught them.
func judgeUses(in *Input) (found []BadUse, caught int) {
	byLease := map[string][]useEvent{}
	for _, p := range in.Pairs {
		inv, c := p.Invoke, p.Complete
		if inv.F == history.Inspect && c != nil && c.Type == history.OK && c.Owner != "" {
			found = append(found, BadUse{Kind: KindRefusedButTaken, Key: inv.Key, Lease: inv.Lease, Call: "acquire", Said: inv.Time, Node: c.Node})
			continue
		}
		if inv.Process < 0 || inv.Lease == "" || c == nil {
			continue
		}
		switch {
		case inv.F == history.Lost:
			byLease[inv.Lease] = append(byLease[inv.Lease], useEvent{inv.Time, useTold, p})
		case (inv.F == history.Acquire || inv.F == history.Renew) && c.Type == history.OK:
			byLease[inv.Lease] = append(byLease[inv.Lease], useEvent{c.Time, useYes, p})
		case inv.F == history.Renew && c.Type == history.Fail && c.Refused:
			byLease[inv.Lease] = append(byLease[inv.Lease], useEvent{c.Time, useRefusal, p})
		case inv.F.IsResource():
			byLease[inv.Lease] = append(byLease[inv.Lease], useEvent{inv.Time, useResource, p})
		}
	}
	for _, evs := range byLease {
		sort.SliceStable(evs, func(i, j int) bool {
			if evs[i].t != evs[j].t {
				return evs[i].t < evs[j].t
			}
			return evs[i].kind < evs[j].kind
		})
		var late, refused *useEvent
		told := false
		for i := range evs {
			e := &evs[i]
			switch e.kind {
			case useTold:
				told = true
			case useYes:
				late, refused = nil, nil
				holders := e.op.Invoke.F == history.Acquire || e.op.Invoke.Via != "" // not the watchdog's
				if took, ttl := tookOf(e.op), firstOf(e.op.Complete.TTL, e.op.Invoke.TTL); holders && ttl > 0 && took > ttl+lateMargin(e.op, ttl) {
					late = e
				}
			case useRefusal:
				if !told {
					refused = e
				}
			case useResource:
				use := e.op.Invoke
				if e.op.Outcome() == history.Fail && (late != nil || refused != nil) {
					// The resource turned the use away (a fenced register's
					// stale token): it did nothing, so the lock's late yes
					// or its silence cost nothing. The fence caught it.
					caught++
					late, refused = nil, nil
					continue
				}
				if late != nil {
					y := late.op
					found = append(found, BadUse{Kind: KindLateYesUsed, Key: y.Invoke.Key, Lease: y.Invoke.Lease, Process: y.Invoke.Process,
						Call: yesCall(y.Invoke), Took: tookOf(y), TTL: firstOf(y.Complete.TTL, y.Invoke.TTL), Said: late.t, Used: use.Time, Use: use.F})
					late = nil
				}
				if refused != nil && !told && (use.F == history.Write || use.F == history.Order) {
					found = append(found, BadUse{Kind: KindWriteAfterRefusal, Key: refused.op.Invoke.Key, Lease: refused.op.Invoke.Lease,
						Process: use.Process, Call: yesCall(refused.op.Invoke), Said: refused.t, Used: use.Time, Use: use.F})
					refused = nil
				}
			}
		}
	}
	sort.SliceStable(found, func(i, j int) bool { return found[i].Said < found[j].Said })
	return found, caught
}

// tookOf is how long a call took: between the client's own stamps when
// it gave them (from the start of the try that took the key, when the
// lock tried more than once), else between the harness's invocation and
// its reading of the reply.
func tookOf(p history.Operation) int64 {
	if c := p.Complete; c.Began > 0 && c.Ended >= c.Began {
		return c.Ended - max(c.Began, c.Tried)
	}
	return p.Complete.Time - max(p.Invoke.Time, p.Complete.Tried)
}

// lateMargin is how much longer than the TTL a call must take to be late:
// a little for Redis's milliseconds by the client's stamps, more by the
// harness's, which add the reply's way back through a loaded machine.
func lateMargin(p history.Operation, ttl int64) int64 {
	if c := p.Complete; c.Began > 0 && c.Ended >= c.Began {
		return max(int64(5*time.Millisecond), ttl/100)
	}
	return max(int64(100*time.Millisecond), ttl/5)
}

func yesCall(op history.Op) string {
	switch {
	case op.F == history.Acquire:
		return "acquire"
	case op.Via != "":
		return op.Via
	}
	return "watchdog renewal"
}
