package checker

import (
	"cmp"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"maps"
	"math"
	"runtime"
	"slices"
	"strings"
	"sync"

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
	// Lease is the harness's name of the grant: the model's identity of a
	// holder, or for a reentrant lock Client is.
	Lease  string
	Client int32
	// Reentrant: a holder's acquire re-enters (a hold count), and the key
	// is free only after as many releases.
	Reentrant bool
	Owner     string // the lock's token, for humans
	Process   int
	TTL       int64
	Call      int64
	Index     int // history index of the invocation, for humans
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
	Held   bool
	Lease  string
	Client int32
	// Count is a reentrant holder's hold count (0 for other locks).
	Count    int
	TTL      int64
	Granted  int64
	Earliest int64
	Latest   int64
	// Floor is the earliest moment the key can have reached this state:
	// the next operation takes effect no earlier, so one that returned
	// before it cannot come next. Without it a release dated after a late
	// grant would free the key for an operation that ended long before.
	Floor int64
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
func grant(s leaseState, in lockInput, out lockOutput) (leaseState, bool) {
	from := max(in.Call, s.Floor)
	if s.Held && s.Lease != in.Lease {
		from = max(from, s.Earliest)
	}
	from = max(from, s.Granted)
	if from > out.Return {
		return leaseState{}, false
	}
	count := 0 // only a reentrant holder counts its holds
	if in.Reentrant {
		count = 1
	}
	return leaseState{Held: true, Lease: in.Lease, Client: in.Client, Count: count, TTL: in.TTL, Granted: from,
		Earliest: expiry(from, in.TTL), Latest: expiry(out.Return, in.TTL), Floor: from}, true
}

// renewal moves the expiry of the holder's own lease, renewed no earlier
// than its invocation nor than the lease's grant (nothing when it returned
// before that). Without a TTL of its own a renewal reuses the lease's.
func renewal(s leaseState, in lockInput, out lockOutput) (leaseState, bool) {
	ttl := firstOf(in.TTL, s.TTL)
	s.Granted = max(in.Call, s.Granted, s.Floor)
	if s.Granted > out.Return {
		return leaseState{}, false
	}
	s.Earliest, s.Latest, s.Floor = expiry(s.Granted, ttl), expiry(out.Return, ttl), s.Granted
	return s, true
}

// stepLease lists every state the key can be in after the operation, none
// when the operation cannot have happened (stepLeaseInto, boxed for
// porcupine).
func stepLease(s leaseState, in lockInput, out lockOutput) []any {
	var buf [3]leaseState
	next := stepLeaseInto(buf[:0], s, in, out)
	if len(next) == 0 {
		return nil
	}
	boxed := make([]any, len(next))
	for i, n := range next {
		boxed[i] = n
	}
	return boxed
}

// stepLeaseInto appends to dst every state the key can be in after the
// operation, none when the operation cannot have happened. Fail is always
// legal and changes nothing: locks fail for reasons other than the key
// being held (a lost Redlock quorum, "not ours" on release), and failing
// to make progress is a liveness matter. Info may or may not have taken
// effect, so both outcomes are kept, the state before first.
func stepLeaseInto(dst []leaseState, s leaseState, in lockInput, out lockOutput) []leaseState {
	if out.Type == history.Fail {
		return append(dst, s)
	}
	if out.Type == history.Info {
		dst = append(dst, s)
	}
	add := func(n leaseState, ok bool) {
		if ok {
			dst = append(dst, n)
		}
	}
	mine := s.Held && s.Lease == in.Lease
	if in.Reentrant {
		mine = s.Held && s.Client == in.Client
	}
	switch {
	case in.F == history.Acquire && in.Reentrant && mine:
		// Re-entry, while the hold may still be live: one more hold, and
		// the server resets the TTL. Once it may have expired, the acquire
		// may be a fresh grant to the same client instead.
		if max(in.Call, s.Floor, s.Granted) <= s.Latest {
			if r, ok := renewal(s, in, out); ok {
				r.Count++
				dst = append(dst, r)
			}
		}
		add(grant(s, in, out))
	case in.F == history.Acquire:
		add(grant(s, in, out))
	case in.F == history.Release && in.Reentrant && mine && s.Count > 1 && max(in.Call, s.Floor, s.Granted) <= s.Latest:
		// One hold fewer; the server resets the TTL of those left.
		if r, ok := renewal(s, in, out); ok {
			r.Count--
			dst = append(dst, r)
		}
	case in.F == history.Release:
		if at := max(in.Call, s.Floor); mine && at <= out.Return {
			dst = append(dst, leaseState{Floor: at})
		}
	case in.F == history.Renew:
		if mine {
			add(renewal(s, in, out))
		}
	}
	return dst
}

var stateSeed = maphash.MakeSeed()

// Each porcupine operation's Input and Output are the same *lockOp: no
// copy of it is boxed per operation. leaseModel is for locks without
// re-entry; reentrantModel for those with it (Options.Reentrant).
var leaseModel = leaseModelOf(false)

var reentrantModel = leaseModelOf(true)

func leaseModelOf(reentrant bool) porcupine.NondeterministicModel {
	m := leaseModelBase
	m.Step = func(state, input, _ any) []any {
		l := input.(*lockOp)
		return stepLease(state.(leaseState), l.stepInput(reentrant), l.output())
	}
	return m
}

// modelFor is the lease-lock model for a lock with or without re-entry.
func modelFor(reentrant bool) porcupine.NondeterministicModel {
	if reentrant {
		return reentrantModel
	}
	return leaseModel
}

var leaseModelBase = porcupine.NondeterministicModel{
	Init: func() []any { return []any{leaseState{}} },
	Hash: func(state any) uint64 { return maphash.Comparable(stateSeed, state.(leaseState)) },
	DescribeOperation: func(input, _ any) string {
		l := input.(*lockOp)
		return fmt.Sprintf("%s %s → %s", l.f, l.lease, l.output().Type)
	},
	DescribeState: func(state any) string { return state.(leaseState).String() },
	DescribeOperationMetadata: func(info any) string {
		if info == nil {
			return ""
		}
		return fmt.Sprint(info)
	},
}

// keyed is a lease-lock model partitioned by key, for porcupine's view of
// several keys at once.
func keyed(m porcupine.NondeterministicModel) porcupine.NondeterministicModel {
	m.Partition = func(ops []porcupine.Operation) [][]porcupine.Operation {
		_, parts := partitionByKey(ops)
		return parts
	}
	return m
}

func (l *lockOp) input() lockInput {
	return lockInput{F: l.f, Key: l.key, Lease: l.lease, Client: l.client, Owner: l.owner, Process: int(l.process), TTL: l.ttl, Call: l.from(), Index: int(l.invIndex)}
}

// stepInput is input with only what stepLease reads, for the hot path:
// the model's input for l, porcupine's (leaseModelOf) and
// followPorcupine's alike.
func (l *lockOp) stepInput(reentrant bool) lockInput {
	return lockInput{F: l.f, Lease: l.lease, Client: l.client, TTL: l.ttl, Call: l.from(), Reentrant: reentrant}
}

// output: an operation that did not complete, or ended info, returns at
// porcupine's infinity: it may take effect at any later time.
func (l *lockOp) output() lockOutput {
	if l.outcome == history.Info || !l.completed() {
		return lockOutput{Type: history.Info, Return: never}
	}
	return lockOutput{Type: l.outcome, Return: l.done}
}

// String is the operation's metadata in porcupine's view.
func (l *lockOp) String() string { return fmt.Sprintf("op %d, process %d", l.invIndex, l.process) }

// partitionByKey splits operations by key, keys sorted, so that the caller
// and porcupine (which calls it too) agree on which partition is which key.
func partitionByKey(ops []porcupine.Operation) ([]string, [][]porcupine.Operation) {
	byKey := map[string][]porcupine.Operation{}
	for _, op := range ops {
		k := op.Input.(*lockOp).key
		byKey[k] = append(byKey[k], op)
	}
	keys := slices.Sorted(maps.Keys(byKey))
	parts := make([][]porcupine.Operation, len(keys))
	for i, k := range keys {
		parts[i] = byKey[k]
	}
	return keys, parts
}

// searchable picks, per key, the lock operations the model must place,
// keys sorted.
//
// Failed operations are left out: they are legal in any state and change
// nothing, so there is nothing to search (and a contended key is mostly
// refusals). Some info operations are left out because their "took effect"
// branch only forbids what "no effect" allows, so they cannot change the
// verdict (place them last, with no effect), yet porcupine would try them
// at every point after their invocation, which is exponential in their
// number when a key is illegal. They are: info renewals (a later expiry
// never excuses anything), and info acquires whose lease appears in no
// other operation on the key (a lease nobody releases or renews only
// blocks others).
//
// Leases are told apart by their harness lease id, never by the lock's
// token: a lock that hands every client the same token is still caught.
func searchable(locks []lockOp) (keys []string, byKey map[string][]*lockOp) {
	uses := map[leaseID]int{} // of the leases of info acquires only: they are few
	for i := range locks {
		if l := &locks[i]; l.f == history.Acquire && l.output().Type == history.Info {
			uses[leaseID{l.key, l.lease}] = 0
		}
	}
	if len(uses) > 0 {
		for i := range locks {
			id := leaseID{locks[i].key, locks[i].lease}
			if n, ok := uses[id]; ok {
				uses[id] = n + 1
			}
		}
	}
	byKey = map[string][]*lockOp{}
	// A window's operations are all of one key: the slice of the key
	// before is kept at hand, not looked up for each operation.
	var key string
	var ofKey []*lockOp
	for i := range locks {
		l := &locks[i]
		out := l.output()
		switch {
		case out.Type == history.Fail || l.f == history.Lost: // a loss told is the holder's, not the service's
			continue
		case out.Type == history.Info && (l.f == history.Renew || (l.f == history.Acquire && uses[leaseID{l.key, l.lease}] == 1)):
			continue
		}
		if ofKey == nil || l.key != key {
			if ofKey != nil {
				byKey[key] = ofKey
			}
			key, ofKey = l.key, byKey[l.key]
			if ofKey == nil && len(byKey) == 0 {
				ofKey = make([]*lockOp, 0, len(locks)-i) // a window's one key
			}
		}
		ofKey = append(ofKey, l)
	}
	if ofKey != nil {
		byKey[key] = ofKey
	}
	return slices.Sorted(maps.Keys(byKey)), byKey
}

// porcupineOps are ls as porcupine operations.
func porcupineOps(ls []*lockOp) []porcupine.Operation {
	ops := make([]porcupine.Operation, len(ls))
	for i, l := range ls {
		ops[i] = porcupine.Operation{ClientId: max(int(l.process), 0), Input: l, Call: l.call, Output: l, Return: l.output().Return, Metadata: l}
	}
	return ops
}

type leaseID struct{ key, lease string }

func init() {
	RegisterScoped("lease-lock", "a porcupine model of a lock whose leases expire: is there a legal order of every lock operation?", LockService,
		func(o Options) Checker { return leaseLockChecker{steps: o.modelSteps()} })
}

type leaseLockChecker struct{ steps int64 }

// Check keeps every key's operations in the result, for the model view
// of a history checked whole; Part keeps only the failed keys'.
func (c leaseLockChecker) Check(in *Input) Result {
	return leaseLockResult(checkLeaseLock(in.locks, in.Faults, c.steps, in.Reentrant), c.steps)
}

// leaseLockCarry is a key's search chained over its windows (pieceChain),
// and the operations it was given.
type leaseLockCarry struct {
	chain *pieceChain
	ops   int
}

// Part searches a whole key as Check does, or chains a window onto the
// key's search so far; a key the chain cannot prove legal is checked
// whole, the steps its windows took counted with it.
func (c leaseLockChecker) Part(in *Input, at PartAt) (any, any) {
	if !at.Windowed() {
		r := checkLeaseLock(in.locks, in.Faults, c.steps, in.Reentrant)
		if spent, ok := at.Abandoned.(*leaseLockCarry); ok {
			r.Steps, r.MostSteps = r.Steps+spent.chain.steps, max(r.MostSteps, spent.chain.most)
		}
		if len(r.FailedKeys) == 0 {
			r.byKey, r.info = nil, nil // kept only to draw a failed key
		}
		return r, nil
	}
	w, _ := at.Carry.(*leaseLockCarry)
	if w == nil {
		w = &leaseLockCarry{chain: newPieceChain(in.Reentrant, c.steps)}
	}
	_, byKey := searchable(in.locks)
	ls := byKey[at.Key] // searchable's own: sorted in place
	slices.SortFunc(ls, func(a, b *lockOp) int { return cmp.Compare(a.call, b.call) })
	w.ops += len(ls)
	if w.chain.add(ls); w.chain.failed || (at.Last && !w.chain.finish()) {
		at.CheckWhole()
		return nil, w
	}
	if !at.Last {
		return nil, w
	}
	r := LeaseLockResult{Verdict: Valid, Operations: w.ops, Steps: w.chain.steps, MostSteps: w.chain.most}
	if w.ops > 0 {
		r.Keys = 1
	}
	return r, w
}

// Merge composes the keys' searches; a window before a key's last has
// none (the key's search is decided at its last).
func (c leaseLockChecker) Merge(whole *Input, parts []any) Result {
	all := keyed(modelFor(whole.Reentrant))
	ll := LeaseLockResult{Verdict: Valid, byKey: map[string][]*lockOp{}, faults: whole.Faults, steps: c.steps, model: all.ToModel()}
	for _, p := range parts {
		r, ok := p.(LeaseLockResult)
		if !ok {
			continue
		}
		ll.FailedKeys, ll.FailedAt = append(ll.FailedKeys, r.FailedKeys...), append(ll.FailedAt, r.FailedAt...)
		ll.Anomalies, ll.UnknownKeys = append(ll.Anomalies, r.Anomalies...), append(ll.UnknownKeys, r.UnknownKeys...)
		ll.Keys, ll.Operations = ll.Keys+r.Keys, ll.Operations+r.Operations
		ll.Steps, ll.MostSteps = ll.Steps+r.Steps, max(ll.MostSteps, r.MostSteps)
		for _, k := range r.FailedKeys {
			ll.byKey[k] = r.byKey[k] // what WriteVisualization draws
		}
	}
	switch {
	case len(ll.FailedKeys) > 0:
		ll.Verdict = Invalid
	case len(ll.UnknownKeys) > 0:
		ll.Verdict = Unknown
	}
	return leaseLockResult(ll, c.steps)
}

// leaseLockResult is the verdict of the model check ll, each search
// limited to steps.
func leaseLockResult(ll LeaseLockResult, steps int64) Result {
	r := newResult("lease-lock")
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
		if len(ll.UnknownKeys) > 0 {
			r.Reason += fmt.Sprintf(" (The check spent its budget of %s on %s before deciding them.)", Plural(int(steps), "step"), Plural(len(ll.UnknownKeys), "other key"))
		}
	case Unknown:
		r.Reason = fmt.Sprintf("the lease-lock model check spent its budget of %s on %s of %d before deciding them, so the history is neither proven valid nor invalid.",
			Plural(int(steps), "step"), Plural(len(ll.UnknownKeys), "key"), ll.Keys)
	default:
		r.Reason = fmt.Sprintf("a legal lease-lock order explains all %s on %s (failed ones change nothing and need no place).",
			Plural(ll.Operations, "lock operation"), Plural(ll.Keys, "key"))
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
	Anomalies []string `json:"anomalies,omitempty"`
	// UnknownKeys are the keys whose search spent its budget of steps
	// before deciding them.
	UnknownKeys []string `json:"unknown_keys,omitempty"`
	// Keys and Operations count what the model had to place.
	Keys       int `json:"keys"`
	Operations int `json:"operations"`
	// Steps are the model steps every search took, MostSteps the most
	// one search took: the cost of the verdict, the same on any machine.
	// Not in the report: a history checked key by key from a file is
	// searched in other pieces than one checked whole, for the same verdict.
	Steps     int64 `json:"-"`
	MostSteps int64 `json:"-"`

	byKey  map[string][]*lockOp
	faults []FaultWindow
	// steps is each search's budget (0: none), for the search that draws.
	steps int64
	// info is porcupine's record of the failed keys, for its view.
	model porcupine.Model
	info  *porcupine.LinearizationInfo
}

// LeaseLock checks the history's lock operations against the lease-lock
// model, each search limited to steps model steps (0 means no limit); a
// key whose search spends them is unknown.
func LeaseLock(ops []history.Op, steps int64) (LeaseLockResult, error) {
	in, err := NewInput(ops)
	if err != nil {
		return LeaseLockResult{}, err
	}
	return checkLeaseLock(in.locks, in.Faults, steps, false), nil
}

// keySearch is what deciding one key came to, and the steps it took.
type keySearch struct {
	res         porcupine.CheckResult
	steps, most int64
}

func (s *keySearch) add(b *stepBudget) {
	s.steps, s.most = s.steps+b.taken, max(s.most, b.taken)
}

// checkLeaseLock checks each key on its own, as many at once as there
// are CPUs, so that memory holds the search of a few keys rather than of
// all: porcupine keeps a bitset of the operations placed so far for every
// state it visits, which grows with the square of a key's operations.
// Each search may take steps model steps (none when 0). Only the keys
// found illegal are searched again, verbosely, to explain them.
func checkLeaseLock(locks []lockOp, faults []FaultWindow, steps int64, reentrant bool) LeaseLockResult {
	keys, byKey := searchable(locks)
	base := modelFor(reentrant)
	all := keyed(base)
	r := LeaseLockResult{Verdict: Valid, Keys: len(keys), byKey: byKey, faults: faults, steps: steps, model: all.ToModel()}
	for _, k := range keys {
		r.Operations += len(byKey[k])
	}
	results := make([]keySearch, len(keys))
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(keys)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			model := base.ToModel()
			for i := range next {
				results[i] = checkKey(reentrant, model, byKey[keys[i]], steps)
			}
		}()
	}
	for i := range keys {
		next <- i
	}
	close(next)
	wg.Wait()

	var failed []porcupine.Operation
	for i, res := range results {
		r.Steps, r.MostSteps = r.Steps+res.steps, max(r.MostSteps, res.most)
		switch res.res {
		case porcupine.Illegal:
			r.FailedKeys = append(r.FailedKeys, keys[i])
			failed = append(failed, porcupineOps(byKey[keys[i]])...)
		case porcupine.Unknown:
			r.UnknownKeys = append(r.UnknownKeys, keys[i])
		}
	}
	switch {
	case len(r.FailedKeys) > 0:
		r.Verdict = Invalid
	case len(r.UnknownKeys) > 0:
		r.Verdict = Unknown
		return r
	default:
		return r
	}
	// Search the failed keys again for porcupine's longest legal orders,
	// which explain them. The verdict is already made: this search is the
	// one that found each key illegal, step for step (the same operations
	// in the same order), so the same budget per key ends it the same way.
	budgets := map[string]*stepBudget{}
	for _, k := range r.FailedKeys {
		budgets[k] = &stepBudget{limit: steps}
	}
	_, info := porcupine.CheckOperationsVerbose(countedByKey(r.model, budgets), failed, 0)
	annotate(&info, faults)
	r.info = &info
	_, parts := partitionByKey(failed)
	partials := info.PartialLinearizations()
	for i, part := range parts {
		best := longest(partials[i])
		r.FailedAt = append(r.FailedAt, stuckAt(part, best))
		r.Anomalies = append(r.Anomalies, explain(r.model, r.FailedKeys[i], part, best, budgets[r.FailedKeys[i]].spent))
	}
	return r
}

