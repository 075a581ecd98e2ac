package checker

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/deadbolt-lab/deadbolt/history"
)

func init() {
	Register("lost-updates", "acknowledged increments of a register that its final value lacks, each traced to the write that destroyed it",
		func(Options) Checker { return lostUpdates{} })
}

// lostUpdates judges the counter workloads: under the lock a client reads
// a register, then writes the value + 1, and each write reports the value
// it replaced. Lost updates are acknowledged increments minus the final
// value; every write that replaced more than the value it read destroyed
// the increments in between, and is named with the writers it erased.
type lostUpdates struct{}

// LostUpdate is one write that destroyed increments.
type LostUpdate struct {
	Key     string `json:"key"`
	Lease   string `json:"lease"`
	Process int    `json:"process"`
	Read    int64  `json:"read"`
	Wrote   int64  `json:"wrote"`
	Over    int64  `json:"over"`
	// Erased is how many increments the write destroyed; Erasers the
	// leases that wrote them.
	Erased  int64    `json:"erased"`
	Erasers []string `json:"erased_leases"`
	// ReadAt and WroteAt are the read's ok and the write's invocation;
	// EffectFrom is the earliest the write can have landed.
	ReadAt     int64 `json:"read_at"`
	WroteAt    int64 `json:"wrote_at"`
	EffectFrom int64 `json:"effect_from"`
	// Late: the write landed outside its lease's holding windows (the
	// holder kept working after its lease ran out). DoubleHold: its lease's
	// windows overlapped an erased writer's.
	Late       bool  `json:"late"`
	LateBy     int64 `json:"late_by,omitempty"`
	DoubleHold bool  `json:"double_hold"`
	// ExpiredOnArrival: the lease was granted after its TTL had passed.
	ExpiredOnArrival bool `json:"expired_on_arrival,omitempty"`
}

type registerKey struct {
	initial, final *int64
	writes         []history.Operation // client writes, in invocation order
	byValue        map[int64][]int     // value written -> indexes into writes
	reads          map[string][]int64  // lease -> completions of its ok reads
	infos          int
}

func (lostUpdates) Check(in *Input) Result {
	r := newResult("lost-updates")
	regs := registersOf(in)
	if !anyRegister(regs) {
		r.Applicable = false
		r.Reason = "no counter: nothing set up or wrote a register, so no update could be lost."
		return r
	}
	var found []LostUpdate
	var acked, lost int64
	var unknown, lower []string
	for _, k := range slices.Sorted(maps.Keys(regs)) {
		g := regs[k]
		var a int64
		for _, w := range g.writes {
			if w.Outcome() == history.OK {
				a++
			}
		}
		acked += a
		attributed := int64(0)
		for _, lu := range erasures(in, k, g) {
			attributed += lu.Erased
			found = append(found, lu)
		}
		switch {
		case g.final == nil && len(g.writes) > 0:
			unknown = append(unknown, k)
			lost += attributed
		case g.final == nil:
		default:
			initial := int64(0)
			if g.initial != nil {
				initial = *g.initial
			}
			n := a - (*g.final - initial)
			if n < 0 && g.infos == 0 {
				lower = append(lower, k)
			}
			lost += max(n, attributed, 0)
		}
	}
	if found == nil {
		found = []LostUpdate{}
	}
	r.Details = found
	r.Metrics["lost_updates"] = lost
	r.Metrics["increments_acknowledged"] = acked
	for _, lu := range found {
		r.Anomalies = append(r.Anomalies, Anomaly{Kind: KindLostUpdate, At: lu.EffectFrom, Key: lu.Key,
			Leases: append([]string{lu.Lease}, lu.Erasers...), Text: lu.String()})
	}
	infos := 0
	for _, g := range regs {
		infos += g.infos
	}
	lostVerdict(&r, found, lost, acked, infos, unknown, lower)
	return r
}

// registersOf is each register key's setup, final read, reads by lease
// and writes, from the history's pairs.
func registersOf(in *Input) map[string]*registerKey {
	regs := map[string]*registerKey{}
	reg := func(k string) *registerKey {
		if regs[k] == nil {
			regs[k] = &registerKey{reads: map[string][]int64{}, byValue: map[int64][]int{}}
		}
		return regs[k]
	}
	for _, p := range in.Pairs {
		inv, c := p.Invoke, p.Complete
		switch {
		case inv.Process == history.HarnessProcess && p.Outcome() == history.OK && inv.F == history.Write:
			reg(inv.Key).initial = inv.Value
		case inv.Process == history.HarnessProcess && p.Outcome() == history.OK && inv.F == history.Read:
			reg(inv.Key).final = c.Value
		case inv.Process < 0:
		case inv.F == history.Read && p.Outcome() == history.OK:
			g := reg(inv.Key)
			g.reads[inv.Lease] = append(g.reads[inv.Lease], c.Time)
		case inv.F == history.Write && inv.Value != nil:
			g := reg(inv.Key)
			g.byValue[*inv.Value] = append(g.byValue[*inv.Value], len(g.writes))
			g.writes = append(g.writes, p)
			if p.Outcome() == history.Info {
				g.infos++
			}
		}
	}
	return regs
}

