//go:build redsync4_notimeoutfactor

package redsyncadapter

import (
	"time"

	"github.com/go-redsync/redsync/v4"

	"github.com/deadbolt-lab/deadbolt/locks"
)

// Up to v4.4.x a try of a Lock has no bound of its own: its commands wait
// as long as the client lets them.

func timeoutFactorKnobs() locks.Knobs { return nil }

func timeoutFactorOptions(locks.Settings, func(string) bool) []redsync.Option { return nil }

func tryTimeout(time.Duration, locks.Settings) (time.Duration, bool) { return 0, false }
