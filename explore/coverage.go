package explore

import (
	"cmp"
	"slices"
)

// Coverage is one row of the coverage table: a fault aimed at a call, how
// many scenarios drew it, how many runs made it, how many times it struck
// in them, and how many of those runs broke their lock.
type Coverage struct {
	Family string `json:"family"`
	Fault  string `json:"fault"`
	Call   string `json:"call"`
	Drawn  int    `json:"drawn"`
	Runs   int    `json:"runs"`
	// Struck counts the faults that struck in those runs; Unstruck the
	// runs in which none did.
	Struck   int `json:"struck"`
	Unstruck int `json:"unstruck"`
	Broke    int `json:"broke"`
	Unknown  int `json:"unknown"`
}

// coverage tallies what each generated scenario aimed at and what its runs
// struck, row by fault and call.
func coverage(gens []Generated, rep *Report) []Coverage {
	rows := map[[3]string]*Coverage{}
	for i, g := range gens {
		key := [3]string{g.Aim.Family, g.Aim.Fault, g.Aim.Call}
		c := rows[key]
		if c == nil {
			c = &Coverage{Family: g.Aim.Family, Fault: g.Aim.Fault, Call: g.Aim.Call}
			rows[key] = c
		}
		c.Drawn++
		for _, r := range rep.Scenarios[i].Runs {
			c.Runs++
			c.Struck += r.Strikes
			if r.Strikes == 0 {
				c.Unstruck++
			}
			switch r.Verdict {
			case "invalid":
				c.Broke++
			case "valid":
			default:
				c.Unknown++
			}
		}
	}
	var out []Coverage
	for _, c := range rows {
		out = append(out, *c)
	}
	slices.SortFunc(out, func(a, b Coverage) int {
		return cmp.Or(cmp.Compare(a.Call, b.Call), cmp.Compare(a.Fault, b.Fault), cmp.Compare(a.Family, b.Family))
	})
	return out
}
