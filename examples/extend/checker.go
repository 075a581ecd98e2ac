package main

import (
	"fmt"
	"time"

	"github.com/deadbolt-lab/deadbolt/checker"
)

// The checker: a holding window longer than ten seconds, which a service
// whose work under the lock takes at most a second should never see.
// One file, one registration; first-key (workload.go) names it.
func init() {
	checker.Register("long-holds", "EXAMPLE: a holding window longer than ten seconds", func(checker.Options) checker.Checker { return longHolds{limit: 10 * time.Second} })
}

type longHolds struct{ limit time.Duration }

func (c longHolds) Check(in *checker.Input) checker.Result {
	r := checker.Result{Checker: "long-holds", Verdict: checker.Valid, Applicable: true, Anomalies: []checker.Anomaly{}, Metrics: map[string]int64{}}
	for key, hs := range in.Holds {
		for _, h := range hs {
			if d := time.Duration(h.Until - h.AcquiredAt); d > c.limit {
				r.Anomalies = append(r.Anomalies, checker.Anomaly{Kind: "long-hold", At: h.AcquiredAt, Key: key, Leases: []string{h.Lease},
					Text: fmt.Sprintf("lease %s held %q for %s, more than %s", h.Lease, key, d.Round(time.Millisecond), c.limit)})
			}
		}
	}
	r.Metrics["long_holds"] = int64(len(r.Anomalies))
	if len(r.Anomalies) > 0 {
		r.Verdict, r.Reason = checker.Invalid, fmt.Sprintf("%s longer than %s", checker.Plural(len(r.Anomalies), "hold"), c.limit)
	} else {
		r.Reason = fmt.Sprintf("no hold longer than %s", c.limit)
	}
	return r
}
