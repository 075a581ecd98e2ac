//go:build !redsync4_notimeoutfactor

package redsyncadapter

import (
	"time"

	"github.com/go-redsync/redsync/v4"

	"github.com/deadbolt-lab/deadbolt/locks"
)

// From v4.5.0 each try of a Lock is bounded by expiry x timeout factor
// (WithTimeoutFactor).

const timeoutFactor = "timeout_factor"

func timeoutFactorKnobs() locks.Knobs {
	return locks.Knobs{{Name: timeoutFactor, Kind: locks.KnobFloat, Default: "0.05",
		Summary: "redsync WithTimeoutFactor: each try of a Lock may take the expiry times this (v4.5.0 on)"}}
}

func timeoutFactorOptions(s locks.Settings, changed func(string) bool) []redsync.Option {
	if changed(timeoutFactor) {
		return []redsync.Option{redsync.WithTimeoutFactor(s.Float(timeoutFactor))}
	}
	return nil
}

// tryTimeout is how long one try may take by its own context.
func tryTimeout(ttl time.Duration, s locks.Settings) (time.Duration, bool) {
	return time.Duration(float64(ttl) * s.Float(timeoutFactor)), true
}
