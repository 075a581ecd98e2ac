package moment

import (
	"time"

	"github.com/deadbolt-lab/deadbolt/history"
)

// Aim is a request a fault times itself from: client slot Slot's (AnySlot:
// any client's) next Op (history.Acquire, history.Release, or
// history.Renew for the holder's extend or reacquire) of Key ("": of any
// key). Quiet takes only a request written while no other client holds Key
// or is asking for it, so that an acquire meets a free key.
type Aim struct {
	Op    history.F
	Key   string
	Slot  int
	Quiet bool
}

// Sending is a request caught the moment the harness wrote it to its
// client. The client is not held: its request is in flight, and a fault
// that strikes a delay after At lands inside the lock's operation or after
// it, as the client's speed has it.
type Sending struct {
	Slot    int
	Process int // the history process whose request it is
	Proc    Process
	// ID is the request's id: Proc.Answered(ID) tells whether its reply
	// has been read.
	ID         int64
	Op         history.F
	Key, Lease string
	At         time.Time
	// Latency is the client's recent latency for Op, from the write of the
	// request to the read of an ok reply: the median of its last ones, or
	// of every client's while it has too few of its own.
	Latency time.Duration
}
