package workloads

// hold works under l. With Config.Reenter, half the time (by the seed) the
// client first acquires l's key again, nested, and works under the inner
// lease, which it releases before the outer one, as code that calls a
// locked function from inside another does. A reentrant lock grants the
// nested acquire at once; another lock refuses it (the key is taken), and
// the client works under the outer lease. A nested acquire passes no gate:
// the client holds the key already.
func (s *Session) hold(l *Lease) error {
	if s.r.cfg.Reenter && s.rng.IntN(2) == 0 {
		inner, err := s.acquireAs(l.Key, true)
		if err != nil {
			return err
		}
		if inner != nil {
			s.r.w.Critical(s.ctx, s, inner)
			return s.release(inner)
		}
	}
	s.r.w.Critical(s.ctx, s, l)
	return nil
}
