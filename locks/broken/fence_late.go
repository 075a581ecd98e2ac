package broken

import (
	"context"
	"errors"
	"fmt"

	"github.com/deadbolt-lab/deadbolt/endpoints"
	"github.com/deadbolt-lab/deadbolt/locks"
)

// BeforeFence is fence-late's point: after its SET NX PX took the key,
// before its INCR draws the fencing token.
const BeforeFence = "before-fence"

func init() {
	locks.RegisterFencing("fence-late", "BROKEN: SET NX PX, then INCR key:fence as a second command; a holder stalled between them draws its token after the next holder's", NewFenceLate, BeforeFence)
}

// FenceLate is the fenced lock with its token drawn by a command of its
// own after the SET: a holder that stalls between the two past its lease
// draws a token higher than the client that took the key meanwhile, so
// the resource takes the stale holder's writes and refuses the rightful
// one's. The fenced lock draws it in the SET's script.
type FenceLate struct{ base }

// NewFenceLate builds fence-late over one master group.
func NewFenceLate(e endpoints.Endpoints, o locks.Options) (locks.Lock, error) {
	b, err := newBase("fence-late", e, o)
	return &FenceLate{b}, err
}

func (f *FenceLate) Acquire(ctx context.Context, key string) (*locks.Lease, error) {
	l, err := f.setNX(ctx, key, f.o.TTL)
	if err != nil {
		return nil, err
	}
	if err := f.o.Point(ctx, BeforeFence, key); err != nil {
		return nil, fmt.Errorf("fence-late: after SET, before INCR: %w", err)
	}
	cctx, cancel := f.call(ctx)
	defer cancel()
	fence, err := f.rdb.Incr(cctx, key+locks.FenceSuffix).Result()
	if err != nil {
		// The key is ours, without a token: the outcome is unknown.
		return nil, errors.Join(fmt.Errorf("fence-late: INCR after SET"), err)
	}
	l.Fence = fence
	return l, nil
}

func (f *FenceLate) Release(ctx context.Context, l *locks.Lease) error {
	return f.simple.Release(ctx, l)
}
