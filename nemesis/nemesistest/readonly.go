package nemesistest

import (
	"github.com/alicebob/miniredis/v2/server"
)

// writes are the commands a replica refuses (replica-read-only): those a
// lock or a workload writes with. Scripts count as writes, as a lock's
// scripts are (EVAL_RO and EVALSHA_RO still run).
var writes = map[string]bool{
	"SET": true, "SETNX": true, "SETEX": true, "PSETEX": true, "GETSET": true, "GETDEL": true, "MSET": true, "APPEND": true,
	"DEL": true, "UNLINK": true, "EXPIRE": true, "PEXPIRE": true, "EXPIREAT": true, "PEXPIREAT": true, "PERSIST": true, "RENAME": true,
	"INCR": true, "INCRBY": true, "DECR": true, "DECRBY": true,
	"HSET": true, "HSETNX": true, "HDEL": true, "HINCRBY": true, "HMSET": true,
	"LPUSH": true, "RPUSH": true, "LPOP": true, "RPOP": true, "SADD": true, "SREM": true, "ZADD": true, "ZREM": true, "XADD": true,
	"EVAL": true, "EVALSHA": true, "FCALL": true, "FLUSHALL": true, "FLUSHDB": true,
}

// refuseWrites answers a write to a node that knows it is a replica with
// READONLY, as Redis does. A master cut off from its peers does not know
// it was replaced and takes writes until it rejoins: the split brain.
func (n *Node) refuseWrites(p *server.Peer, cmd string, _ ...string) bool {
	if !writes[cmd] {
		return false
	}
	n.mu.Lock()
	replica, srv := !n.master, n.srv
	n.mu.Unlock()
	if !replica {
		return false
	}
	srv.Lock() // a paused node answers nothing until it thaws
	srv.Unlock()
	p.WriteError("READONLY You can't write against a read only replica.")
	return true
}
