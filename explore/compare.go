package explore

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Finding is a scenario that broke a lock: with a second lock, one that
// broke one of the two and not the other. Its file replays it with
// `deadbolt run --file FILE --lock LOCK`.
type Finding struct {
	// File is the scenario file that breaks Lock: the shrunk one when the
	// shrink confirmed it, else the generated one.
	File string `json:"file"`
	// Lock is the lock it breaks, Against the one it leaves unbroken ("":
	// the exploration had no second lock).
	Lock    string `json:"lock"`
	Against string `json:"against,omitempty"`
	// Anomaly is the kind of violation that tells it (one Against did not
	// show, where it ran), Anomalies every kind Lock's run showed.
	Anomaly   string         `json:"anomaly"`
	Anomalies map[string]int `json:"anomalies"`
	// Scenario is the generated scenario's index, Aim what it aimed at;
	// Like are the other scenarios that broke the lock the same way (the
	// same kinds, the same aim), not shrunk.
	Scenario int   `json:"scenario"`
	Aim      Aim   `json:"aim"`
	Like     []int `json:"like,omitempty"`
	// Shrink is what shrinking it found (nil when it was not shrunk).
	Shrink *Shrunk `json:"shrink,omitempty"`
	// Writeup is the draft report for the library's tracker, beside File.
	Writeup string `json:"writeup,omitempty"`
	// Replay is the command line that replays it.
	Replay string `json:"replay"`
}

// Difference is a scenario both locks ran whose runs differ: one broke
// and the other did not, or both broke and their violations differ in
// kind or in how often per strike.
type Difference struct {
	Scenario int `json:"scenario"`
	// Verdicts are the lock's and the second lock's.
	Verdicts [2]string `json:"verdicts"`
	// How says how they differ, in words.
	How string `json:"how"`
	// PerStrike are each lock's violations per fault struck, by kind.
	PerStrike [2]map[string]float64 `json:"per_strike,omitempty"`
}

