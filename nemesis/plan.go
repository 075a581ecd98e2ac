package nemesis

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/deadbolt-lab/deadbolt/history"
	"github.com/deadbolt-lab/deadbolt/topology"
	"github.com/deadbolt-lab/deadbolt/workloads/moment"
)

// PlanSchedule is the name the plan schedule is registered under: a
// scenario's steps, as code that builds one names it.
const PlanSchedule = "plan"

func init() {
	register(PlanSchedule, "", "the faults of the scenario's steps, each on its target at its moment (see `deadbolt faults`)",
		func(p Params) Nemesis { return &Plan{Steps: p.Steps} }, []string{"steps"})
}

// Step is one fault of a plan: which fault, on what, when, for how long.
type Step struct {
	Fault string `json:"fault"`
	// Target is a selector (target.go); "" takes the fault's default.
	Target string `json:"target,omitempty"`
	// Key is the key whose holder the holder target means, and On the
	// workload event that shows it holds Key: an ok acquire (the default)
	// or an ok read of the resource under the lease.
	Key string    `json:"key,omitempty"`
	On  history.F `json:"on,omitempty"`
	// Point, for a fault on a client, arms this named point inside the
	// lock on the target (such as between GET and DEL) and strikes when the
	// client has stopped itself there.
	Point string `json:"point,omitempty"`
	// WaitKey, when set, holds the step back until client slot WaitSlot's
	// (any client's, with AnySlot) acquire of WaitKey is ok: the workload
	// event the fault is aimed at.
	WaitKey  string `json:"wait_key,omitempty"`
	WaitSlot int    `json:"wait_slot,omitempty"`
	// Aim aims the step at a grant made while its fault is in effect (a
	// late reply, a lease taken on a partial majority): the step strikes
	// first, then admits only WaitSlot to WaitKey, and the key opens to
	// everyone at that grant. A grant that has not come when the fault
	// heals or the fault phase ends makes the step missed. With
	// UntilFailover, the grant must be the master's that the failover
	// replaces (a lock the promoted replica will lack), or the step is
	// missed too; an AimAsked acquire that failed cannot be told apart, and
	// is not checked.
	Aim Aim `json:"aim,omitempty"`
	// After is how long after the previous step struck (and the wait) this
	// one strikes.
	After time.Duration `json:"after,omitempty"`
	// For is how long the fault lasts; 0 (with no TTLs) keeps it until the
	// run ends. A fault with nothing to heal (a crash) ends at once.
	For time.Duration `json:"for,omitempty"`
	// TTLs adds this many lease TTLs to For: 1 outlasts every lease the
	// target granted (antirez's delayed restart), 2 is a pause in which the
	// holder's lease surely runs out.
	TTLs int `json:"ttls,omitempty"`
	// By is the fault's size: a clock jump, a link delay.
	By time.Duration `json:"by,omitempty"`
	// Until ends the fault at a moment past its length (For and TTLs):
	// UntilHandoff, UntilFailover.
	Until Until `json:"until,omitempty"`
	// Strikes bounds how many requests a fault inside an operation
	// (pause-in-release, ...) strikes before it gives up (0:
	// DefaultStrikes); see strikes.go.
	Strikes int `json:"strikes,omitempty"`
}

// Aim is the grant a step is aimed at, made while its fault is in effect.
type Aim string

const (
	// AimNone: the step strikes at its moment and aims at no grant.
	AimNone Aim = ""
	// AimGrant: WaitSlot's ok acquire of WaitKey under the fault.
	AimGrant Aim = "grant"
	// AimAsked: WaitSlot's acquire of WaitKey under the fault, in any
	// outcome (a refusal, an error): a lock that must refuse under the
	// fault is tested only if its client asked for a free key while it was
	// in effect.
	AimAsked Aim = "asked"
)

// Until is what ends a step's fault past its length.
type Until string

