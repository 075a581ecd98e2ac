//go:build deadbolt_driver && !redsync1_errors

package main

import "github.com/go-redsync/redsync"

// Up to v1.3.x, Unlock and Extend answer a bool alone (api_errors.go has
// the calls from v1.4.0 on).

func unlockOf(m *redsync.Mutex) bool { return m.Unlock() }
func extendOf(m *redsync.Mutex) bool { return m.Extend() }
