package checker

import (
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/deadbolt-lab/deadbolt/history"
)

// The lease-lock model: a sequential specification of one lock key whose
// leases expire, checked for linearizability with porcupine, one partition
// per key. Expiry never shows in the history, so the model knows only the
// bounds of when the current lease can expire and allows any grant that
// could have happened after them. It flags a grant only when the previous
// lease cannot have expired yet.

// lockInput is a lock operation as the model sees it. Call is part of the
// input because expiry is measured from the moment the server may have
// granted, which is no earlier than the invocation.
type lockInput struct {
	F   history.F // acquire, release or renew
	Key string
	// Lease is the harness's name of the grant: the model's only identity.
	Lease   string
	Owner   string // the lock's token, for humans
	Process int
	TTL     int64
	Call    int64
	Index   int // history index of the invocation, for humans
}

// lockOutput carries Return because a grant is legal when the previous lease
// may have expired by the latest moment the grant can have happened.
type lockOutput struct {
	Type   history.Type // ok, fail or info
	Return int64        // never when the outcome is unknown
}

// leaseState is one key: free, or held by Lease with a lease granted (or
// last renewed) no earlier than Granted, which expires somewhere in
// [Earliest, Latest].
type leaseState struct {
	Held     bool
	Lease    string
	TTL      int64
	Granted  int64
	Earliest int64
	Latest   int64
}

func (s leaseState) String() string {
	if !s.Held {
		return "free"
	}
	return fmt.Sprintf("held by %s, expiring between %s and %s", s.Lease, at(s.Earliest), at(s.Latest))
}

// grant is the state after in took the lock, or nothing when the current
// lease cannot have expired by the latest moment of the grant. Re-acquiring
// under the same lease id is allowed: it excludes nobody.
//
// The grant happened no earlier than the invocation, nor than the moment
// the lease it replaced could first expire. The second bound matters for
// info acquires, which return at infinity and so may take the lock over any
// lease: their own lease must not then be dated from their invocation, or
// it would look expired early and excuse the next grant.
func grant(s leaseState, in lockInput, out lockOutput) []any {
	from := in.Call
	if s.Held && s.Lease != in.Lease {
		if s.Earliest > out.Return {
			return nil
		}
		from = max(from, s.Earliest)
	}
	from = max(from, s.Granted)
	return []any{leaseState{Held: true, Lease: in.Lease, TTL: in.TTL, Granted: from,
		Earliest: expiry(from, in.TTL), Latest: expiry(out.Return, in.TTL)}}
}

// renewal moves the expiry of the holder's own lease, renewed no earlier
// than its invocation nor than the lease's grant. Without a TTL of its own
// a renewal reuses the lease's.
func renewal(s leaseState, in lockInput, out lockOutput) leaseState {
	ttl := firstOf(in.TTL, s.TTL)
	s.Granted = max(in.Call, s.Granted)
	s.Earliest, s.Latest = expiry(s.Granted, ttl), expiry(out.Return, ttl)
	return s
}

// stepLease lists every state the key can be in after the operation, none
// when the operation cannot have happened. Fail is always legal and changes
// nothing: locks fail for reasons other than the key being held (a lost
// Redlock quorum, "not ours" on release), and failing to make progress is a
// liveness matter. Info may or may not have taken effect, so both outcomes
// are kept.
func stepLease(s leaseState, in lockInput, out lockOutput) []any {
	if out.Type == history.Fail {
		return []any{s}
	}
	var took []any
	mine := s.Held && s.Lease == in.Lease
	switch in.F {
	case history.Acquire:
		took = grant(s, in, out)
	case history.Release:
		if mine {
			took = []any{leaseState{}}
		}
	case history.Renew:
		if mine {
			took = []any{renewal(s, in, out)}
		}
	}
	if out.Type == history.Info {
		return append([]any{s}, took...)
	}
	return took
}

var stateSeed = maphash.MakeSeed()

var leaseModel = porcupine.NondeterministicModel{
	Partition: func(ops []porcupine.Operation) [][]porcupine.Operation {
		_, parts := partitionByKey(ops)
		return parts
	},
	Init: func() []any { return []any{leaseState{}} },
	Step: func(state, input, output any) []any {
		return stepLease(state.(leaseState), input.(lockInput), output.(lockOutput))
	},
	Hash: func(state any) uint64 { return maphash.Comparable(stateSeed, state.(leaseState)) },
	DescribeOperation: func(input, output any) string {
		in, out := input.(lockInput), output.(lockOutput)
		return fmt.Sprintf("%s %s → %s", in.F, in.Lease, out.Type)
	},
	DescribeState: func(state any) string { return state.(leaseState).String() },
	DescribeOperationMetadata: func(info any) string {
		if info == nil {
			return ""
		}
		return fmt.Sprint(info)
	},
}