// checkKey decides one key, each search limited to steps (none when 0):
// legal when it is legal piece by piece (see legalInPieces), otherwise by
// one search of the whole key, unknown when that search spent its steps.
func checkKey(reentrant bool, model porcupine.Model, ls []*lockOp, steps int64) keySearch {
	c := newPieceChain(reentrant, steps)
	if legalInPieces(c, ls) {
		return keySearch{res: porcupine.Ok, steps: c.steps, most: c.most}
	}
	s := keySearch{steps: c.steps, most: c.most}
	b := &stepBudget{limit: steps}
	s.res = porcupine.CheckOperationsTimeout(counted(model, b), porcupineOps(ls), 0)
	s.add(b)
	if s.res != porcupine.Ok && b.spent {
		s.res = porcupine.Unknown // cut short: proves nothing
	}
	return s
}

// pieceOps is about how many operations each piece of a key holds.
const pieceOps = 256

// legalInPieces looks for a legal order of a key one piece at a time, so
// that the search costs what the pieces cost rather than the square of
// the key's length (porcupine keeps a bitset of the operations placed so
// far for every state it visits).
//
// The key is cut where every operation invoked before the cut, save those
// of unknown outcome, returned before the next was invoked: any order of
// the operations before the cut followed by any order of those after it
// respects real time. Each piece is searched from the states the order
// found for the pieces before it can leave, and an operation of unknown
// outcome is kept within its piece (it took effect there or never). That
// explores only some of the orders, so finding one proves the key legal;
// not finding one (or a piece spending its steps) proves nothing, and the
// caller searches the whole key.
func legalInPieces(c *pieceChain, ls []*lockOp) bool {
	if len(ls) <= 2*pieceOps {
		return false // one search of the whole key is as cheap
	}
	c.add(slices.SortedFunc(slices.Values(ls), func(a, b *lockOp) int { return cmp.Compare(a.call, b.call) }))
	return c.finish()
}

