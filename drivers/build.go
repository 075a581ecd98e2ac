package drivers

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"

	"golang.org/x/mod/modfile"
	"golang.org/x/sys/unix"

	"github.com/deadbolt-lab/deadbolt/client"
)

// deadboltModule is this repository's module path, which every adapter
// requires and replaces with the checkout it is built from.
const deadboltModule = "github.com/deadbolt-lab/deadbolt"

// CacheEnv names the directory built drivers are kept in; default: the
// user's cache directory's deadbolt/drivers.
const CacheEnv = "DEADBOLT_CACHE"

// built memoizes Build's answers in this process: a suite asks for a
// driver once per scenario and again when it runs.
var built struct {
	mu   sync.Mutex
	byID map[string]result
}

type result struct {
	cmd client.Command
	err error
}

// Build is the driver of lock NAME@VERSION: for a Go library its adapter
// built against that version (kept in the cache, rebuilt by the Go
// toolchain's own cache when anything changed), for another its Setup.
// The error is bad input: an unknown library or version, a version the
// module proxy does not serve (its message), or the compiler's message.
// log, when set, hears a build starting.
func Build(ctx context.Context, lock string, log func(format string, args ...any)) (client.Command, error) {
	built.mu.Lock()
	defer built.mu.Unlock()
	if r, ok := built.byID[lock]; ok {
		return r.cmd, r.err
	}
	cmd, err := driver(ctx, lock, log)
	if ctx.Err() == nil { // an interrupted build is no answer
		if built.byID == nil {
			built.byID = map[string]result{}
		}
		built.byID[lock] = result{cmd, err}
	}
	return cmd, err
}

func driver(ctx context.Context, lock string, log func(format string, args ...any)) (client.Command, error) {
	lib, version, err := SplitVersioned(lock)
	if err != nil {
		return client.Command{}, err
	}
	if lib.Setup != nil {
		return lib.Setup(version)
	}
	m, err := lib.goModule(version)
	if err != nil {
		return client.Command{}, err
	}
	adapter, err := findShippedDir(filepath.Join(m.Adapter, adapterMod))
	if err != nil {
		return client.Command{}, fmt.Errorf("%s: %w", lock, err)
	}
	root := adapter // the repository root, above the adapter's path
	for range strings.Split(filepath.ToSlash(m.Adapter), "/") {
		root = filepath.Dir(root)
	}
	dir, unlock, err := lockedCache(lib.Name + "@" + version)
	if err != nil {
		return client.Command{}, err
	}
	defer unlock()
	if log != nil {
		log("building the driver of %s (%s at %s, adapter %s)", lock, m.Module, version, m.Adapter)
	}
	src := filepath.Join(dir, "src")
	if err := copyAdapter(adapter, src); err != nil {
		return client.Command{}, err
	}
	if err := pin(filepath.Join(src, "go.mod"), root, m.Module, version); err != nil {
		return client.Command{}, fmt.Errorf("%s: %w", lock, err)
	}
	bin := filepath.Join(dir, "driver")
	tags := strings.TrimSuffix(driverTag+","+m.tagsFor(version), ",")
	if out, err := goCommand(ctx, src, "build", "-tags", tags, "-o", bin, "."); err != nil {
		return client.Command{}, fmt.Errorf("%s: building its driver (%s at %s) failed: %s", lock, m.Module, version, buildMessage(out, err))
	}
	return client.Command{Path: bin}, nil
}

// pin writes the adapter's go.mod for version: it requires the library at
// version and replaces it with that version (deadbolt's own go.mod may
// require a newer one, which the module graph would pick otherwise), and
// replaces deadbolt with the checkout at root.
func pin(path, root, module, version string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	f, err := modfile.Parse(path, b, nil)
	if err != nil {
		return err
	}
	// The driver's own module path stays outside deadbolt's, whose module
	// holds the adapter's directory too (behind driverTag).
	if strings.HasPrefix(f.Module.Mod.Path, deadboltModule+"/") {
		return fmt.Errorf("%s: the driver's module %s lies within deadbolt's module (%s): name it outside (deadbolt-driver/NAME)", path, f.Module.Mod.Path, deadboltModule)
	}
	if err := f.AddRequire(module, version); err != nil {
		return err
	}
	if err := f.AddReplace(module, "", module, version); err != nil {
		return err
	}
	if err := f.AddReplace(deadboltModule, "", root, ""); err != nil {
		return err
	}
	f.Cleanup()
	out, err := f.Format()
	if err != nil {
		return err
	}
	return os.WriteFile(path, out, 0o644)
}

