package drivers

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"

	deadbolt "github.com/deadbolt-lab/deadbolt"
)

// A shipped file (an adapter, the Python driver) is looked for in the
// repository deadbolt runs in (from the working directory up, then from
// the binary's directory up: a checkout's bin/deadbolt), so that a
// developer's edits are what runs; outside any checkout, in the source
// the binary carries (deadbolt.Source), unpacked once into the cache
// directory under a name of its content's hash: another deadbolt's
// source never mixes with it.

// FindShipped is the path of the shipped file rel (relative to the
// repository root): the checkout's, or the carried source's.
func FindShipped(rel string) (string, error) { return findShipped(rel) }

// findShipped is the path of the shipped file rel (relative to the
// repository root).
func findShipped(rel string) (string, error) {
	for _, start := range searchStarts() {
		if path, ok := findUp(start, rel); ok {
			return path, nil
		}
	}
	root, err := unpackedSource()
	if err != nil {
		return "", fmt.Errorf("no %s in or above %s, and the source this binary carries could not be unpacked: %w", rel, strings.Join(searchStarts(), " or "), err)
	}
	path := filepath.Join(root, rel)
	if _, err := os.Stat(path); err != nil {
		return "", fmt.Errorf("no %s in or above %s, nor in the source this binary carries (%s): %w", rel, strings.Join(searchStarts(), " or "), root, err)
	}
	return path, nil
}

// findShippedDir is the directory of the shipped file rel.
func findShippedDir(rel string) (string, error) {
	path, err := findShipped(rel)
	if err != nil {
		return "", err
	}
	return filepath.Dir(path), nil
}

// searchStarts are where a shipped file is looked for first: the working
// directory, then the deadbolt binary's.
func searchStarts() []string {
	var out []string
	if wd, err := os.Getwd(); err == nil {
		out = append(out, wd)
	}
	if exe, err := os.Executable(); err == nil {
		out = append(out, filepath.Dir(exe))
	}
	return out
}

var unpacked struct {
	once sync.Once
	root string
	err  error
}

// unpackedSource is the root of the source this binary carries, unpacked
// into the cache directory on first use (by one deadbolt at a time: an
// audit's shards share it).
func unpackedSource() (string, error) {
	unpacked.once.Do(func() { unpacked.root, unpacked.err = unpack(deadbolt.Source) })
	return unpacked.root, unpacked.err
}

// unpack writes src under the cache directory, in a directory named by its
// hash, and returns that directory. A directory a complete unpack left
// (its marker written last) is used as it is.
func unpack(src fs.FS) (string, error) {
	sum, err := hashOf(src)
	if err != nil {
		return "", err
	}
	cache, err := cacheDir()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(cache, "source", sum[:16])
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	unlock, err := lockDir(dir)
	if err != nil {
		return "", err
	}
	defer unlock()
	marker := filepath.Join(dir, ".complete")
	if _, err := os.Stat(marker); err == nil {
		return dir, nil
	}
	err = fs.WalkDir(src, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(src, path)
		if err != nil {
			return err
		}
		to := filepath.Join(dir, filepath.FromSlash(path))
		if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
			return err
		}
		return os.WriteFile(to, b, 0o644)
	})
	if err != nil {
		return "", fmt.Errorf("unpacking deadbolt's source into %s: %w", dir, err)
	}
	return dir, os.WriteFile(marker, []byte(sum+"\n"), 0o644)
}

// hashOf is the SHA-256 of src's files, names and contents.
func hashOf(src fs.FS) (string, error) {
	h := sha256.New()
	err := fs.WalkDir(src, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(src, path)
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "%s\x00%d\x00", path, len(b))
		h.Write(b)
		return nil
	})
	return hex.EncodeToString(h.Sum(nil)), err
}
