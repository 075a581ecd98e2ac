package scenarios

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Shards spread a suite or a matrix over machines (a CI's job matrix):
// shard i of n runs a slice of it, the same slice on every machine that
// has the same suite or matrix, and `deadbolt report --merge` joins the
// shards' stores.

// ParseShard reads "i/n" (1 <= i <= n).
func ParseShard(s string) (i, n int, err error) {
	a, b, ok := strings.Cut(s, "/")
	i, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || n < 1 || i < 1 || i > n {
		return 0, 0, fmt.Errorf("want i/n with 1 <= i <= n (shard 2 of 3 is 2/3), got %q", s)
	}
	return i, n, nil
}

// Shard is shard i of n (1-based) of suite, in suite order (ShardOf).
func Shard(suite []Scenario, i, n int) []Scenario {
	return ShardOf(suite, func(s Scenario) string { return s.Name }, Scenario.Length, i, n)
}

// ShardOf is shard i of n (1-based) of items (a suite's scenarios, a
// matrix's runs), in their order. The slices are balanced by length: the
// longest item first (ties by name), each to the shard with the least run
// time so far (ties to the lowest shard), so that they depend on nothing
// but the items' names and lengths and n.
func ShardOf[T any](items []T, name func(T) string, length func(T) time.Duration, i, n int) []T {
	order := make([]int, len(items))
	for k := range order {
		order[k] = k
	}
	slices.SortStableFunc(order, func(a, b int) int {
		return cmp.Or(cmp.Compare(length(items[b]), length(items[a])), cmp.Compare(name(items[a]), name(items[b])))
	})
	load := make([]time.Duration, n)
	mine := make([]bool, len(items))
	for _, k := range order {
		least := 0
		for s := range load {
			if load[s] < load[least] {
				least = s
			}
		}
		load[least] += length(items[k])
		mine[k] = least == i-1
	}
	var out []T
	for k, it := range items {
		if mine[k] {
			out = append(out, it)
		}
	}
	return out
}
