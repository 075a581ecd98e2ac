// Package deadbolt carries the source a library's driver is built from,
// so that a deadbolt binary builds one anywhere, not only inside its
// repository: the module's go.mod and go.sum, the packages the adapters
// import (the lock interface, the driver protocol and what they stand on),
// the adapters themselves (drivers/go/), the shipped Python driver, and
// the recipe of the server images (cluster/image).
// drivers.Build unpacks it into the user's cache directory when deadbolt
// runs outside a checkout. A package the adapters come to import must be
// added here: the test that builds every adapter from the unpacked source
// says which.
package deadbolt

import "embed"

// Source is the module's source the drivers are built from.
//
//go:embed go.mod go.sum
//go:embed client/*.go endpoints/*.go history/*.go topology/*.go
//go:embed internal/dense internal/strarena internal/suggest
//go:embed locks/*.go locks/scripts locks/adapters locks/clients
//go:embed drivers/go drivers/redispy/driver.py cluster/image/build.sh cluster/image/clockshift.c
var Source embed.FS
