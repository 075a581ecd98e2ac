package nemesis

import (
	"context"
	"time"
)

// Link is a client's link to a node, which link faults delay or cut.
type Link interface {
	Delay(time.Duration) error
	Cut() error
	Heal(context.Context)
}
