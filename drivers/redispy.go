package drivers

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/deadbolt-lab/deadbolt/client"
)

func init() {
	Register(Driver{
		Name:        "redispy",
		Summary:     "redis-py's own redis.lock.Lock, unmodified (lock redispy)",
		Interpreter: "/usr/bin/python3",
		Script:      "drivers/redispy/driver.py",
		Needs:       "Debian's python3-redis for /usr/bin/python3 (apt-get install python3-redis; make scenario and make test install it)",
	})
	RegisterLibrary(Library{
		Name:     "redispy",
		Summary:  "redis-py's redis.lock.Lock at a version Debian packages: 4.3.4 (bookworm, the system's), 6.1.0 (trixie) or 6.4.0 (sid), each unpacked beside it",
		Upstream: "https://github.com/redis/redis-py/issues",
		Known:    []string{"4.3.4", "6.1.0", "6.4.0"},
		Setup:    redispyAt,
	})
}

// redispySuites are the Debian suites whose python3-redis deadbolt runs:
// bookworm's is the system's own (make installs it), trixie's and sid's
// are unpacked into the cache and put first on PYTHONPATH (they need
// nothing bookworm's python3-redis does not bring).
var redispySuites = map[string]struct{ suite, deb string }{
	"4.3.4": {"bookworm", ""},
	"6.1.0": {"trixie", "6.1.0-2"},
	"6.4.0": {"sid", "6.4.0-3"},
}

// redispyAt is the redis-py driver with the library at version: the
// driver says which version it imported, in its lock's name.
func redispyAt(version string) (client.Command, error) {
	d, err := Get("redispy")
	if err != nil {
		return client.Command{}, err
	}
	cmd, err := d.Command()
	if err != nil {
		return client.Command{}, err
	}
	cmd.Env = append(cmd.Env, "DEADBOLT_VERSIONED=1")
	s, ok := redispySuites[version]
	if !ok {
		var have []string
		for v, s := range redispySuites {
			have = append(have, v+" ("+s.suite+")")
		}
		return client.Command{}, fmt.Errorf("redispy@%s: deadbolt runs the redis-py of Debian's packages: %s", version, strings.Join(have, ", "))
	}
	if s.deb == "" {
		if out, err := exec.Command(d.Interpreter, "-c", "import redis; print(redis.__version__)").Output(); err != nil || strings.TrimSpace(string(out)) != version {
			return client.Command{}, fmt.Errorf("redispy@%s is Debian %s's python3-redis for %s, which %s", version, s.suite, d.Interpreter, missing(out, err))
		}
		return cmd, nil
	}
	dir, unlock, err := lockedCache("redispy@" + version)
	if err != nil {
		return client.Command{}, err
	}
	defer unlock()
	if err := unpackDeb(s.suite, "python3-redis", s.deb, dir); err != nil {
		return client.Command{}, fmt.Errorf("redispy@%s: %w", version, err)
	}
	cmd.Env = append(cmd.Env, "PYTHONPATH="+filepath.Join(dir, "root", "usr", "lib", "python3", "dist-packages"))
	return cmd, nil
}

func missing(out []byte, err error) string {
	if err != nil {
		return "cannot import (apt-get install python3-redis)"
	}
	return "is " + strings.TrimSpace(string(out)) + " here"
}