// judge counts the verdicts, finds the findings and the differences, and
// says whether too many runs reached no verdict to say anything.
func judge(rep *Report) {
	rep.Verdicts = map[string]map[string]int{}
	total := 0
	for _, sc := range rep.Scenarios {
		for _, r := range sc.Runs {
			if rep.Verdicts[r.Lock] == nil {
				rep.Verdicts[r.Lock] = map[string]int{}
			}
			rep.Verdicts[r.Lock][r.Verdict]++
			switch {
			case r.NotApplicable != "":
				rep.NotApplicable++
				continue
			case r.Verdict != "valid" && r.Verdict != "invalid":
				rep.Unknown++
			}
			total++
		}
	}
	rep.Undecided = total == 0 || 2*rep.Unknown > total
	seen := map[string]int{} // a finding's signature -> its index
	for _, sc := range rep.Scenarios {
		f, ok := findingOf(rep, sc)
		if d, differs := differenceOf(rep, sc); differs {
			rep.Differences = append(rep.Differences, d)
		}
		if !ok {
			continue
		}
		sig := signature(f)
		if k, dup := seen[sig]; dup {
			rep.Findings[k].Like = append(rep.Findings[k].Like, sc.Index)
			continue
		}
		seen[sig] = len(rep.Findings)
		rep.Findings = append(rep.Findings, f)
	}
	// The lock explored first: what breaks it and not the second lock.
	slices.SortStableFunc(rep.Findings, func(a, b Finding) int {
		return cmp.Compare(boolInt(a.Lock != rep.Lock), boolInt(b.Lock != rep.Lock))
	})
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// runOf is sc's run with lock, if it has one.
func runOf(sc Scenario, lock string) (Run, bool) {
	i := slices.IndexFunc(sc.Runs, func(r Run) bool { return r.Lock == lock })
	if i < 0 {
		return Run{}, false
	}
	return sc.Runs[i], true
}

// findingOf is the finding sc makes, if it makes one: the lock broke (and
// the second lock, where it ran, did not), or the second lock broke and
// the lock did not.
func findingOf(rep *Report, sc Scenario) (Finding, bool) {
	mine, _ := runOf(sc, rep.Lock)
	f := Finding{Scenario: sc.Index, Aim: sc.Aim, File: sc.File}
	if rep.Against == "" {
		if mine.Verdict != "invalid" {
			return f, false
		}
		f.Lock, f.Anomalies = rep.Lock, mine.Anomalies
		f.Anomaly = telling(mine.Anomalies, nil)
		return f, true
	}
	theirs, ran := runOf(sc, rep.Against)
	if !ran {
		return f, false
	}
	switch {
	case mine.Verdict == "invalid" && theirs.Verdict == "valid":
		f.Lock, f.Against, f.Anomalies = rep.Lock, rep.Against, mine.Anomalies
		f.Anomaly = telling(mine.Anomalies, theirs.Anomalies)
	case theirs.Verdict == "invalid" && mine.Verdict == "valid":
		f.Lock, f.Against, f.Anomalies = rep.Against, rep.Lock, theirs.Anomalies
		f.Anomaly = telling(theirs.Anomalies, mine.Anomalies)
	default:
		return f, false
	}
	return f, true
}

// telling is the kind of violation that tells a broken run apart: one the
// other run did not show, the most frequent first, then by name.
func telling(broken, other map[string]int) string {
	kinds := slices.Collect(maps.Keys(broken))
	slices.SortFunc(kinds, func(a, b string) int {
		_, ao := other[a]
		_, bo := other[b]
		if ao != bo {
			if ao {
				return 1
			}
			return -1
		}
		if c := cmp.Compare(broken[b], broken[a]); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	if len(kinds) == 0 {
		return "invalid"
	}
	return kinds[0]
}

// signature groups findings that broke the same lock the same way: the
// anomaly that tells it, and the same aim.
func signature(f Finding) string {
	return fmt.Sprintf("%s|%s|%s|%s|%s", f.Lock, f.Against, f.Anomaly, f.Aim.Family, f.Aim.Call)
}

// differenceOf compares the two locks' runs of sc: a verdict that tells
// them apart, or, where both broke, violations of other kinds or at rates
// per strike at least twice apart.
func differenceOf(rep *Report, sc Scenario) (Difference, bool) {
	if rep.Against == "" {
		return Difference{}, false
	}
	mine, ok1 := runOf(sc, rep.Lock)
	theirs, ok2 := runOf(sc, rep.Against)
	if !ok1 || !ok2 {
		return Difference{}, false
	}
	d := Difference{Scenario: sc.Index, Verdicts: [2]string{mine.Verdict, theirs.Verdict},
		PerStrike: [2]map[string]float64{perStrike(mine), perStrike(theirs)}}
	switch {
	case mine.Verdict == "invalid" && theirs.Verdict == "valid":
		d.How = fmt.Sprintf("breaks %s (%s), not %s", rep.Lock, kindsOf(mine.Anomalies), rep.Against)
		return d, true
	case theirs.Verdict == "invalid" && mine.Verdict == "valid":
		d.How = fmt.Sprintf("breaks %s (%s), not %s", rep.Against, kindsOf(theirs.Anomalies), rep.Lock)
		return d, true
	case mine.Verdict != "invalid" || theirs.Verdict != "invalid":
		return d, false
	}
	var how []string
	for _, k := range slices.Sorted(maps.Keys(mergeKinds(mine.Anomalies, theirs.Anomalies))) {
		a, b := d.PerStrike[0][k], d.PerStrike[1][k]
		switch {
		case a > 0 && b == 0:
			how = append(how, fmt.Sprintf("%s only in %s (%d in %d strikes)", k, rep.Lock, mine.Anomalies[k], mine.Strikes))
		case b > 0 && a == 0:
			how = append(how, fmt.Sprintf("%s only in %s (%d in %d strikes)", k, rep.Against, theirs.Anomalies[k], theirs.Strikes))
		case a >= 2*b || b >= 2*a:
			how = append(how, fmt.Sprintf("%s %.2g per strike in %s (%d in %d), %.2g in %s (%d in %d)",
				k, a, rep.Lock, mine.Anomalies[k], mine.Strikes, b, rep.Against, theirs.Anomalies[k], theirs.Strikes))
		}
	}
	if len(how) == 0 {
		return d, false
	}
	d.How = "both break: " + strings.Join(how, "; ")
	return d, true
}

// perStrike is a run's violations per fault struck (per run when none
// struck), by kind.
func perStrike(r Run) map[string]float64 {
	out := map[string]float64{}
	n := float64(max(r.Strikes, 1))
	for k, c := range r.Anomalies {
		out[k] = float64(c) / n
	}
	return out
}

func mergeKinds(a, b map[string]int) map[string]int {
	out := maps.Clone(a)
	if out == nil {
		out = map[string]int{}
	}
	maps.Copy(out, b)
	return out
}

// kindsOf lists the kinds with their counts: "double-hold 2, lost-update 1".
func kindsOf(m map[string]int) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
	}
	if len(parts) == 0 {
		return "no anomaly named"
	}
	return strings.Join(parts, ", ")
}