const (
	// UntilLength: the fault ends after For and TTLs.
	UntilLength Until = ""
	// UntilHandoff ends a pause of Key's holder at a moment, not after its
	// length alone: once For and TTLs have passed, at the next grant of
	// Key (to another client: the sleeper cannot ask). That client is held
	// at its grant until the woken client's request in flight has
	// completed, so a late command of the sleeper's (the DEL of a release
	// that checked its owner before it slept) lands while the next holder
	// holds the key, whatever the machine's scheduling.
	UntilHandoff Until = "handoff"
	// UntilFailover holds a fault on the master (isolation, kill, freeze)
	// past its length until Sentinel has named another master: the
	// failover the step stages. Sentinels that split their votes try again
	// only after twice the failover timeout, past a fixed length; a
	// failover that has not come when the fault phase ends is recorded as
	// missed.
	UntilFailover Until = "failover"
)

// Validate rejects a step no plan can run (a scenario file's, say),
// before any container starts.
func (s Step) Validate() error { return s.validate() }

func (s Step) validate() error {
	e, err := lookupFault(s.Fault)
	if err != nil {
		return err
	}
	target := s.Target
	if target == "" {
		target = e.target
	}
	if err := checkSelector(target); err != nil {
		return fmt.Errorf("fault %s: %w", s.Fault, err)
	}
	if s.After < 0 || s.For < 0 || s.TTLs < 0 || s.WaitSlot < AnySlot || s.Strikes < 0 {
		return fmt.Errorf("fault %s: negative after, for, ttls, wait slot or strikes", s.Fault)
	}
	if _, inside := e.fault.(inOp); inside {
		if kind, _, _ := strings.Cut(target, ":"); kind != "client" && kind != "holder" {
			return fmt.Errorf("fault %s strikes inside a client's request: it needs a client target (client:SLOT or holder), not %q", s.Fault, target)
		}
		if s.Point != "" || s.On != "" || s.WaitKey != "" {
			return fmt.Errorf("fault %s strikes inside a request the harness sent: it takes no point, no workload event and no grant to wait for", s.Fault)
		}
	}
	if err := checkHolderEvent(s.On); err != nil {
		return fmt.Errorf("fault %s: %w", s.Fault, err)
	}
	kind, _, _ := strings.Cut(target, ":")
	if s.Point != "" && kind != "client" && kind != "holder" {
		return fmt.Errorf("fault %s: a point inside the lock needs a client target, not %q", s.Fault, target)
	}
	switch {
	case s.Aim != AimNone && s.Aim != AimGrant && s.Aim != AimAsked:
		return fmt.Errorf("fault %s: unknown aim %q (known: %s, %s)", s.Fault, s.Aim, AimGrant, AimAsked)
	case s.Until != UntilLength && s.Until != UntilHandoff && s.Until != UntilFailover:
		return fmt.Errorf("fault %s: unknown until %q (known: %s, %s)", s.Fault, s.Until, UntilHandoff, UntilFailover)
	}
	if s.Until == UntilHandoff && (s.Key == "" || (kind != "client" && kind != "holder") || (s.For == 0 && s.TTLs == 0)) {
		return fmt.Errorf("fault %s: a handoff needs a client target, a key and a length (for or ttls)", s.Fault)
	}
	if s.Aim != AimNone && (s.WaitKey == "" || kind == "client" || kind == "holder") {
		return fmt.Errorf("fault %s: a grant under the fault needs a wait key and a node or link target", s.Fault)
	}
	if s.Until == UntilFailover && (kind == "client" || kind == "holder" || kind == "link" || (s.For == 0 && s.TTLs == 0)) {
		return fmt.Errorf("fault %s: waiting for a failover needs a node target and a length (for or ttls)", s.Fault)
	}
	return nil
}

// AnySlot as a step's WaitSlot waits for any client's acquire.
const AnySlot = moment.AnySlot