// lostVerdict sets r's verdict and reason from what the registers showed.
func lostVerdict(r *Result, found []LostUpdate, lost, acked int64, infos int, unknown, lower []string) {
	bound := ""
	if infos > 0 {
		bound = fmt.Sprintf(" (%s ended unknown, so the count is a lower bound)", Plural(infos, "write"))
	}
	switch {
	case lost > 0:
		r.Verdict = Invalid
		r.Reason = fmt.Sprintf("the resource lost %s of %s%s", Plural(int(lost), "update"), Plural(int(acked), "acknowledged increment"), bound)
		if len(found) > 0 {
			r.Reason += fmt.Sprintf(": the first destroyed by %s", found[0].Lease)
			if found[0].Late {
				r.Reason += ", a holder that wrote after its lease ran out"
			} else if found[0].DoubleHold {
				r.Reason += ", a holder that shared the lock with the writers it erased"
			}
		}
		r.Reason += "."
	case len(unknown) > 0:
		r.Verdict = Unknown
		r.Reason = fmt.Sprintf("no final read of %s, so lost updates cannot be counted.", quoteAll(unknown))
	case len(lower) > 0:
		r.Verdict = Unknown
		r.Reason = fmt.Sprintf("the register of %s ends higher than every acknowledged increment explains: the resource is not what the workload thinks it is.", quoteAll(lower))
	default:
		r.Reason = fmt.Sprintf("every one of %s landed%s.", Plural(int(acked), "acknowledged increment"), bound)
	}
}

// erasures lists the ok writes on one register that replaced more than the
// value they had read.
func erasures(in *Input, key string, g *registerKey) []LostUpdate {
	var out []LostUpdate
	for _, w := range g.writes {
		inv, c := w.Invoke, w.Complete
		if w.Outcome() != history.OK || c.Prev == nil {
			continue
		}
		read := *inv.Value - 1
		erased := *c.Prev - read
		if erased <= 0 {
			continue
		}
		lu := LostUpdate{Key: key, Lease: inv.Lease, Process: inv.Process, Read: read, Wrote: *inv.Value, Over: *c.Prev,
			Erased: erased, ReadAt: lastBefore(g.reads[inv.Lease], inv.Time), WroteAt: inv.Time}
		// The erased values are read+1 .. prev: the last writer of each
		// before w completed. w took effect after theirs did, so no earlier
		// than the latest of their invocations: that, not its own
		// invocation (a paused client's request waits in its pipe), is
		// when it may first have landed.
		lu.EffectFrom = inv.Time
		for v := read + 1; v <= *c.Prev; v++ {
			var by *history.Operation
			for _, i := range g.byValue[v] {
				x := &g.writes[i]
				if x.Invoke.Lease != inv.Lease && x.Outcome() != history.Fail && x.Invoke.Time < c.Time {
					by = x
				}
			}
			if by == nil {
				continue
			}
			lu.EffectFrom = max(lu.EffectFrom, by.Invoke.Time)
			if !slices.Contains(lu.Erasers, by.Invoke.Lease) {
				lu.Erasers = append(lu.Erasers, by.Invoke.Lease)
			}
		}
		if !in.Holding(inv.Lease, lu.EffectFrom) {
			lu.Late = true
			_, lu.ExpiredOnArrival = slices.BinarySearch(in.ExpiredOnArrival, inv.Lease)
			for _, h := range in.LeaseHolds(inv.Lease) {
				if h.Until <= lu.EffectFrom {
					lu.LateBy = lu.EffectFrom - h.Until
				}
			}
		}
		for _, e := range lu.Erasers {
			if overlap(in.LeaseHolds(inv.Lease), in.LeaseHolds(e)) {
				lu.DoubleHold = true
			}
		}
		out = append(out, lu)
	}
	return out
}

func (lu LostUpdate) String() string {
	s := fmt.Sprintf("key %q: process %d (lease %s) read %d", lu.Key, lu.Process, lu.Lease, lu.Read)
	if lu.ReadAt != 0 {
		s += " at " + at(lu.ReadAt)
	}
	s += fmt.Sprintf(" and wrote %d (sent at %s", lu.Wrote, at(lu.WroteAt))
	if lu.EffectFrom > lu.WroteAt {
		s += fmt.Sprintf(", landed after %s", at(lu.EffectFrom))
	}
	s += fmt.Sprintf(") over %d, erasing %s", lu.Over, Plural(int(lu.Erased), "increment"))
	if len(lu.Erasers) > 0 {
		s += " by " + strings.Join(lu.Erasers, ", ")
	}
	var why []string
	if lu.Late {
		w := "a late write"
		switch {
		case lu.LateBy > 0:
			w += fmt.Sprintf(", %s after its lease ran out", at(lu.LateBy))
		case lu.ExpiredOnArrival:
			w += " under a lease granted after its TTL had passed"
		default:
			w += ", outside its lease"
		}
		why = append(why, w)
	}
	if lu.DoubleHold {
		why = append(why, "its lease overlapped theirs (a double hold)")
	}
	if len(why) > 0 {
		s += ": " + strings.Join(why, "; ")
	}
	return s
}

// anyRegister reports whether the history has a counter at all.
func anyRegister(regs map[string]*registerKey) bool {
	for _, g := range regs {
		if g.initial != nil || len(g.writes) > 0 {
			return true
		}
	}
	return false
}

// lastBefore is the latest of times at or before t, 0 if none.
func lastBefore(times []int64, t int64) int64 {
	var out int64
	for _, x := range times {
		if x <= t {
			out = max(out, x)
		}
	}
	return out
}

func overlap(a, b []Hold) bool {
	for _, x := range a {
		for _, y := range b {
			if x.AcquiredAt < y.Until && y.AcquiredAt < x.Until {
				return true
			}
		}
	}
	return false
}
