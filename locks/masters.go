package locks

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// masters are the independent masters of a lock that spreads each key over
// several (RedLock, MultiLock), one go-redis client each.
type masters []redis.UniversalClient

// each runs f on every master in parallel, each call within timeout;
// errs[i] is master i's answer.
func (m masters) each(ctx context.Context, timeout time.Duration, f func(context.Context, redis.UniversalClient) error) []error {
	errs := make([]error, len(m))
	var wg sync.WaitGroup
	for i, rdb := range m {
		wg.Go(func() {
			cctx, cancel := context.WithTimeout(ctx, timeout)
			defer cancel()
			errs[i] = f(cctx, rdb)
		})
	}
	wg.Wait()
	return errs
}

// take sends SET key token NX PX ttl to every master: per master nil when
// it took the key, else AcquireResult's error.
func (m masters) take(ctx context.Context, timeout time.Duration, key, token string, ttl time.Duration) []error {
	return m.each(ctx, timeout, func(ctx context.Context, rdb redis.UniversalClient) error {
		return AcquireResult(rdb.SetNX(ctx, key, token, ttl).Result())
	})
}

// release runs the owner-checked release of l on every master: per master
// nil when it deleted our copy, else HeldResult's error.
func (m masters) release(ctx context.Context, timeout time.Duration, l *Lease) []error {
	return m.each(ctx, timeout, func(ctx context.Context, rdb redis.UniversalClient) error {
		n, err := releaseScript.Run(ctx, rdb, []string{l.Key}, l.Token).Int()
		return HeldResult(n == 1, err)
	})
}

// takes counts the answers of take.
type takes struct {
	took, refused, unreached, unknown int
	// firstUnreached and firstUnknown are the first such answers, for the
	// error.
	firstUnreached, firstUnknown error
}

func countTakes(errs []error) takes {
	var t takes
	for _, err := range errs {
		switch {
		case err == nil:
			t.took++
		case Refused(err):
			t.refused++
		case Failed(err):
			t.unreached++
			t.firstUnreached = firstOf(t.firstUnreached, err)
		default:
			t.unknown++
			t.firstUnknown = firstOf(t.firstUnknown, err)
		}
	}
	return t
}

// firstOf is the first error that is not nil.
func firstOf(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// giveBack undoes an acquire that took (answers from take) without being
// granted, and says what it was, per the Lock contract. It is a certain
// failure only when the lock was never ours and nothing of ours is left:
// every master answered, fewer than quorum took the key, and the undo
// deleted (or found gone) every copy we took: ErrNotAcquired, a refusal
// when every master that answered refused, else marked ErrUndone (we
// held a minority for a while) or joined with why a master was not
// reached. Any other failure is of unknown outcome (history "info"): a SET
// without an answer may have landed, even after the undo, and a quorum
// that took the key held the lock, however briefly.
// late, when not nil, says why a quorum that took the key was no grant
// (the validity ran out, the caller gave up).
func (m masters) giveBack(ctx context.Context, timeout time.Duration, l *Lease, answers []error, quorum int, late error) error {
	t := countTakes(answers)
	what := fmt.Sprintf("took the key on %d of %d masters (quorum %d), %d refused, %d not reached, %d without an answer",
		t.took, len(m), quorum, t.refused, t.unreached, t.unknown)
	if t.took == 0 && t.unknown == 0 {
		// Nothing of ours on any master: nothing to undo.
		if t.unreached > 0 {
			return fmt.Errorf("%w: %s: %w", ErrNotAcquired, what, t.firstUnreached)
		}
		return fmt.Errorf("%w: %s", ErrNotAcquired, what)
	}
	undo := m.release(context.WithoutCancel(ctx), timeout, l)
	took, left := 0, 0
	for i, a := range answers {
		ours := a == nil
		if !ours && Failed(a) {
			continue // refused or never ran: no copy of ours there
		}
		switch u := undo[i]; {
		case u == nil:
			took++ // deleted our copy: whatever its SET answered, it took
		case ours && errors.Is(u, ErrNotHeld):
			took++ // it expired (or was lost) before the undo
		default:
			// Unanswered SET not found (it may land yet), or an undo that
			// did not certainly run: a copy of ours may stay.
			left++
		}
	}
	switch {
	case took+left >= quorum:
		return fmt.Errorf("acquire not granted, outcome unknown: %s; the lock may have been ours (undo certain on %d): %w",
			what, took, firstOf(late, t.firstUnknown, firstUndoError(undo)))
	case left > 0:
		return fmt.Errorf("acquire not granted, outcome unknown: %s; %d copies may outlive the undo: %w",
			what, left, firstOf(t.firstUnknown, firstUndoError(undo)))
	}
	return fmt.Errorf("%w: %s; given back (%w)", ErrNotAcquired, what, ErrUndone)
}

// firstUndoError is the first error of an undo that did not certainly
// delete a copy.
func firstUndoError(undo []error) error {
	for _, u := range undo {
		if u != nil && !errors.Is(u, ErrNotHeld) {
			return u
		}
	}
	return errors.New("copy not found")
}