// Plan runs its steps in order; each heals on its own schedule, so faults
// overlap as the steps say. Everything is healed before Run returns. The
// cluster's health is checked after the heal that leaves no fault in
// effect, which makes it the check before the next fault too (the first
// has CheckBefore's).
//
// Every step strikes at its moment by construction, or is recorded as
// missed (history.FaultMissed): the run then did not stage what it set out
// to. The steps at the head of the plan that need no workload event (no
// After, no WaitKey, no client target) strike before the first acquire. A
// step that waits for client slot S's grant (WaitKey, WaitSlot >= 0) keeps
// that key closed from the start of the workload until its turn, then
// admits only slot S, holds the client at its grant until the fault has
// struck, and opens the key to everyone. A step aimed at the holder of a
// key holds the holder at the event that showed it holds the key.
type Plan struct {
	Steps []Step

	mu     sync.Mutex
	active int // faults struck and not yet healed
	// lastStruck: no step is left to strike. healing: the heals after it
	// have begun (the history marks it once).
	lastStruck, healing bool
}

func (n *Plan) Span(ttl time.Duration) time.Duration {
	var at, end time.Duration
	for _, s := range n.Steps {
		at += s.After
		if f, ok := faults[s.Fault].fault.(inOp); ok {
			end = max(end, at+f.span(s, ttl))
			continue
		}
		end = max(end, at+s.hold(ttl))
	}
	return end
}

// hold is how long the step's fault lasts; 0 keeps it until the run ends.
func (s Step) hold(ttl time.Duration) time.Duration {
	return s.For + time.Duration(s.TTLs)*ttl
}

// opening is how many steps at the head of the plan strike before the
// workload's first acquire: those with no wait and no client to find. A
// step aimed at a grant under its fault ends the opening: the workload
// begins once it struck, to make that grant.
func (n *Plan) opening() int {
	k := 0
	for _, s := range n.Steps {
		if s.After != 0 || (s.WaitKey != "" && s.Aim == AimNone) || s.onClient() {
			break
		}
		k++
		if s.Aim != AimNone {
			break
		}
	}
	return k
}

// onClient reports a step whose target is a client process.
func (s Step) onClient() bool {
	target := s.Target
	if target == "" {
		target = faults[s.Fault].target
	}
	kind, _, _ := strings.Cut(target, ":")
	return kind == "client" || kind == "holder"
}

// reserves reports a step that waits for one client slot's grant, or for
// a grant under its fault: its key stays closed until the step's turn.
func (s Step) reserves() bool { return s.WaitKey != "" && (s.WaitSlot != AnySlot || s.Aim != AimNone) }

// describe names step i for the history and for people: its fault, its
// target and its moment.
func (s Step) describe(i int) string {
	target := s.Target
	if target == "" {
		target = faults[s.Fault].target
	}
	d := fmt.Sprintf("step %d: %s on %s", i+1, s.Fault, target)
	if s.Key != "" && strings.HasPrefix(target, "holder") {
		d += " (key " + s.Key + ")"
	}
	switch {
	case s.Aim == AimAsked:
		d += fmt.Sprintf(", then client %d's acquire of %s under it", s.WaitSlot, s.WaitKey)
	case s.Aim != AimNone:
		d += ", then " + s.moment() + " under it"
	case s.WaitKey != "":
		d += " at " + s.moment()
	}
	if s.Point != "" {
		d += " at point " + s.Point
	}
	if s.Until == UntilHandoff {
		d += ", ending at the next grant of " + s.Key
	}
	if s.Until == UntilFailover {
		d += ", held until Sentinel fails the master over"
	}
	return d
}

// moment names the grant a step waits for.
func (s Step) moment() string {
	if s.WaitSlot == AnySlot {
		return "the first grant of " + s.WaitKey
	}
	return fmt.Sprintf("client %d's grant of %s", s.WaitSlot, s.WaitKey)
}

func (n *Plan) validate() error {
	if len(n.Steps) == 0 {
		return errors.New("nemesis plan needs at least one step")
	}
	for _, s := range n.Steps {
		if err := s.validate(); err != nil {
			return err
		}
	}
	return nil
}

