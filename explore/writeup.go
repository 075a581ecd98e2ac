package explore

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/deadbolt-lab/deadbolt/checker"
	"github.com/deadbolt-lab/deadbolt/scenarios"
)

// writeup is a finding's draft report for the library's tracker: what
// happened, which call returned what (the judge's own words, from the
// shrunk file's run), the anomaly, the versions tried and the command
// that replays it. A person reads it, checks it against the report.html
// of the runs it names, and files it.
func writeup(rep *Report, f *Finding, s scenarios.Scenario, runs []Run) string {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	broken := brokenRun(runs, f.Lock)
	p("# %s: %s when %s", f.Lock, anomalyWords(f.Anomaly), aimWords(f.Aim))
	p("")
	p("Draft written by `deadbolt explore` (seed %d, run %d); read it against the runs it names before filing it.", rep.Seed, f.Scenario)
	p("")
	p("## What happened")
	p("")
	if broken != nil && broken.results != nil {
		for _, a := range broken.results.Anomalies {
			if a.Kind == f.Anomaly {
				p("%s", a.Text)
				p("")
				break
			}
		}
		p("The judge's verdict: %s", broken.results.Reason)
		p("")
	}
	p("## The scenario")
	p("")
	p("- Lock: `%s`, over %s, lease TTL %s, %s on %s.", f.Lock, placeOf(s), s.TTL, checker.Plural(s.Clients, "client"), keysWords(s.Keys))
	p("- Workload: `%s`, holds of %s to %s.", s.WorkloadName(), s.HoldMin, s.HoldMax)
	if s.LockOptions.TimeoutMS > 0 {
		p("- The lock's call timeout: %dms.", s.LockOptions.TimeoutMS)
	}
	switch lib := s.LockOptions.Library; {
	case len(lib) > 0:
		p("- The library set up otherwise than its defaults: %s (everything else its own and its client's defaults).", knobWords(lib))
	case rep.Offer.TakesKnobs:
		p("- The library as its users run it: the client its README builds, every setting at its own and its client's default.")
	}
	for i, st := range s.Fault.Steps {
		p("- Fault %d: `%s` on `%s`%s.", i+1, st.Fault, stepTarget(st.Target, st.Key), stepWhen(st, s.TTL.D(), i == 0))
	}
	if s.Nemesis == "random" {
		p("- Faults: %s at random moments (`random` schedule).", strings.Join(s.Fault.Faults, ", "))
	}
	if f.Shrink != nil && f.Shrink.Amplified != "" {
		p("")
		p("As generated, the scenario broke the lock on some seeds only; it broke it on every seed with %s, and was shrunk from there.", f.Shrink.Amplified)
	}
	p("")
	p("## Versions tried")
	p("")
	if f.Shrink != nil {
		for _, lock := range []string{f.Lock, f.Against} {
			if r, ok := f.Shrink.Replays[lock]; ok {
				p("- `%s`: %s (seeds %v)", lock, r, f.Shrink.Seeds)
			}
		}
	}
	if f.Against != "" {
		p("")
		p("`%s` breaks under this scenario; `%s` does not.", f.Lock, f.Against)
	}
	p("")
	p("## Reproduce")
	p("")
	p("```sh")
	p("%s", f.Replay)
	p("```")
	p("")
	p("The scenario file is `%s`; every run's `report.html` (a timeline of the leases and the fault) is in its directory:", f.File)
	p("")
	for _, r := range runs {
		p("- %s seed %d: %s, `%s`", r.Lock, r.Seed, r.Verdict, r.Dir)
	}
	return b.String()
}

// brokenRun is the first run of runs that broke lock.
func brokenRun(runs []Run, lock string) *Run {
	for i := range runs {
		if runs[i].Lock == lock && runs[i].Verdict == "invalid" {
			return &runs[i]
		}
	}
	return nil
}

// anomalyWords says what an anomaly kind means to a library's user.
func anomalyWords(kind string) string {
	switch kind {
	case checker.KindDoubleHold:
		return "two clients hold the lock at once"
	case checker.KindLostUpdate:
		return "an update made under the lock is lost"
	case checker.KindReleaseNotHeld:
		return "a release says ok of a lock it no longer held"
	case checker.KindNoLegalOrder:
		return "its answers fit no order of lock operations"
	case checker.KindLiveness:
		return "a key stays locked with nobody holding it"
	}
	return strings.ReplaceAll(kind, "-", " ")
}

// aimWords says what the faults struck.
func aimWords(a Aim) string {
	switch a.Call {
	case "":
		return "faults strike at random moments (" + a.Fault + ")"
	case CallAcquire:
		return a.Fault + " strikes around a grant"
	case CallRenew:
		return a.Fault + " strikes its own renewals"
	}
	return fmt.Sprintf("%s strikes its %s", a.Fault, strings.TrimPrefix(a.Call, "call "))
}

func placeOf(s scenarios.Scenario) string {
	c := s.Cluster.Defaults()
	switch c.Topology {
	case "independent":
		return checker.Plural(c.Masters, "independent master")
	case "sentinel":
		return fmt.Sprintf("a Sentinel group (a master, %s)", checker.Plural(c.Replicas, "replica"))
	}
	return "a Redis Cluster"
}

func keysWords(keys []string) string {
	if len(keys) == 1 {
		return "one key"
	}
	return checker.Plural(len(keys), "key")
}

func stepTarget(target, key string) string {
	if strings.HasPrefix(target, "holder") {
		return target + " of " + key
	}
	return target
}

// knobWords lists knobs as `name=value`, in name order.
func knobWords(knobs map[string]string) string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(knobs)) {
		out = append(out, "`"+k+"="+knobs[k]+"`")
	}
	return strings.Join(out, ", ")
}
