package checker

import "github.com/deadbolt-lab/deadbolt/history"

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
	Losses       int `json:"losses"`
	// ExpiredOnArrival counts leases granted after their TTL had passed:
	// no holding window, yet a client that uses them anyway.
	ExpiredOnArrival int `json:"expired_on_arrival"`
	ReadsOK          int `json:"reads_ok"`
	ReadsFail        int `json:"reads_fail"`
	ReadsInfo        int `json:"reads_info"`
	WritesOK         int `json:"writes_ok"`
	WritesFail       int `json:"writes_fail"`
	WritesInfo       int `json:"writes_info"`
	OrdersOK         int `json:"orders_ok"`
	OrdersFail       int `json:"orders_fail"`
	OrdersInfo       int `json:"orders_info"`
	Processes        int `json:"processes"`
	Keys             int `json:"keys"`
	Faults           int `json:"faults"`
}

func countStats(in *Input) Stats {
	s := Stats{Faults: len(in.Faults), ExpiredOnArrival: len(in.ExpiredOnArrival)}
	procs, keys := map[int]bool{}, map[string]bool{}
	for _, p := range in.Pairs {
		inv := p.Invoke
		if inv.Process < 0 {
			continue // nemesis and the harness's own setup and final reads
		}
		procs[inv.Process] = true
		if inv.F.IsLock() {
			keys[inv.Key] = true
		}
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
		case history.Lost:
			s.Losses++
		case history.Read:
			count(out, &s.ReadsOK, &s.ReadsFail, &s.ReadsInfo)
		case history.Write:
			count(out, &s.WritesOK, &s.WritesFail, &s.WritesInfo)
		case history.Order:
			count(out, &s.OrdersOK, &s.OrdersFail, &s.OrdersInfo)
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
