package checker

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/deadbolt-lab/deadbolt/history"
)

// Options tune Check.
type Options struct {
	// Checkers names the checkers to run; nil runs DefaultCheckers.
	Checkers []string
	// ModelSteps limits each search of the lease-lock model to that many
	// steps (budget.go): linearizability checking is NP-hard, and a run
	// must end with a verdict, if only Unknown. 0 means DefaultModelSteps,
	// a negative value means no limit.
	ModelSteps int64
	// MinAcquires is how many acquires must succeed for the run to count as
	// a pass; it is at least 1, since an idle run proves nothing.
	MinAcquires int
	// LivenessThreshold is how long after every lease could have expired a
	// refused acquire shows the key stayed taken; 0 means the lease's TTL.
	LivenessThreshold time.Duration
	// Reentrant judges a lock that lets its holder acquire a key it holds
	// again (locks.Reentrant): the client's leases of one key are one hold,
	// counted, not a double hold (see reentry.go).
	Reentrant bool
	// Whole makes CheckFile and CheckReader keep the lock view of the
	// whole history in memory, as Check does, rather than spill it and
	// check it key by key: the way they checked before, kept to compare.
	Whole bool
}

// Report is the composed verdict on one history with every check's evidence.
type Report struct {
	Verdict Verdict `json:"verdict"`
	// Reason says why, in a sentence or a few.
	Reason       string        `json:"reason"`
	Checks       []Result      `json:"checks"`
	Anomalies    []Anomaly     `json:"anomalies"`
	Stats        Stats         `json:"stats"`
	FaultWindows []FaultWindow `json:"fault_windows"`
	// Phases are the run's phases (faults, heal, convergence, settle, end)
	// as its history marks them; none in a history without marks.
	Phases []PhaseSpan `json:"phases,omitempty"`
	// Observed is what the cluster was seen to do by itself: failovers
	// (the promotions the faults staged, and any they did not) and TILT.
	Observed []Observed `json:"observed,omitempty"`
	// Tail is set when the history's last line was cut short by a crash:
	// the operations before it were checked.
	Tail *history.Tail `json:"tail,omitempty"`
	// Staging is why the run did not stage what it set out to (a step
	// missed, a precondition that did not hold, a failover nobody
	// staged); "" when it did. A violation the checks proved stands
	// either way ("broken, though the planned strike did not land"):
	// Jepsen merges false over unknown over true. Anything else is
	// unknown.
	Staging string `json:"staging,omitempty"`
	// NotApplicable says, from the evidence, why the failure the run
	// stages cannot arise for this lock (a release that is one step cannot
	// be stopped between its check and its delete); the verdict is then
	// unknown, never valid, and a matrix or an audit shows the cell n/a.
	NotApplicable string `json:"not_applicable,omitempty"`
}

// Check runs the chosen checkers over a history and composes them as
// Jepsen does: invalid if any applicable check is invalid; otherwise unknown
// if one could not decide, too few acquires succeeded, or the history is
// malformed; otherwise valid.
func Check(ops []history.Op, opts Options) Report {
	r := Report{Verdict: Unknown, Checks: []Result{}, Anomalies: []Anomaly{}, FaultWindows: FaultWindows(ops)}
	if r.FaultWindows == nil {
		r.FaultWindows = []FaultWindow{}
	}
	names, err := opts.checkers()
	if err != nil {
		r.Reason = err.Error()
		return r
	}
	in, err := newInput(ops, needPairs(names), opts.Reentrant)
	if err != nil {
		r.Reason = fmt.Sprintf("the history is malformed, so nothing can be concluded: %v", err)
		return r
	}
	return runCheckers(in, names, opts)
}

// checkers are the names Options selects, each known.
func (o Options) checkers() ([]string, error) {
	names := o.Checkers
	if names == nil {
		names = DefaultCheckers()
	}
	for _, n := range names {
		if err := Lookup(n); err != nil {
			return nil, err
		}
	}
	return names, nil
}

// runCheckers runs the named checkers over in and composes their verdicts.
func runCheckers(in *Input, names []string, opts Options) Report {
	// The checkers only read in: two run at a time (the lease-lock search
	// beside the others, in turn), which saves time without holding every
	// checker's working memory at once.
	results := make([]Result, len(names))
	var wg sync.WaitGroup
	slots := make(chan struct{}, 2)
	for i, n := range names {
		wg.Add(1)
		slots <- struct{}{}
		go func() {
			defer func() { <-slots; wg.Done() }()
			results[i] = registry[n].build(opts).Check(in)
			results[i].Checker = n
		}()
	}
	wg.Wait()
	return compose(in, results, opts)
}

