package scenarios

import "github.com/deadbolt-lab/deadbolt/reports"

// writeIndex rebuilds the store's index.html, so that it lists the run
// that just finished.
func writeIndex(root string) error {
	if root == "" {
		root = "store"
	}
	return reports.WriteIndex(root)
}