// pieceChain is legalInPieces fed a key's operations a run at a time
// (window.go), each run sorted by invocation and invoked after the runs
// before it: it keeps the piece being gathered and the states the pieces
// before it can leave the key in. Each piece's search may take steps
// model steps (none when 0).
type pieceChain struct {
	reentrant  bool
	limit      int64
	states     []any
	piece      []lockOp
	lastReturn int64
	failed     bool
	// steps and most count the pieces' searches, as keySearch does.
	steps, most int64
}

func newPieceChain(reentrant bool, steps int64) *pieceChain {
	return &pieceChain{reentrant: reentrant, limit: steps, states: []any{leaseState{}}, lastReturn: math.MinInt64}
}

// add takes the next operations, sorted by invocation.
func (c *pieceChain) add(ls []*lockOp) {
	for _, l := range ls {
		if c.failed {
			return
		}
		if len(c.piece) >= pieceOps && l.call > c.lastReturn {
			c.search()
		}
		c.piece = append(c.piece, *l)
		if out := l.output(); out.Type != history.Info {
			c.lastReturn = max(c.lastReturn, out.Return)
		}
	}
}

// search searches the gathered piece and starts the next.
func (c *pieceChain) search() {
	if len(c.piece) == 0 {
		return
	}
	ps := make([]*lockOp, len(c.piece))
	for i := range c.piece {
		ps[i] = &c.piece[i]
	}
	b := &stepBudget{limit: c.limit}
	var ok bool
	if c.states, ok = legalPiece(c.reentrant, ps, c.states, b); !ok {
		c.failed = true
	}
	c.steps, c.most = c.steps+b.taken, max(c.most, b.taken)
	c.piece = c.piece[:0]
}