// stage sets the workload's gates before it starts: the first acquire
// waits for the opening steps, and each key a step reserves for one
// client stays closed until the step's turn.
func (n *Plan) stage(env Env) {
	if env.Clients == nil {
		return
	}
	if n.opening() > 0 {
		env.Clients.HoldStart()
	}
	for _, s := range n.Steps {
		if s.reserves() {
			env.Clients.Reserve(s.WaitKey)
		}
	}
}

func (n *Plan) Run(ctx context.Context, env Env) error {
	if err := n.validate(); err != nil {
		return err
	}
	var wg sync.WaitGroup
	errs := make(chan error, 2*len(n.Steps))
	opening := n.opening()
	begin := env.begin
	failed := ""
	for i, s := range n.Steps {
		if i == opening {
			begin()
		}
		last := i == len(n.Steps)-1
		switch {
		case failed != "":
			n.missed(env, i, s, last, failed)
		case ctx.Err() != nil:
			n.missed(env, i, s, last, "the fault phase ended before its turn")
		default:
			if err := n.step(ctx, env, i, s, last, &wg, errs); err != nil {
				errs <- err
				failed = fmt.Sprintf("step %d before it failed", i+1)
			}
		}
	}
	begin() // every step is opening: they hold until the fault phase ends
	wg.Wait()
	close(errs)
	var all []error
	for err := range errs {
		all = append(all, err)
	}
	return errors.Join(all...)
}

// missed records that step i never struck, and why; key, when given,
// is the key whose grant the step waited for.
func (n *Plan) missed(env Env, i int, s Step, last bool, why string, key ...string) {
	if last {
		n.mu.Lock()
		n.lastStruck = true
		n.mu.Unlock()
	}
	op := history.Op{Fault: s.Fault, Node: s.describe(i)}
	if len(key) > 0 {
		op.Key = key[0]
	}
	recordMissedOp(env, op, why)
}

// recordMissed records step i as missed (history.FaultMissed), naming the
// step and why: the run did not stage what it set out to.
func recordMissed(env Env, i int, s Step, why string) {
	recordMissedOp(env, history.Op{Fault: s.Fault, Node: s.describe(i)}, why)
}

// missedUnder records step i as missed under window w, which struck: the
// op carries w's fault id and the key whose grant it waited for.
func missedUnder(env Env, i int, s Step, w *window, why string) {
	recordMissedOp(env, history.Op{Fault: s.Fault, FaultID: w.id, Key: s.WaitKey, Node: s.describe(i)}, why)
}

func recordMissedOp(env Env, op history.Op, why string) {
	op.Type, op.Process, op.F = history.Invoke, history.NemesisProcess, history.FaultMissed
	op.FaultID = env.Rec.Record(op).FaultID
	op.Type, op.Error = history.Fail, why
	env.Rec.Record(op)
}

// step waits for step i's moment and strikes it, or records it missed.
// The error is a fault that could not be struck.
func (n *Plan) step(ctx context.Context, env Env, i int, s Step, last bool, wg *sync.WaitGroup, errs chan<- error) error {
	var aim *moment.Caught
	if s.WaitKey != "" && env.Clients == nil {
		return fmt.Errorf("%s waits for a grant, and the run has no clients", s.describe(i))
	}
	if s.WaitKey != "" && s.Aim == AimNone {
		if s.reserves() {
			env.Clients.Admit(s.WaitKey, s.WaitSlot)
			defer env.Clients.Open(s.WaitKey)
		}
		c, err := env.Clients.Catch(ctx, moment.Moment{Key: s.WaitKey, Slot: s.WaitSlot})
		if err != nil {
			// The op names the key whose grant never came, for the checkers
			// to tell what the faults in effect made of it.
			n.missed(env, i, s, last, s.moment()+" never came before the fault phase ended", s.WaitKey)
			return nil
		}
		defer c.Let()
		aim = c
	}
	sleep(ctx, s.After)
	if ctx.Err() != nil {
		n.missed(env, i, s, last, fmt.Sprintf("the fault phase ended during its wait of %s", s.After))
		return nil
	}
	if f, ok := faults[s.Fault].fault.(inOp); ok {
		return n.series(ctx, env, i, s, last, f, wg, errs)
	}
	return n.strike(ctx, env, i, s, last, aim, wg, errs)
}

