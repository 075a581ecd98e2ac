package scenarios

import (
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"
)

// HistoryFile is the name of a run's history in its directory.
const HistoryFile = "history.jsonl"

// newRunDir makes store/<scenario>/<timestamp>/.
func newRunDir(root, scenario string) (string, error) {
	if root == "" {
		root = "store"
	}
	dir := filepath.Join(root, scenario, time.Now().UTC().Format("20060102T150405.000Z"))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("create run directory: %w", err)
	}
	return dir, nil
}

var latestSeq atomic.Int64

// linkLatest points store/latest at dir, replacing the link atomically.
func linkLatest(root, dir string) error {
	if root == "" {
		root = "store"
	}
	rel, err := filepath.Rel(root, dir)
	if err != nil {
		return err
	}
	// Runs of one suite finish at once: each needs a temporary name of its own.
	tmp := filepath.Join(root, fmt.Sprintf(".latest-%d-%d", os.Getpid(), latestSeq.Add(1)))
	_ = os.Remove(tmp)
	if err := os.Symlink(rel, tmp); err != nil {
		return fmt.Errorf("link store/latest: %w", err)
	}
	return os.Rename(tmp, filepath.Join(root, "latest"))
}
