//go:build deadbolt_driver && redsync1_errors

package main

import "github.com/go-redsync/redsync"

// From v1.4.0 on, Unlock and Extend also return the commands' errors,
// which the adapter counts itself (seen): the bool is the answer.

func unlockOf(m *redsync.Mutex) bool { ok, _ := m.Unlock(); return ok }
func extendOf(m *redsync.Mutex) bool { ok, _ := m.Extend(); return ok }
