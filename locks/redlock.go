package locks

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/deadbolt-lab/deadbolt/endpoints"
)

func init() {
	Register("redlock", "RedLock: SET NX PX on N independent masters in parallel, quorum N/2+1, validity TTL - elapsed - drift", NewRedlock)
	InDebate("redlock", 7)
}

// Redlock is antirez's algorithm over independent masters.
type Redlock struct {
	nodes  masters
	quorum int
	o      Options
	// nodeTimeout bounds each node's SET, far below the TTL, so that a dead
	// node cannot eat the validity.
	nodeTimeout time.Duration
}

// NewRedlock builds RedLock over one client per independent master.
func NewRedlock(e endpoints.Endpoints, o Options) (Lock, error) {
	if e.Groups() < 1 {
		return nil, fmt.Errorf("lock redlock needs at least one master")
	}
	if err := IndependentMasters("redlock", e); err != nil {
		return nil, err
	}
	o = o.WithDefaults()
	clients, err := o.Clients(e)
	if err != nil {
		return nil, err
	}
	nt := min(o.TTL/20, o.Timeout)
	return &Redlock{nodes: clients, quorum: len(clients)/2 + 1, o: o, nodeTimeout: nt}, nil
}

// Close closes the lock's connections.
func (r *Redlock) Close() error { return closeAll(r.nodes...) }

func (r *Redlock) Acquire(ctx context.Context, key string) (*Lease, error) {
	return r.o.Retry(ctx, func() (*Lease, error) { return r.try(ctx, key) })
}

// try is one round: SET on every master in parallel, granted when a quorum
// took the key within the validity. Anything else is undone, and is a
// certain failure only when nothing of ours may be left (giveBack).
func (r *Redlock) try(ctx context.Context, key string) (*Lease, error) {
	token := newToken()
	start := time.Now()
	answers := r.nodes.take(ctx, r.nodeTimeout, key, token, r.o.TTL)
	l := &Lease{Key: key, Token: token, TTL: r.o.TTL, Deadline: r.o.deadline(start)}
	t := countTakes(answers)
	if t.took >= r.quorum && time.Now().Before(l.Deadline) {
		return l, nil
	}
	var late error
	if t.took >= r.quorum {
		late = fmt.Errorf("the validity ran out while acquiring")
	}
	return nil, r.nodes.giveBack(ctx, r.o.Timeout, l, answers, r.quorum, late)
}

// Release deletes our token on every master. The lock counts as released
// when a quorum deleted it, and as no longer ours only when every master
// answered and none still had it: deleting some copies took effect.
func (r *Redlock) Release(ctx context.Context, l *Lease) error {
	deleted, errs := tally(r.nodes.release(ctx, r.o.Timeout, l))
	switch {
	case deleted >= r.quorum:
		return nil
	case errs == 0 && deleted == 0:
		return fmt.Errorf("%w: no master still had it", ErrNotHeld)
	case errs == 0:
		// The copies it deleted were ours and are gone: whatever the
		// quorum, the release changed what another client can take.
		return fmt.Errorf("release deleted the lock on %d of %d masters, fewer than the quorum %d", deleted, len(r.nodes), r.quorum)
	default:
		return fmt.Errorf("release reached %d of %d masters", len(r.nodes)-errs, len(r.nodes))
	}
}

// tally counts the masters that acted (nil) and those that did not
// answer (any error but ErrNotHeld).
func tally(errs []error) (acted, unanswered int) {
	for _, err := range errs {
		switch {
		case err == nil:
			acted++
		case !errors.Is(err, ErrNotHeld):
			unanswered++
		}
	}
	return acted, unanswered
}

// Extend gives l a new TTL on every master that still holds its token; it
// is extended when a quorum did within the new validity, as an acquire
// counts. Short of that it is no longer held only when every master
// answered: extending some copies took effect.
func (r *Redlock) Extend(ctx context.Context, l *Lease) error {
	start := time.Now()
	extended, errs := tally(r.nodes.each(ctx, r.nodeTimeout, func(ctx context.Context, rdb redis.UniversalClient) error {
		n, err := extendScript.Run(ctx, rdb, []string{l.Key}, l.Token, r.o.TTL.Milliseconds()).Int()
		return HeldResult(n == 1, err)
	}))
	deadline := r.o.deadline(start)
	switch {
	case extended >= r.quorum && time.Now().Before(deadline):
		l.Deadline = deadline
		return nil
	case errs == 0 && extended == 0:
		return fmt.Errorf("%w: no master still had it", ErrNotHeld)
	}
	return fmt.Errorf("extended on %d of %d masters (%d without an answer in %s), quorum %d", extended, len(r.nodes), errs, r.nodeTimeout, r.quorum)
}