// An adapter's directory (drivers/go/NAME) is a package of deadbolt's
// module behind the build tag driverTag, so that the module embeds it
// (source.go) and its own build ignores it; adapterMod and adapterSum are
// the go.mod and go.sum of the module it is built as, named so that the
// directory stays in deadbolt's module.
const (
	driverTag  = "deadbolt_driver"
	adapterMod = "driver.mod"
	adapterSum = "driver.sum"
)

// copyAdapter copies the adapter's Go files into a fresh src, with its
// driver.mod and driver.sum as go.mod and go.sum.
func copyAdapter(adapter, src string) error {
	if err := os.RemoveAll(src); err != nil {
		return err
	}
	if err := os.MkdirAll(src, 0o755); err != nil {
		return err
	}
	entries, err := os.ReadDir(adapter)
	if err != nil {
		return err
	}
	for _, e := range entries {
		n := e.Name()
		if !e.Type().IsRegular() || !(strings.HasSuffix(n, ".go") && !strings.HasSuffix(n, "_test.go") || n == adapterMod || n == adapterSum) {
			continue
		}
		b, err := os.ReadFile(filepath.Join(adapter, n))
		if err != nil {
			return err
		}
		to := map[string]string{adapterMod: "go.mod", adapterSum: "go.sum"}[n]
		if to == "" {
			to = n
		}
		if err := os.WriteFile(filepath.Join(src, to), b, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// goCommand runs the Go toolchain in dir: modules resolved through the
// module proxy as go.mod says (-mod=mod), no workspace, the local
// toolchain only. It returns the combined output.
func goCommand(ctx context.Context, dir string, args ...string) ([]byte, error) {
	gobin, err := goTool()
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, gobin, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off", "GOTOOLCHAIN=local", "CGO_ENABLED=0")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err = cmd.Run()
	return out.Bytes(), err
}

// goTool finds the go command: on PATH, else beside the toolchain that
// built deadbolt.
func goTool() (string, error) {
	if p, err := exec.LookPath("go"); err == nil {
		return p, nil
	}
	for _, p := range []string{filepath.Join(runtime.GOROOT(), "bin", "go"), "/usr/local/go/bin/go"} {
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
			return p, nil
		}
	}
	return "", errors.New("no go command on PATH or in /usr/local/go/bin: a library's driver is built with the Go toolchain")
}

// buildMessage is what the toolchain said, its last lines.
func buildMessage(out []byte, err error) string {
	msg := strings.TrimSpace(string(out))
	if msg == "" {
		return err.Error()
	}
	lines := strings.Split(msg, "\n")
	if len(lines) > 20 {
		lines = append([]string{"..."}, lines[len(lines)-20:]...)
	}
	return strings.Join(lines, "\n")
}

func cacheDir() (string, error) {
	if d := os.Getenv(CacheEnv); d != "" {
		return d, nil
	}
	d, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("no cache directory for built drivers (set %s): %w", CacheEnv, err)
	}
	return filepath.Join(d, "deadbolt", "drivers"), nil
}

// lockedCache is the cache directory of a driver (NAME@VERSION), made if
// need be, with its lock held until unlock.
func lockedCache(name string) (dir string, unlock func(), err error) {
	cache, err := cacheDir()
	if err != nil {
		return "", nil, err
	}
	dir = filepath.Join(cache, name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", nil, err
	}
	unlock, err = lockDir(dir)
	return dir, unlock, err
}

// lockDir holds dir's build lock: another deadbolt (a shard of the audit)
// building the same driver waits for it.
func lockDir(dir string) (func(), error) {
	f, err := os.OpenFile(filepath.Join(dir, ".lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != nil {
		f.Close()
		return nil, err
	}
	return func() { f.Close() }, nil
}
