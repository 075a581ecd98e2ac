package scenarios

import (
	"fmt"
	"os"
	"path/filepath"
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

// linkLatest points store/latest at dir, replacing the link atomically.
func linkLatest(root, dir string) error {
	if root == "" {
		root = "store"
	}
	rel, err := filepath.Rel(root, dir)
	if err != nil {
		return err
	}
	tmp := filepath.Join(root, fmt.Sprintf(".latest-%d", os.Getpid()))
	_ = os.Remove(tmp)
	if err := os.Symlink(rel, tmp); err != nil {
		return fmt.Errorf("link store/latest: %w", err)
	}
	return os.Rename(tmp, filepath.Join(root, "latest"))
}
