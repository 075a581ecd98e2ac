package workloads

import (
	"fmt"
	"strconv"

	"github.com/deadbolt-lab/deadbolt/client"
	"github.com/deadbolt-lab/deadbolt/history"
)

// intReply reads an integer resource reply: a JSON number, its decimal
// text, or nil for a value never written (0).
func intReply(v any) (int64, error) {
	switch x := v.(type) {
	case nil:
		return 0, nil
	case float64:
		if x != float64(int64(x)) {
			return 0, fmt.Errorf("reply %v is not an integer", x)
		}
		return int64(x), nil
	case string:
		return strconv.ParseInt(x, 10, 64)
	}
	return 0, fmt.Errorf("reply %v (%T) is not an integer", v, v)
}

// into returns a completion filler that stores an ok reply's integer in
// *dst (Value or Prev); a reply that is no integer makes the outcome unknown.
func into(dst func(*history.Op) **int64) func(client.Reply, *history.Op) {
	return func(rep client.Reply, op *history.Op) {
		if rep.Outcome != client.OutcomeOK {
			return
		}
		v, err := intReply(rep.Reply)
		if err != nil {
			op.Type, op.Error = history.Info, err.Error()
			return
		}
		*dst(op) = history.Int(v)
	}
}

func value(op *history.Op) **int64 { return &op.Value }
func prev(op *history.Op) **int64  { return &op.Prev }

// gone reports whether the lock reported l lost or the run is stopping:
// a careful holder then does not write.
func gone(s *Session, l *Lease) bool {
	select {
	case <-l.Lost():
		return true
	default:
		return s.Stopping()
	}
}
