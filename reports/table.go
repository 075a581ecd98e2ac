package reports

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// Table writes the comparison of several runs, one row each, and says for
// each whether its verdict matched its expectation.
func Table(w io.Writer, rs []*Results) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SCENARIO\tLOCK\tTOPOLOGY\tNEMESIS\tSEED\tACQUIRES\tDOUBLE HOLDS\tMODEL\tEXPECTED\tVERDICT\tRESULT")
	for _, r := range rs {
		result := "PASS"
		if !r.Matches {
			result = "FAIL"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%d\t%d\t%s\t%s\t%s\t%s\n",
			r.Scenario, r.Lock, r.Topology, r.Nemesis, r.Seed, r.Stats.AcquiresOK,
			len(r.DoubleHolds), r.Linearizable, r.Expected, r.Verdict, result)
	}
	return tw.Flush()
}

// FirstDoubleHold is one line of evidence for a summary, "" when none.
func FirstDoubleHold(r *Results) string {
	if len(r.DoubleHolds) == 0 {
		return ""
	}
	d := r.DoubleHolds[0]
	line := fmt.Sprintf("key %s: process %d (acquired %s) and process %d (acquired %s) overlap %s..%s",
		d.Key, d.First.Process, Seconds(d.First.AcquiredAt), d.Second.Process, Seconds(d.Second.AcquiredAt),
		Seconds(d.OverlapStart), Seconds(d.OverlapEnd))
	if len(d.Faults) == 0 {
		return line + " with no fault active"
	}
	return line + " during " + strings.Join(d.Faults, ", ")
}
