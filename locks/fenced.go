package locks

import (
	"context"
	"fmt"
	"time"

	"github.com/deadbolt-lab/deadbolt/endpoints"
)

func init() {
	RegisterFencing("fenced", "simple plus a fencing token: one script does SET NX PX and, only then, INCR key:fence", NewFenced)
	InDebate("fenced", 6)
}

var fencedAcquireScript = script("fenced_acquire.lua")

// FenceSuffix names the counter that hands out a lock's fencing tokens:
// key + FenceSuffix. The counter never expires, so tokens keep increasing
// across holders and expiries for as long as the master keeps its data.
// (On Redis Cluster the two keys would need a hash tag to share a slot.)
const FenceSuffix = ":fence"

// Fenced is the simple lock whose grants also carry a fencing token, drawn
// in the same script as the SET so that no refusal consumes one. It
// releases as Simple does.
type Fenced struct{ Simple }

// NewFenced builds a fenced lock over a single master group.
func NewFenced(e endpoints.Endpoints, o Options) (Lock, error) {
	rdb, err := OneClient("fenced", e, o)
	if err != nil {
		return nil, err
	}
	return &Fenced{Simple{rdb: rdb, o: o.WithDefaults()}}, nil
}

func (f *Fenced) Acquire(ctx context.Context, key string) (*Lease, error) {
	return f.o.Retry(ctx, func() (*Lease, error) { return f.try(ctx, key) })
}

func (f *Fenced) try(ctx context.Context, key string) (*Lease, error) {
	token := newToken()
	start := time.Now()
	cctx, cancel := context.WithTimeout(ctx, f.o.Timeout)
	defer cancel()
	fence, err := fencedAcquireScript.Run(cctx, f.rdb, []string{key, key + FenceSuffix}, token, f.o.TTL.Milliseconds()).Int64()
	l := &Lease{Key: key, Token: token, Fence: fence, TTL: f.o.TTL, Deadline: f.o.deadline(start)}
	switch err := AcquireResult(fence != 0, err); {
	case Failed(err):
		return nil, err
	case err != nil:
		return nil, undoUnknown(ctx, f.rdb, f.o.Timeout, l, err)
	case ctx.Err() != nil:
		return nil, undoUnknown(ctx, f.rdb, f.o.Timeout, l, fmt.Errorf("acquired after the caller gave up: %w", ctx.Err()))
	}
	return l, nil
}
