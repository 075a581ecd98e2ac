package checker

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/deadbolt-lab/deadbolt/history"
)

// DefaultLinearizabilityTimeout bounds the lease-lock model check when
// Options leaves it zero: linearizability checking is NP-hard, and a run
// must end with a verdict, if only Unknown.
const DefaultLinearizabilityTimeout = time.Minute

// Options tune Check.
type Options struct {
	// LinearizabilityTimeout limits the lease-lock model check; 0 means
	// DefaultLinearizabilityTimeout, a negative value means no limit.
	LinearizabilityTimeout time.Duration
	// MinAcquires is how many acquires must succeed for the run to count as
	// a pass; it is at least 1, since an idle run proves nothing.
	MinAcquires int
}

func (o Options) timeout() time.Duration {
	switch {
	case o.LinearizabilityTimeout == 0:
		return DefaultLinearizabilityTimeout
	case o.LinearizabilityTimeout < 0:
		return 0 // porcupine's "no limit"
	}
	return o.LinearizabilityTimeout
}

// Stats counts what happened, so a reader can tell a busy run from an idle
// one. An operation the history never completed counts as info.
type Stats struct {
	AcquiresOK   int `json:"acquires_ok"`
	AcquiresFail int `json:"acquires_fail"`
	AcquiresInfo int `json:"acquires_info"`
	ReleasesOK   int `json:"releases_ok"`
	ReleasesFail int `json:"releases_fail"`
	ReleasesInfo int `json:"releases_info"`
	Renewals     int `json:"renewals"`
	RenewalsOK   int `json:"renewals_ok"`
	Processes    int `json:"processes"`
	Keys         int `json:"keys"`
	Faults       int `json:"faults"`
}

// Result is the verdict on one history with the evidence for it.
type Result struct {
	Verdict Verdict `json:"verdict"`
	// Reason says why, in one sentence.
	Reason      string       `json:"reason"`
	DoubleHolds []DoubleHold `json:"double_holds"`
	// Anomalies has one line per double hold and per key the lease-lock
	// model could not explain.
	Anomalies []string `json:"anomalies"`
	// Linearizable is the lease-lock model's verdict alone.
	Linearizable Verdict       `json:"linearizable"`
	Stats        Stats         `json:"stats"`
	FaultWindows []FaultWindow `json:"fault_windows"`

	leaseLock *LeaseLockResult
}

// Check runs the double-hold sweep and the lease-lock model over a history
// and composes their verdicts. It is Invalid when either finds a violation;
// Unknown when the model timed out, too few acquires succeeded, or the
// history is malformed; Valid otherwise.
func Check(ops []history.Op, opts Options) Result {
	r := Result{
		Verdict: Unknown, Linearizable: Unknown,
		DoubleHolds: []DoubleHold{}, Anomalies: []string{},
		FaultWindows: FaultWindows(ops),
	}
	if r.FaultWindows == nil {
		r.FaultWindows = []FaultWindow{}
	}
	pairs, err := history.Pair(ops)
	if err != nil {
		r.Reason = fmt.Sprintf("the history is malformed, so nothing can be concluded: %v", err)
		return r
	}
	r.Stats = countStats(pairs, len(r.FaultWindows))

	if dh := findDoubleHolds(holdsByKey(pairs, historyEnd(ops)), r.FaultWindows); dh != nil {
		r.DoubleHolds = dh
	}
	for _, d := range r.DoubleHolds {
		r.Anomalies = append(r.Anomalies, d.String())
	}
	ll := checkLeaseLock(pairs, r.FaultWindows, opts.timeout())
	r.leaseLock = &ll
	r.Linearizable = ll.Verdict
	r.Anomalies = append(r.Anomalies, ll.Anomalies...)

	minAcquires := max(opts.MinAcquires, 1)
	var idle Verdict = Valid
	if r.Stats.AcquiresOK < minAcquires {
		idle = Unknown
	}
	var holds Verdict = Valid
	if len(r.DoubleHolds) > 0 {
		holds = Invalid
	}
	r.Verdict = Merge(holds, ll.Verdict, idle)

	switch {
	case r.Verdict == Invalid:
		var why []string
		if n := len(r.DoubleHolds); n > 0 {
			d := r.DoubleHolds[0]
			why = append(why, fmt.Sprintf("%s (the first on key %q at %s)", plural(n, "double hold"), d.Key, at(d.OverlapStart)))
		}
		if len(ll.FailedKeys) > 0 {
			noun := "key"
			if len(ll.FailedKeys) > 1 {
				noun = "keys"
			}
			why = append(why, fmt.Sprintf("no legal lease-lock order for %s %s", noun, quoteAll(ll.FailedKeys)))
		}
		r.Reason = "the lock violated mutual exclusion: " + strings.Join(why, ", and ") + "."
	case ll.Verdict == Unknown:
		r.Reason = fmt.Sprintf("the lease-lock model check hit its %s time limit, so the history is neither proven valid nor invalid.", opts.timeout())
	case idle == Unknown:
		r.Reason = fmt.Sprintf("only %s succeeded where at least %d are required: an idle run proves nothing, so it never counts as a pass.",
			plural(r.Stats.AcquiresOK, "acquire"), minAcquires)
	default:
		r.Reason = fmt.Sprintf("no double holds, and a legal lease-lock order explains all %s on %s.",
			plural(ll.Operations, "lock operation"), plural(ll.Keys, "key"))
	}
	return r
}

// WriteVisualization writes porcupine's HTML view of the lease-lock check.
func (r Result) WriteVisualization(w io.Writer) error {
	if r.leaseLock == nil {
		return errors.New("the lease-lock model did not run: " + r.Reason)
	}
	return r.leaseLock.WriteVisualization(w)
}

func countStats(pairs []history.Operation, faults int) Stats {
	s := Stats{Faults: faults}
	procs, keys := map[int]bool{}, map[string]bool{}
	for _, p := range pairs {
		inv := p.Invoke
		if inv.Process == history.NemesisProcess {
			continue
		}
		procs[inv.Process], keys[inv.Key] = true, true
		out := p.Outcome()
		switch inv.F {
		case history.Acquire:
			count(out, &s.AcquiresOK, &s.AcquiresFail, &s.AcquiresInfo)
		case history.Release:
			count(out, &s.ReleasesOK, &s.ReleasesFail, &s.ReleasesInfo)
		case history.Renew:
			s.Renewals++
			if out == history.OK {
				s.RenewalsOK++
			}
		}
	}
	s.Processes, s.Keys = len(procs), len(keys)
	return s
}

func count(t history.Type, ok, fail, info *int) {
	switch t {
	case history.OK:
		*ok++
	case history.Fail:
		*fail++
	default:
		*info++
	}
}

func plural(n int, noun string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, noun)
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

func quoteAll(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = fmt.Sprintf("%q", s)
	}
	return strings.Join(q, ", ")
}