// strike finds step i's target, injects its fault and leaves its heal to a
// goroutine. aim is the client held at the grant the step waited for.
func (n *Plan) strike(ctx context.Context, env Env, i int, s Step, last bool, aim *moment.Caught, wg *sync.WaitGroup, errs chan<- error) error {
	e, err := lookupFault(s.Fault)
	if err != nil {
		return err
	}
	sel := s.Target
	if sel == "" {
		sel = e.target
	}
	var stops <-chan moment.Stop
	if s.Point != "" && env.Clients != nil {
		// Watch before arming: the client can stop at once.
		ch, cancel := env.Clients.WatchStops()
		defer cancel()
		stops = ch
	}
	t, err := resolve(ctx, env, sel, s.Key, s.On)
	defer t.let()
	if err == nil && s.Point != "" {
		if kind, _, _ := strings.Cut(sel, ":"); kind == "client" && s.Key != "" && env.Clients != nil {
			// Only the target may take the key while it makes its way to
			// the point, so that nobody else's grant can keep it out.
			env.Clients.Admit(s.Key, t.Slot)
			defer env.Clients.Open(s.Key)
		}
		t, err = stoppedAt(ctx, t, s.Point, stops)
	}
	if err != nil {
		if ctx.Err() != nil {
			n.missed(env, i, s, last, fmt.Sprintf("its target %s was not found before the fault phase ended: %v", sel, err))
			return nil
		}
		return fmt.Errorf("fault %s: %w", s.Fault, err)
	}
	w := &window{rec: env.Rec, fault: s.Fault, node: t.Name, target: t.Selector(), by: s.By}
	under := ctx // ends when the fault heals, for a grant under it
	if s.Aim != AimNone {
		var cancel context.CancelFunc
		under, cancel = context.WithCancel(ctx)
		defer cancel()
		w.beforeHeal = cancel
	}
	if s.By != 0 {
		w.node = fmt.Sprintf("%s by %s", t.Name, s.By) // the size is part of what was done
	}
	switch {
	case s.Point != "":
		// The client stopped itself inside the lock, perhaps in its
		// release: what it holds there is the point's business.
	case aim != nil:
		w.key, w.lease = s.WaitKey, aim.Lease
	case t.held != nil:
		w.key, w.lease = s.Key, t.held.Lease
	}
	if _, err = n.inflict(ctx, env, i, s, last, e, t, w, wg, errs); err != nil || s.Aim == AimNone {
		return err
	}
	n.grantUnder(under, env, i, s, w)
	return nil
}

// grantUnder lets the workload begin (step i may end the opening), admits
// only step i's client to its key, and waits for that grant (any outcome
// of its acquire, with Asked) while the fault is in effect (under ends
// when it heals); the key then opens to everyone. A grant that never came
// is a missed moment. With Failover, the grant must be the old master's
// (the one the failover replaces), checked while the client is held at it:
// a grant the promoted replica made stages nothing. A grant that never
// came is recorded with the key and the fault id of w, the window it was
// aimed under, so that the checkers can tell what the fault made of it.
func (n *Plan) grantUnder(under context.Context, env Env, i int, s Step, w *window) {
	env.begin()
	env.Clients.Admit(s.WaitKey, s.WaitSlot)
	defer env.Clients.Open(s.WaitKey)
	c, err := env.Clients.Catch(under, moment.Moment{Key: s.WaitKey, Slot: s.WaitSlot, Asked: s.Aim == AimAsked})
	if err != nil {
		what := s.moment()
		if s.Aim == AimAsked {
			what = fmt.Sprintf("client %d's acquire of %s", s.WaitSlot, s.WaitKey)
		}
		missedUnder(env, i, s, w, what+" never came while the fault was in effect")
		return
	}
	defer c.Let()
	if s.Until == UntilFailover && s.Aim != AimAsked {
		if err := holdsKey(halt(env), w.master, s.WaitKey); err != nil {
			recordMissed(env, i, s, fmt.Sprintf("%s was not made by the master the failover replaces: %v", s.moment(), err))
		}
	}
}

