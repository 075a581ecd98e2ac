package cluster

import (
	"context"
	"errors"
	"sync"

	"github.com/redis/go-redis/v9"
)

// ReadKey reads key on every node of the lock service (RoleRedis), as the
// harness: each node's string value, leaving out the nodes without the key
// and those whose value is not a string (a hash lock) or that do not
// serve its slot (MOVED), and each node that did not answer with its
// error. A GET changes nothing, and a node's keys expire by its own clock
// whether or not it is read.
func (c *Cluster) ReadKey(ctx context.Context, key string) (values map[string]string, unanswered map[string]error) {
	var (
		mu   sync.Mutex
		wg   sync.WaitGroup
		out  = map[string]string{}
		errs = map[string]error{}
	)
	for _, n := range c.ByRole(RoleRedis) {
		rdb := c.reader(n)
		wg.Go(func() {
			v, err := rdb.Get(ctx, key).Result()
			if err != nil && !errors.Is(err, redis.Nil) && !isReply(err, "") && ctx.Err() == nil {
				// The node closed kept connections since (a restart, a
				// CLIENT KILL, a kept cluster's reset between runs), and
				// each idle one of the pool answers EOF in turn: read
				// again on a new client.
				v, err = c.newReader(n).Get(ctx, key).Result()
			}
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				out[n.Name] = v
			case errors.Is(err, redis.Nil):
			case isReply(err, "WRONGTYPE", "MOVED", "ASK", "CLUSTERDOWN"):
			default:
				errs[n.Name] = err
			}
		})
	}
	wg.Wait()
	return out, errs
}

// reader is the harness's client of node n for ReadKey, kept open for the
// cluster's life (a read after every refusal would otherwise dial and
// authenticate each time); Close closes them.
func (c *Cluster) reader(n *Node) *redis.Client {
	c.readersMu.Lock()
	defer c.readersMu.Unlock()
	if c.readers == nil {
		c.readers = map[string]*redis.Client{}
	}
	rdb, ok := c.readers[n.Name]
	if !ok {
		// Patient: a read that does not answer makes the run unknown
		// (checker/uses.go), so a loaded node is waited for.
		rdb = n.PatientClient()
		c.readers[n.Name] = rdb
	}
	return rdb
}

// newReader replaces node n's ReadKey client, whose kept connections the
// node may have closed, with a new one.
func (c *Cluster) newReader(n *Node) *redis.Client {
	c.readersMu.Lock()
	defer c.readersMu.Unlock()
	if old, ok := c.readers[n.Name]; ok {
		// Another read may still be using it: closed with the rest.
		c.oldReaders = append(c.oldReaders, old)
	}
	if c.readers == nil {
		c.readers = map[string]*redis.Client{}
	}
	rdb := n.PatientClient()
	c.readers[n.Name] = rdb
	return rdb
}

// closeReaders closes ReadKey's clients.
func (c *Cluster) closeReaders() {
	c.readersMu.Lock()
	defer c.readersMu.Unlock()
	for _, rdb := range c.readers {
		rdb.Close()
	}
	for _, rdb := range c.oldReaders {
		rdb.Close()
	}
	c.readers, c.oldReaders = nil, nil
}

func isReply(err error, prefixes ...string) bool {
	var re redis.Error
	if !errors.As(err, &re) {
		return false
	}
	for _, p := range prefixes {
		if len(re.Error()) >= len(p) && re.Error()[:len(p)] == p {
			return true
		}
	}
	return false
}