// compose makes the report of the checkers' results on in: in gives the
// stats, the nemesis's record and the lock operations its plans named.
func compose(in *Input, results []Result, opts Options) Report {
	r := Report{Checks: []Result{}, Anomalies: []Anomaly{}, FaultWindows: in.Faults, Phases: in.Phases, Stats: in.stats,
		Observed: observed(in.nemesis)}
	if r.FaultWindows == nil {
		r.FaultWindows = []FaultWindow{}
	}
	var verdicts []Verdict
	for _, res := range results {
		r.Checks = append(r.Checks, res)
		r.Anomalies = append(r.Anomalies, res.Anomalies...)
		if res.Applicable {
			verdicts = append(verdicts, res.Verdict)
		}
	}
	sortAnomalies(r.Anomalies)
	minAcquires := max(opts.MinAcquires, 1)
	idle := r.Stats.AcquiresOK < minAcquires
	if idle {
		verdicts = append(verdicts, Unknown)
	}
	r.Verdict = Merge(verdicts...)
	r.Reason = r.reason(idle, minAcquires)
	// A run that did not stage what it set out to is unknown whatever the
	// checks found: a violation seen there is shown, but it reproduces
	// nothing the scenario claims, and the rest proves nothing either.
	// A reason the failure cannot arise for the lock, from the evidence,
	// accounts for the missed step it names (explained, or -1); a run
	// that broke the lock was applicable whatever it missed.
	na, explained := notApplicable(in)
	if r.Verdict == Invalid {
		na, explained = "", -1
	}
	troubles := append(faultTroubles(in.nemesis, explained), preconditionTroubles(in)...)
	var why []string
	if len(troubles) > 0 {
		why = append(why, fmt.Sprintf("%s of the nemesis did not go as planned (the first: %s), so the run did not stage what it set out to",
			Plural(len(troubles), "step"), troubles[0].Text))
	}
	if unstaged := unstagedFailovers(in); len(unstaged) > 0 {
		why = append(why, fmt.Sprintf("%s no fault staged (the first: %s), so the cluster did more than the scenario set out to stage",
			Plural(len(unstaged), "failover"), unstaged[0].Text))
		troubles = append(troubles, unstaged...)
	}
	if na != "" {
		r.NotApplicable = na
		why = append(why, na)
	}
	if len(troubles) > 0 || r.NotApplicable != "" {
		r.Anomalies = append(r.Anomalies, troubles...)
		sortAnomalies(r.Anomalies)
		r.Void(strings.Join(why, "; and "))
	}
	// Events that cannot be placed leave the checks themselves in doubt:
	// unknown, whatever they found.
	if len(in.clocks) > 0 {
		r.Anomalies = append(r.Anomalies, in.clocks...)
		sortAnomalies(r.Anomalies)
		r.Unjudgeable(fmt.Sprintf("%s stamped by a client cannot be placed (the first: %s), so the lock's own work cannot be judged",
			Plural(len(in.clocks), "event"), in.clocks[0].Text))
	}
	return r
}

// reason joins what the checks that decided the verdict said.
func (r Report) reason(idle bool, minAcquires int) string {
	var parts []string
	for _, c := range r.Checks {
		if c.Applicable && c.Verdict == r.Verdict {
			parts = append(parts, c.Reason)
		}
	}
	if idle && r.Verdict != Invalid {
		s := r.Stats
		if refused := s.AcquiresFail + s.AcquiresInfo; refused > 0 {
			// Not an idle run: the clients asked and were not granted.
			parts = append(parts, fmt.Sprintf("only %s of %d asked succeeded where at least %d are required (%d failed, %d with no answer; by error: %s): too few grants prove nothing, so it never counts as a pass.",
				Plural(s.AcquiresOK, "acquire"), s.AcquiresOK+refused, minAcquires, s.AcquiresFail, s.AcquiresInfo, s.acquireErrorsText(4)))
		} else {
			parts = append(parts, fmt.Sprintf("only %s succeeded where at least %d are required: an idle run proves nothing, so it never counts as a pass.",
				Plural(s.AcquiresOK, "acquire"), minAcquires))
		}
	}
	for _, c := range r.Checks {
		if !c.Applicable && !c.Aside {
			parts = append(parts, c.Reason)
		}
	}
	return strings.Join(parts, " ")
}

// Void is for a run that did not stage what it set out to (why, a clause):
// a violation the checks proved stands, "broken, though the planned strike
// did not land", and is no reproduction of the scenario's failure (an
// unsafe scenario does not pass on it); anything else is unknown, never a
// pass. Staging says why.
func (r *Report) Void(why string) {
	why = strings.TrimSuffix(strings.TrimSpace(why), ".")
	if r.Staging == "" {
		r.Staging = why
	} else {
		r.Staging += "; and " + why
	}
	if r.Verdict == Invalid {
		r.Reason = fmt.Sprintf("%s; broken all the same, though the planned strike did not land: %s", why, r.Reason)
		return
	}
	r.Reason = fmt.Sprintf("%s: its verdict is unknown. The checks alone found it %s: %s", why, r.Verdict, r.Reason)
	r.Verdict = Unknown
}

// Unjudgeable makes the verdict unknown whatever the checks found, for a
// run whose checks themselves cannot be trusted (why, a clause): events
// that cannot be placed, the harness's own rules refusing the lock.
func (r *Report) Unjudgeable(why string) {
	why = strings.TrimSuffix(strings.TrimSpace(why), ".")
	r.Reason = fmt.Sprintf("%s: its verdict is unknown. The checks alone found it %s: %s", why, r.Verdict, r.Reason)
	r.Verdict = Unknown
}

// Check is the result of the named checker, if it ran.
func (r Report) Check(name string) (Result, bool) {
	for _, c := range r.Checks {
		if c.Checker == name {
			return c, true
		}
	}
	return Result{}, false
}

// Metric sums a metric over every check that reports it.
func (r Report) Metric(name string) int64 {
	var n int64
	for _, c := range r.Checks {
		n += c.Metrics[name]
	}
	return n
}

// WriteVisualization writes porcupine's HTML view of the lease-lock check.
func (r Report) WriteVisualization(w io.Writer) error {
	c, ok := r.Check("lease-lock")
	if !ok {
		return errors.New("the lease-lock model did not run: " + r.Reason)
	}
	ll, ok := c.Details.(*LeaseLockResult)
	if !ok {
		return errors.New("the lease-lock model left no visualization")
	}
	return ll.WriteVisualization(w)
}

func quoteAll(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = fmt.Sprintf("%q", s)
	}
	return strings.Join(q, ", ")
}