// finish searches the last piece: true when every piece had a legal order.
func (c *pieceChain) finish() bool {
	if !c.failed {
		c.search()
	}
	return !c.failed
}

// legalPiece searches one piece from the states init, its steps charged
// to b, and returns the states its order found can leave the key in.
func legalPiece(reentrant bool, piece []*lockOp, init []any, b *stepBudget) ([]any, bool) {
	if states, steps, ok := followPorcupine(piece, init, reentrant, b.limit); ok {
		b.take(steps)
		return states, true
	}
	return searchPiece(reentrant, piece, init, b)
}

// searchPiece is legalPiece's search by porcupine.
func searchPiece(reentrant bool, piece []*lockOp, init []any, b *stepBudget) ([]any, bool) {
	nm := modelFor(reentrant)
	nm.Init = func() []any { return init }
	model := nm.ToModel()
	ops := porcupineOps(piece)
	res, info := porcupine.CheckOperationsVerbose(counted(model, b), ops, 0)
	if res != porcupine.Ok {
		return nil, false
	}
	state, ok := model.Init(), true
	for _, id := range longest(info.PartialLinearizations()[0]) {
		if ok, state = model.Step(state, ops[id].Input, ops[id].Output); !ok {
			return nil, false
		}
	}
	return state.([]any), true
}

