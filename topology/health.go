package topology

import "time"

// HealthTimeout is how long a health check after a heal waits for a
// deployment of a topology to agree: a minute, three on a Redis Cluster,
// whose healed node may keep cluster-bus links that outlived the cut
// unanswered and answer CLUSTERDOWN for about 50 s, once more than a
// minute, until TCP retries them (docs/guide.md, "Redis Cluster").
func HealthTimeout(topology string) time.Duration {
	if topology == Cluster {
		return 3 * time.Minute
	}
	return time.Minute
}
