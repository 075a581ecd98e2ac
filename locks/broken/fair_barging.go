package broken

import (
	_ "embed"

	"github.com/deadbolt-lab/deadbolt/locks"
)

//go:embed scripts/fair_barging.lua
var fairBargingAcquire string

func init() {
	locks.RegisterReentrant("fair-barging", "BROKEN: the fair lock, but a free lock goes to whoever asks first, in line or not (barging)",
		locks.FairVariant("fair-barging", fairBargingAcquire))
}