// partitionByKey splits operations by key, keys sorted, so that the caller
// and porcupine (which calls it too) agree on which partition is which key.
func partitionByKey(ops []porcupine.Operation) ([]string, [][]porcupine.Operation) {
	byKey := map[string][]porcupine.Operation{}
	for _, op := range ops {
		k := op.Input.(lockInput).Key
		byKey[k] = append(byKey[k], op)
	}
	keys := make([]string, 0, len(byKey))
	for k := range byKey {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([][]porcupine.Operation, len(keys))
	for i, k := range keys {
		parts[i] = byKey[k]
	}
	return keys, parts
}

// lockOperations converts acquires, releases and renewals. An operation the
// history never completed is info, and info returns at porcupine's infinity:
// it may take effect at any later time.
//
// Some info operations are left out because their "took effect" branch
// only forbids what "no effect" allows, so they cannot change the verdict
// (place them last, with no effect), yet porcupine would try them at every
// point after their invocation, which is exponential in their number when a
// key is illegal. They are: info renewals (a later expiry never excuses
// anything), and info acquires whose owner appears in no other operation on
// the key (a lease nobody releases or renews only blocks others).
//
// Leases are told apart by their harness lease id, never by the lock's
// token: a lock that hands every client the same token is still caught.
func lockOperations(pairs []history.Operation) []porcupine.Operation {
	var ins []lockInput
	var outs []lockOutput
	uses := map[leaseID]int{}
	for _, p := range pairs {
		inv := p.Invoke
		if inv.F != history.Acquire && inv.F != history.Release && inv.F != history.Renew {
			continue
		}
		in := lockInput{F: inv.F, Key: inv.Key, Lease: inv.Lease, Owner: inv.Owner, Process: inv.Process, TTL: inv.TTL, Call: inv.Time, Index: inv.Index}
		out := lockOutput{Type: p.Outcome(), Return: never}
		if c := p.Complete; c != nil {
			in.Owner, in.TTL = firstOf(in.Owner, c.Owner), firstOf(in.TTL, c.TTL)
			if c.Type != history.Info {
				out.Return = c.Time
			}
		}
		ins, outs = append(ins, in), append(outs, out)
		uses[leaseID{in.Key, in.Lease}]++
	}
	var ops []porcupine.Operation
	for i, in := range ins {
		if outs[i].Type == history.Info {
			if in.F == history.Renew || (in.F == history.Acquire && uses[leaseID{in.Key, in.Lease}] == 1) {
				continue
			}
		}
		ops = append(ops, porcupine.Operation{
			ClientId: max(in.Process, 0), Input: in, Call: in.Call, Output: outs[i], Return: outs[i].Return,
			Metadata: fmt.Sprintf("op %d, process %d", in.Index, in.Process),
		})
	}
	return ops
}

type leaseID struct{ key, lease string }

func init() {
	Register("lease-lock", "a porcupine model of a lock whose leases expire: is there a legal order of every lock operation?",
		func(o Options) Checker { return leaseLockChecker{timeout: o.timeout()} })
}

type leaseLockChecker struct{ timeout time.Duration }

func (c leaseLockChecker) Check(in *Input) Result {
	r := newResult("lease-lock")
	ll := checkLeaseLock(in.Pairs, in.Faults, c.timeout)
	r.Verdict, r.Details = ll.Verdict, &ll
	for i, k := range ll.FailedKeys {
		r.Anomalies = append(r.Anomalies, Anomaly{Kind: KindNoLegalOrder, At: ll.FailedAt[i], Key: k, Text: ll.Anomalies[i]})
	}
	switch ll.Verdict {
	case Invalid:
		noun := "key"
		if len(ll.FailedKeys) > 1 {
			noun = "keys"
		}
		r.Reason = fmt.Sprintf("no legal lease-lock order for %s %s.", noun, quoteAll(ll.FailedKeys))
	case Unknown:
		r.Reason = fmt.Sprintf("the lease-lock model check hit its %s time limit, so the history is neither proven valid nor invalid.", c.timeout)
	default:
		r.Reason = fmt.Sprintf("a legal lease-lock order explains all %s on %s.", plural(ll.Operations, "lock operation"), plural(ll.Keys, "key"))
	}
	return r
}

// LeaseLockResult is the lease-lock model's answer.
type LeaseLockResult struct {
	Verdict Verdict `json:"verdict"`
	// FailedKeys are the keys no legal order explains.
	FailedKeys []string `json:"failed_keys,omitempty"`
	// FailedAt is when each failed key's trouble starts: the call of the
	// first operation its longest legal order could not place.
	FailedAt []int64 `json:"-"`
	// Anomalies explain each failed key: the longest legal order found, the
	// state it leaves, and the operations that cannot come next.
	Anomalies  []string `json:"anomalies,omitempty"`
	Keys       int      `json:"keys"`
	Operations int      `json:"operations"`

	model porcupine.Model
	info  porcupine.LinearizationInfo
}

// LeaseLock checks the history's lock operations against the lease-lock
// model. A timeout of 0 means no limit (porcupine's convention); hitting the
// limit gives Unknown.
func LeaseLock(ops []history.Op, timeout time.Duration) (LeaseLockResult, error) {
	pairs, err := history.Pair(ops)
	if err != nil {
		return LeaseLockResult{}, err
	}
	return checkLeaseLock(pairs, FaultWindows(ops), timeout), nil
}

func checkLeaseLock(pairs []history.Operation, faults []FaultWindow, timeout time.Duration) LeaseLockResult {
	model := leaseModel.ToModel()
	ops := lockOperations(pairs)
	keys, parts := partitionByKey(ops)
	start := time.Now()
	res, info := porcupine.CheckOperationsVerbose(model, ops, timeout)
	timedOut := timeout > 0 && time.Since(start) >= timeout
	for _, w := range faults {
		info.AddAnnotations([]porcupine.Annotation{{
			Tag: "nemesis", Start: w.Start, End: w.End, Description: w.Name(),
			Details: fmt.Sprintf("%s from %s to %s", w.Name(), at(w.Start), at(w.End)),
		}})
	}
	r := LeaseLockResult{Verdict: Valid, Keys: len(keys), Operations: len(ops), model: model, info: info}
	switch res {
	case porcupine.Unknown:
		r.Verdict = Unknown
	case porcupine.Illegal:
		r.Verdict = Invalid
		partials := info.PartialLinearizations()
		for i, part := range parts {
			// A key that passed has a complete linearization among its partials.
			if best := longest(partials[i]); len(best) < len(part) {
				r.FailedKeys = append(r.FailedKeys, keys[i])
				r.FailedAt = append(r.FailedAt, stuckAt(part, best))
				r.Anomalies = append(r.Anomalies, explain(model, keys[i], part, best, timedOut))
			}
		}
	}
	return r
}

// longest picks the longest partial linearization, the first in a fixed
// order among equals, since porcupine returns them from a map.
func longest(partials [][]int) []int {
	var best []int
	for _, p := range partials {
		if len(p) > len(best) || (len(p) == len(best) && best != nil && lessInts(p, best)) {
			best = p
		}
	}
	return best
}

func lessInts(a, b []int) bool {
	for i := range a {
		if a[i] != b[i] {
			return a[i] < b[i]
		}
	}
	return false
}

// explain says why a key has no legal order: after the longest legal
// prefix porcupine found, the operations that must come next (none returned
// before they were invoked) cannot be applied to any state the key can be in.
func explain(model porcupine.Model, key string, part []porcupine.Operation, prefix []int, timedOut bool) string {
	state := model.Init()
	done := make([]bool, len(part))
	for _, id := range prefix {
		_, state = model.Step(state, part[id].Input, part[id].Output)
		done[id] = true
	}
	firstReturn := int64(never)
	for id, op := range part {
		if !done[id] {
			firstReturn = min(firstReturn, op.Return)
		}
	}
	var next, stuck []string
	for id, op := range part {
		if done[id] || op.Call > firstReturn {
			continue
		}
		d := describeLockOp(op)
		next = append(next, d)
		if ok, _ := model.Step(state, op.Input, op.Output); !ok {
			stuck = append(stuck, d)
		}
	}
	if len(stuck) == 0 {
		stuck = next
	}
	var b strings.Builder
	fmt.Fprintf(&b, "key %q has no legal lease-lock order", key)
	if len(prefix) == 0 {
		fmt.Fprintf(&b, ": no operation can come first from a free lock")
	} else {
		fmt.Fprintf(&b, ": the longest legal order covers %d of %d operations, ending with %s, which leaves the lock %s",
			len(prefix), len(part), describeLockOp(part[prefix[len(prefix)-1]]), describeStates(state))
	}
	fmt.Fprintf(&b, "; then none of these can happen: %s", listSome(stuck, 4))
	if timedOut {
		b.WriteString(" (the check also hit its time limit, so this key may be unfinished rather than illegal)")
	}
	return b.String()
}

// describeStates reads the model's set of possible states as alternatives.
func describeStates(state any) string {
	var ds []string
	for _, s := range state.([]any) {
		ds = append(ds, s.(leaseState).String())
	}
	return strings.Join(ds, " or ")
}

func describeLockOp(op porcupine.Operation) string {
	in, out := op.Input.(lockInput), op.Output.(lockOutput)
	return fmt.Sprintf("process %d %s of lease %s %s in [%s, %s] (invoked as op %d)",
		in.Process, in.F, in.Lease, out.Type, at(in.Call), at(out.Return), in.Index)
}

func listSome(items []string, n int) string {
	if len(items) <= n {
		return strings.Join(items, "; ")
	}
	return fmt.Sprintf("%s; and %d more", strings.Join(items[:n], "; "), len(items)-n)
}

// WriteVisualization writes porcupine's HTML view of the check: each key's
// operations, the longest legal orders found, and fault windows as
// annotations.
func (r LeaseLockResult) WriteVisualization(w io.Writer) error {
	if r.model.Step == nil {
		return errors.New("the lease-lock model did not run")
	}
	return porcupine.Visualize(r.model, r.info, w)
}

// stuckAt is the earliest call among the operations a prefix left out.
func stuckAt(part []porcupine.Operation, prefix []int) int64 {
	done := make([]bool, len(part))
	for _, id := range prefix {
		done[id] = true
	}
	first := int64(never)
	for id, op := range part {
		if !done[id] {
			first = min(first, op.Call)
		}
	}
	return first
}
