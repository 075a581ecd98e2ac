package checker

import (
	"fmt"
	"sort"
	"strings"

	"github.com/deadbolt-lab/deadbolt/history"
)

func init() {
	RegisterScoped("double-holds", "two leases whose harness-computed holding windows overlap on one key", LockService,
		func(Options) Checker { return doubleHoldChecker{} })
}

// DoubleHold is two leases holding one key at once: a mutual-exclusion
// violation by the lock service. First is the hold that began earlier.
type DoubleHold struct {
	Key          string `json:"key"`
	First        Hold   `json:"first"`
	Second       Hold   `json:"second"`
	OverlapStart int64  `json:"overlap_start"`
	OverlapEnd   int64  `json:"overlap_end"`
	// Faults names the fault windows that overlap the double hold.
	Faults []string `json:"faults,omitempty"`
}

// String is the anomaly line for reports.
func (d DoubleHold) String() string {
	s := fmt.Sprintf("double hold on key %q: %s and %s both held it from %s to %s (%s)",
		d.Key, holder(d.First), holder(d.Second), at(d.OverlapStart), at(d.OverlapEnd),
		at(d.OverlapEnd-d.OverlapStart))
	if len(d.Faults) > 0 {
		s += " during " + strings.Join(d.Faults, ", ")
	}
	return s
}

func holder(h Hold) string {
	s := fmt.Sprintf("process %d (lease %s", h.Process, h.Lease)
	if h.Owner != "" {
		s += ", token " + h.Owner
	}
	if h.Fence != 0 {
		s += fmt.Sprintf(", fence %d", h.Fence)
	}
	return s + fmt.Sprintf(", acquired at %s by op %d)", at(h.AcquiredAt), h.AcquireIndex)
}

// DoubleHolds finds every pair of leases whose windows overlap on one key.
func DoubleHolds(ops []history.Op) ([]DoubleHold, error) {
	in, err := NewInput(ops)
	if err != nil {
		return nil, err
	}
	return findDoubleHolds(in.Holds, in.Faults, false), nil
}

type doubleHoldChecker struct{}

func (c doubleHoldChecker) Check(in *Input) Result { return checkWhole(c, in) }

// doubleHoldPart is what a key or window holds: its double holds and
// how many holding windows it had. No hold of a window overlaps a later
// window's (window.go), so the parts need no carry.
type doubleHoldPart struct {
	found []DoubleHold
	holds int
}

func (doubleHoldChecker) Part(in *Input, _ PartAt) (any, any) {
	p := doubleHoldPart{found: findDoubleHolds(in.Holds, in.Faults, in.Reentrant)}
	for _, hs := range in.Holds {
		p.holds += len(hs)
	}
	return p, nil
}

func (doubleHoldChecker) Merge(whole *Input, parts []any) Result {
	var all doubleHoldPart
	for _, p := range parts {
		p := p.(doubleHoldPart)
		all.found, all.holds = append(all.found, p.found...), all.holds+p.holds
	}
	sortDoubleHolds(all.found)
	return doubleHoldResult(all.found, all.holds, len(whole.ExpiredOnArrival))
}

// doubleHoldResult is the verdict on dh, the double holds found among
// holds holding windows; expired leases arrived with none.
func doubleHoldResult(dh []DoubleHold, holds, expired int) Result {
	r := newResult("double-holds")
	if dh == nil {
		dh = []DoubleHold{}
	}
	r.Details = dh
	r.Metrics["double_holds"] = int64(len(dh))
	for _, d := range dh {
		r.Anomalies = append(r.Anomalies, Anomaly{Kind: KindDoubleHold, At: d.OverlapStart, Key: d.Key,
			Leases: []string{d.First.Lease, d.Second.Lease}, Text: d.String()})
	}
	note := ""
	if expired > 0 {
		note = fmt.Sprintf(" %s arrived after the TTL had passed (no holding window); a client that used one anyway is for the resource checkers to judge.",
			Plural(expired, "lease"))
	}
	if len(dh) > 0 {
		r.Verdict = Invalid
		r.Reason = fmt.Sprintf("the lock violated mutual exclusion: %s (the first on key %q at %s).%s",
			Plural(len(dh), "double hold"), dh[0].Key, at(dh[0].OverlapStart), note)
		return r
	}
	r.Reason = fmt.Sprintf("no two of %s overlapped on a key.%s", Plural(holds, "holding window"), note)
	return r
}

// findDoubleHolds sweeps each key's holds in order of acquisition, keeping
// the holds still active at each new start, so the cost is the sort plus the
// overlaps found rather than every pair of holds.
//
// For a reentrant lock, two holds of one client are one hold re-entered,
// never a double hold.
func findDoubleHolds(byKey map[string][]Hold, faults []FaultWindow, reentrant bool) []DoubleHold {
	var out []DoubleHold
	for key, hs := range byKey {
		var active []Hold
		for _, h := range hs {
			kept := active[:0]
			for _, a := range active {
				if a.Until > h.AcquiredAt {
					kept = append(kept, a)
				}
			}
			active = kept
			for _, a := range active {
				if a.Lease == h.Lease {
					continue // one lease's own windows never overlap; kept as the definition
				}
				if reentrant && a.Client == h.Client {
					continue // re-entry
				}
				d := DoubleHold{Key: key, First: a, Second: h, OverlapStart: h.AcquiredAt, OverlapEnd: min(a.Until, h.Until)}
				d.Faults = FaultsDuring(faults, d.OverlapStart, d.OverlapEnd)
				out = append(out, d)
			}
			active = append(active, h)
		}
	}
	sortDoubleHolds(out)
	return out
}

// sortDoubleHolds orders double holds by the start of their overlap, then
// key and the two acquires.
func sortDoubleHolds(out []DoubleHold) {
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.OverlapStart != b.OverlapStart {
			return a.OverlapStart < b.OverlapStart
		}
		if a.Key != b.Key {
			return a.Key < b.Key
		}
		if a.First.AcquireIndex != b.First.AcquireIndex {
			return a.First.AcquireIndex < b.First.AcquireIndex
		}
		return a.Second.AcquireIndex < b.Second.AcquireIndex
	})
}