// inflict injects step i's fault e on t as window w and leaves its heal, after
// the fault's time, to a goroutine that closes healed once the heal is
// recorded (and the cluster's health checked, when no fault is left in
// effect). The error is a fault that could not be struck.
func (n *Plan) inflict(ctx context.Context, env Env, i int, s Step, last bool, e faultEntry, t Target, w *window, wg *sync.WaitGroup, errs chan<- error) (<-chan struct{}, error) {
	var heal Heal
	n.mu.Lock()
	n.active++
	n.lastStruck = n.lastStruck || last
	n.mu.Unlock()
	var master Node // before the strike, for a step that waits for its failover
	if s.Until == UntilFailover {
		master, _ = lookup(ctx, env.Cluster.Master)
		w.master = master
	}
	ierr := w.step(history.FaultStart, func(ctx context.Context) error {
		var err error
		heal, err = e.fault.Inject(ctx, env, t, s.By)
		return err
	})
	struck := time.Now()
	// No heal: nothing was done, or nothing can be undone (a crash); the
	// window closes at once.
	instant := heal == nil
	if instant {
		heal = func(context.Context) error { return nil }
	}
	healed := make(chan struct{})
	wg.Add(1)
	// A Sentinel's +switch-master away from the struck master, recorded
	// from the strike on, is the failover the step waits for, however
	// slowly the Sentinels answer a question about it afterwards.
	var switched <-chan history.Op
	unwatch := func() {}
	if s.Until == UntilFailover && ierr == nil && !instant && master != nil && env.Rec != nil {
		switched, unwatch = env.Rec.Watch(func(op history.Op) bool {
			return op.F == history.Failover && strings.HasPrefix(op.Node, master.Name()+" -> ")
		})
	}
	go func() {
		defer wg.Done()
		defer close(healed)
		defer unwatch()
		if ierr == nil && !instant {
			if hold := s.hold(env.TTL); hold > 0 {
				// A fault that struck lasts its planned time even past the
				// fault phase's end: the phase bounds when steps may strike,
				// not what a struck one does (a pause cut short by a late
				// moment would stage nothing). The workload runs on until
				// the nemesis returns.
				sleep(halt(env), hold)
			} else {
				<-ctx.Done() // held until the fault phase ends
			}
		}
		if s.Until == UntilFailover && ierr == nil && !instant {
			n.awaitFailover(ctx, env, i, s, master, struck, switched)
		}
		var next *moment.Caught
		if s.Until == UntilHandoff && ierr == nil && !instant {
			next = n.handoff(ctx, env, i, s, w)
		}
		if n.healBegins(ctx) {
			env.Rec.Mark(history.PhaseHeal)
		}
		if w.beforeHeal != nil {
			w.beforeHeal()
		}
		if err := w.step(history.FaultEnd, heal); err != nil {
			errs <- err
		}
		if next != nil {
			// The woken client's late request lands under the next
			// holder's grant; a bound comes from the request's own timeout.
			_ = env.Clients.Quiet(halt(env), t.Process)
			next.Let()
		}
		n.mu.Lock()
		n.active--
		idle, converging := n.active == 0, n.active == 0 && n.done(ctx)
		n.mu.Unlock()
		if converging {
			env.Rec.Mark(history.PhaseConvergence)
		}
		if idle {
			checkHealth(env, history.HealthAfter, s.Fault, w.node, w.id)
		}
	}()
	return healed, ierr
}

