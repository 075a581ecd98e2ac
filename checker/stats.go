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
	// Reentries counts ok acquires by a client of a key it held already,
	// for a lock that declares re-entry: one hold, not two.
	Reentries int `json:"reentries,omitempty"`
	// LongestNoGrantMS is the longest stretch on one key from a grant (an
	// ok acquire's completion) to the next, in ms: how long a lock that
	// stayed safe may have stopped granting.
	LongestNoGrantMS int64  `json:"longest_no_grant_ms"`
	LongestNoGrantAt int64  `json:"longest_no_grant_at,omitempty"`
	LongestNoGrantOn string `json:"longest_no_grant_key,omitempty"`
	ReadsOK          int    `json:"reads_ok"`
	ReadsFail        int    `json:"reads_fail"`
	ReadsInfo        int    `json:"reads_info"`
	WritesOK         int    `json:"writes_ok"`
	WritesFail       int    `json:"writes_fail"`
	WritesInfo       int    `json:"writes_info"`
	OrdersOK         int    `json:"orders_ok"`
	OrdersFail       int    `json:"orders_fail"`
	OrdersInfo       int    `json:"orders_info"`
	Processes        int    `json:"processes"`
	Keys             int    `json:"keys"`
	Faults           int    `json:"faults"`
	// Strikes counts faults struck inside a client's operation, and of
	// them those that landed inside it, that hit, and whose operation then
	// took effect late or left the key stuck (strikes.go).
	Strikes       int `json:"strikes,omitempty"`
	StrikesInside int `json:"strikes_inside,omitempty"`
	StrikesHit    int `json:"strikes_hit,omitempty"`
	StrikesLate   int `json:"strikes_late,omitempty"`
	StrikesStuck  int `json:"strikes_stuck,omitempty"`
	// AcquireErrors counts the clients' acquires that failed or went
	// unanswered, by what refused them (errorClass): a run short of grants
	// says what kept them away.
	AcquireErrors map[string]int `json:"acquire_errors,omitempty"`
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
