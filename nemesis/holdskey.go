package nemesis

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// holdsKey checks that node holds key, by SCAN: a Redis Cluster node that
// has marked the cluster down refuses key lookups, but serves commands that
// name no key.
func holdsKey(ctx context.Context, node Node, key string) error {
	if node == nil {
		return errors.New("no master was known when the fault struck")
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	pattern := globEscaper.Replace(key)
	var cursor uint64
	for {
		keys, next, err := scan(ctx, node, cursor, pattern)
		if err != nil {
			return fmt.Errorf("%s: %w", node.Name(), err)
		}
		if slices.Contains(keys, key) {
			return nil
		}
		if cursor = next; cursor == 0 {
			return fmt.Errorf("%s does not hold %s", node.Name(), key)
		}
	}
}

// scanPatience bounds each SCAN as a probe's timeouts do: the master a
// failover replaces answers at once, or the check fails.
const scanPatience = 500 * time.Millisecond

// scan is one SCAN step from cursor over the keys that match pattern.
func scan(ctx context.Context, node Node, cursor uint64, pattern string) (keys []string, next uint64, err error) {
	ctx, cancel := context.WithTimeout(ctx, scanPatience)
	defer cancel()
	reply, err := node.Do(ctx, "SCAN", cursor, "MATCH", pattern, "COUNT", 1000)
	if err != nil {
		return nil, 0, err
	}
	// The reply is [next cursor, [key ...]], the cursor a string.
	parts, ok := reply.([]any)
	if !ok || len(parts) != 2 {
		return nil, 0, fmt.Errorf("SCAN replied %v", reply)
	}
	c, _ := parts[0].(string)
	if next, err = strconv.ParseUint(c, 10, 64); err != nil {
		return nil, 0, fmt.Errorf("SCAN replied cursor %v", parts[0])
	}
	found, ok := parts[1].([]any)
	if !ok {
		return nil, 0, fmt.Errorf("SCAN replied keys %v", parts[1])
	}
	for _, k := range found {
		if s, ok := k.(string); ok {
			keys = append(keys, s)
		}
	}
	return keys, next, nil
}

// globEscaper quotes the characters SCAN's MATCH reads as a pattern.
var globEscaper = strings.NewReplacer(`\`, `\\`, "*", `\*`, "?", `\?`, "[", `\[`, "]", `\]`)