// handoff waits for the next grant of step i's key after its pause, and
// holds that client there: the pause ends under its grant, which the
// fault-end names. A grant that never came before the fault phase ended
// is recorded as a missed moment: the run did not stage what it set out to.
func (n *Plan) handoff(ctx context.Context, env Env, i int, s Step, w *window) *moment.Caught {
	c, err := env.Clients.Catch(ctx, moment.Moment{Key: s.Key, Slot: AnySlot})
	if err != nil {
		recordMissed(env, i, s, "no other client was granted "+s.Key+" before the fault phase ended, so the pause ended without its handoff")
		return nil
	}
	w.healKey, w.healLease = s.Key, c.Lease
	return c
}

// awaitFailover waits until Sentinel names a master other than old (the
// master when the step struck): its +switch-master announcement
// (switched), or, polling, a majority of Sentinels naming another. It waits
// at least until the fault phase ends and at least until the topology's own
// failover has had two tries since the strike (a split vote is retried, and
// the run's clock must not cut that short); when neither brings the
// failover, the failover step i stages is recorded as missed: the run did
// not stage it. With no master known at the strike, none can be told to
// have moved.
func (n *Plan) awaitFailover(ctx context.Context, env Env, i int, s Step, old Node, struck time.Time, switched <-chan history.Op) {
	announced := false
	moved := func(ctx context.Context) bool {
		select {
		case <-switched:
			announced = true
		default:
		}
		if announced {
			return true
		}
		m, err := env.Cluster.Master(ctx)
		return err == nil && old != nil && m.Name() != old.Name()
	}
	tries := env.Cluster.FailoverWithin()
	for ctx.Err() == nil || time.Since(struck) < tries {
		look, cancel := ctx, context.CancelFunc(func() {})
		if ctx.Err() != nil { // past the phase: each look gets its own bound
			look, cancel = context.WithTimeout(halt(env), 3*time.Second)
		}
		ok := moved(look)
		cancel()
		if ok {
			return
		}
		if sleep(halt(env), 100*time.Millisecond); halt(env).Err() != nil {
			break
		}
	}
	last, cancel := context.WithTimeout(halt(env), 3*time.Second) // one look once the wait is over
	defer cancel()
	if moved(last) {
		return
	}
	who := "Sentinel"
	if env.Cluster.Topology() == topology.Cluster {
		who = "the cluster"
	}
	recordMissed(env, i, s, fmt.Sprintf("%s promoted no replica before the fault phase ended nor within %s of the strike (two of its failover tries), so the failover the step stages never came", who, tries.Round(time.Millisecond)))
}

// halt is a context that ends only when the run is interrupted.
func halt(env Env) context.Context {
	if env.Halt != nil {
		return env.Halt
	}
	return context.Background()
}

// done reports that no step is left to strike, or may strike: the fault
// phase is over. Call it under n.mu.
func (n *Plan) done(ctx context.Context) bool { return n.lastStruck || ctx.Err() != nil }

// healBegins reports the first heal once no step is left to strike: the
// heal phase of the run begins.
func (n *Plan) healBegins(ctx context.Context) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	first := n.done(ctx) && !n.healing
	n.healing = n.healing || first
	return first
}

// stoppedAt arms point on the target client, lets it go on if it is held
// at a moment, and waits until it has stopped itself there; t then names
// the point too.
func stoppedAt(ctx context.Context, t Target, point string, stops <-chan moment.Stop) (Target, error) {
	if t.Process == nil || stops == nil {
		return t, fmt.Errorf("a point inside the lock needs a client process, not %q", t.Name)
	}
	t.Process.Arm(point)
	t.let()
	for {
		select {
		case <-ctx.Done():
			return t, ctx.Err()
		case st := <-stops:
			if st.Proc == t.Process && st.Point == point {
				t.Name = fmt.Sprintf("%s at %s", t.Name, point)
				return t, t.Process.WaitState(ctx, "T")
			}
		}
	}
}
