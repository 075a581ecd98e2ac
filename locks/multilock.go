package locks

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/deadbolt-lab/deadbolt/endpoints"
)

func init() {
	Register("multilock", "Redisson MultiLock: SET NX PX with one token on every one of N independent masters in parallel, all or nothing", NewMultiLock)
	InDebate("multilock", 5)
}

// MultiLock holds a key only when it holds it on every master: unlike
// RedLock there is no quorum, so one dead master blocks every acquire.
type MultiLock struct {
	nodes masters
	o     Options
}

// NewMultiLock builds a MultiLock over one client per independent master.
func NewMultiLock(e endpoints.Endpoints, o Options) (Lock, error) {
	if e.Groups() < 1 {
		return nil, fmt.Errorf("lock multilock needs at least one master")
	}
	if err := IndependentMasters("multilock", e); err != nil {
		return nil, err
	}
	clients, err := o.Clients(e)
	if err != nil {
		return nil, err
	}
	return &MultiLock{nodes: clients, o: o.WithDefaults()}, nil
}

// Close closes the lock's connections.
func (m *MultiLock) Close() error { return closeAll(m.nodes...) }

// Acquire tries up to 1+Retries times, and keeps trying while Wait lasts.
func (m *MultiLock) Acquire(ctx context.Context, key string) (*Lease, error) {
	return m.o.Retry(ctx, func() (*Lease, error) { return m.try(ctx, key) })
}

// try is one round: SET on every master in parallel, granted when every
// master took the key, within the validity and while the caller waits.
// Anything else is undone, and is a certain failure only when nothing of
// ours may be left (giveBack).
func (m *MultiLock) try(ctx context.Context, key string) (*Lease, error) {
	if err := ctx.Err(); err != nil {
		return nil, errors.Join(ErrNotAcquired, err)
	}
	token := newToken()
	start := time.Now()
	answers := m.nodes.take(ctx, m.o.Timeout, key, token, m.o.TTL)
	l := &Lease{Key: key, Token: token, TTL: m.o.TTL, Deadline: m.o.deadline(start)}
	var late error
	switch {
	case countTakes(answers).took < len(m.nodes):
	case ctx.Err() != nil:
		late = fmt.Errorf("acquire took the lock after its context ended: %w", ctx.Err())
	case !time.Now().Before(l.Deadline):
		late = errors.New("the validity ran out while acquiring")
	default:
		return l, nil
	}
	// The undo is owner-checked: masters that refused keep their holder.
	return nil, m.nodes.giveBack(ctx, m.o.Timeout, l, answers, len(m.nodes), late)
}

// Release deletes our token on every master. It is ErrNotHeld when every
// master answered that it no longer had our token, and of unknown effect
// when it deleted some copies and not others, or some master did not
// answer.
func (m *MultiLock) Release(ctx context.Context, l *Lease) error {
	errs := m.nodes.release(ctx, m.o.Timeout, l)
	notHeld, noEffect, unknown := 0, 0, 0
	var firstUnknown error
	for _, err := range errs {
		switch {
		case err == nil:
		case errors.Is(err, ErrNotHeld):
			notHeld++
		case errors.Is(err, ErrNoEffect):
			noEffect++
		default:
			unknown++
			firstUnknown = firstOf(firstUnknown, err)
		}
	}
	switch {
	case notHeld == 0 && noEffect == 0 && unknown == 0:
		return nil
	case notHeld == len(m.nodes):
		return fmt.Errorf("%w: no master still had it", ErrNotHeld)
	case noEffect == 0 && unknown == 0:
		// The copies it deleted were ours and are gone: an effect.
		return fmt.Errorf("release deleted the lock on %d of %d masters; the others no longer had it", len(m.nodes)-notHeld, len(m.nodes))
	case noEffect == len(m.nodes):
		return fmt.Errorf("%w: no master reached", ErrNoEffect)
	}
	return fmt.Errorf("multilock release: %d of %d masters did not answer: %w", unknown+noEffect, len(m.nodes), firstOf(firstUnknown, errors.New("not reached")))
}