// annotate shades the fault windows in porcupine's view.
func annotate(info *porcupine.LinearizationInfo, faults []FaultWindow) {
	for _, w := range faults {
		info.AddAnnotations([]porcupine.Annotation{{
			Tag: "nemesis", Start: w.Start, End: w.End, Description: w.Name(),
			Details: fmt.Sprintf("%s from %s to %s", w.Name(), at(w.Start), at(w.End)),
		}})
	}
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
func explain(model porcupine.Model, key string, part []porcupine.Operation, prefix []int, cutShort bool) string {
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
		fmt.Fprintf(&b, ": the longest legal order covers %d of %s, ending with %s, which leaves the lock %s",
			len(prefix), Plural(len(part), "operation"), describeLockOp(part[prefix[len(prefix)-1]]), describeStates(state))
	}
	fmt.Fprintf(&b, "; then none of these can happen: %s", listSome(stuck, 4))
	if cutShort {
		b.WriteString(" (the search for the longest order spent its budget of steps, so a longer one may exist)")
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
	l := op.Input.(*lockOp)
	in, out := l.input(), l.output()
	return fmt.Sprintf("process %d %s of lease %s %s in [%s, %s] (invoked as op %d)",
		in.Process, in.F, in.Lease, out.Type, at(in.Call), at(out.Return), in.Index)
}

func listSome(items []string, n int) string {
	if len(items) <= n {
		return strings.Join(items, "; ")
	}
	return fmt.Sprintf("%s; and %d more", strings.Join(items[:n], "; "), len(items)-n)
}

// WriteVisualization writes porcupine's HTML view of the check: the keys
// found illegal (or, when none was, every key), each key's operations, the
// longest legal orders found, and fault windows as annotations. Drawing a
// legal history searches each key whole, within the check's budget per key.
func (r LeaseLockResult) WriteVisualization(w io.Writer) error {
	if r.model.Step == nil {
		return errors.New("the lease-lock model did not run")
	}
	info := r.info
	if info == nil {
		var ops []porcupine.Operation
		budgets := map[string]*stepBudget{}
		for _, k := range slices.Sorted(maps.Keys(r.byKey)) {
			ops = append(ops, porcupineOps(r.byKey[k])...)
			budgets[k] = &stepBudget{limit: r.steps}
		}
		_, i := porcupine.CheckOperationsVerbose(countedByKey(r.model, budgets), ops, 0)
		annotate(&i, r.faults)
		info = &i
	}
	return porcupine.Visualize(r.model, *info, w)
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
