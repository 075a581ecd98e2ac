#!/usr/bin/python3
"""deadbolt driver for redis-py's own lock, redis.lock.Lock, unmodified.

It speaks docs/driver-protocol.md on stdin and stdout and serves one lock,
`redispy`: a redis.lock.Lock per lease (SET key token NX PX ttl, released by
the library's owner-checked script), over the connections a redis-py user
has: redis.sentinel.Sentinel(...).master_for(...) on the Sentinel topology,
which asks the Sentinels for the master only when it opens a connection,
redis.Redis on one independent master, and redis.cluster.RedisCluster on a
Redis Cluster (built on the first acquire: its constructor reads the slot
map, and open must not need the nodes). Run it with Debian's python3-redis
(4.3.x): /usr/bin/python3 drivers/redispy/driver.py.

On the cluster, RedisCluster's retries are off, since a SET NX sent again
after its first attempt took effect comes back "not set", a refusal that
hides a grant: cluster_error_retry_attempts=1, and a command that went out
without its reply ends the call (info) where redis-py would send it to the
same node again. MOVED and ASK are followed as redis-py does; its re-reads
of the slot map are its own (slot_refresh_ms is ignored, and the log says
so). Two redis-py 4.3.4 defects are stepped around without touching the
lock: connection_class reaches the nodes' pools only on a client built from
a URL, and Lock cannot register its scripts on a RedisCluster (Script wants
client.connection_pool), so they are registered on an unconnected client.

The only code between deadbolt and the library is the dial: redis-py has no
dialer hook, so the connection class opens its socket to the published port
of the logical address it was given (or Sentinel named) and keeps the
logical address as its host and port, which the Sentinel pool compares with
the master Sentinel names. The same class tells the driver whether a command
was on the wire without its reply when a call failed: only then may it have
taken effect (info); otherwise it certainly did not (fail).

The driver is single-threaded: Lock has no watchdog, so it sends no renew or
lost events, and it has no named points, so it ignores `arm`.
"""
import copy
import inspect
import json
import logging
import os
import ssl
import sys
import time
import uuid
from fractions import Fraction

try:
    import redis
    from redis.connection import Connection, ConnectionPool
    try:
        from redis.connection import PythonParser
    except ImportError:  # redis-py 5 moved its parsers
        from redis._parsers import _RESP2Parser as PythonParser
    from redis.cluster import ClusterNode, RedisCluster
    from redis.exceptions import ConnectionError, LockNotOwnedError, ResponseError, TimeoutError
    from redis.lock import Lock
    from redis.sentinel import Sentinel, SentinelManagedConnection
except ImportError as e:
    sys.stderr.write(
        "redispy driver: %s cannot import redis-py (%s); install Debian's python3-redis "
        "(apt-get install python3-redis; `make scenario` and `make test` install it)\n" % (sys.executable, e))
    sys.exit(3)

# Run for deadbolt's --lock redispy@VERSION (DEADBOLT_VERSIONED set, the
# library picked by PYTHONPATH), the lock is named after the version this
# interpreter imported, so that a run asked for one version and given
# another is refused.
VERSIONED = bool(os.environ.get("DEADBOLT_VERSIONED"))
LOCK = "redispy@%s" % redis.__version__ if VERSIONED else "redispy"


def emit(obj):
    # Only protocol lines on stdout, each whole and flushed.
    try:
        sys.stdout.write(json.dumps(obj) + "\n")
        sys.stdout.flush()
    except BrokenPipeError:
        os._exit(0)  # the harness is gone: nothing is left to serve


def fail(error, **extra):
    return {"outcome": "fail", "error": error, **extra}


def is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


class Wire:
    """Whether a command to a data node is out without its reply.

    A call that failed while one is out may have taken effect; one that
    failed with none out (no connection, no master named, an error reply)
    certainly did not. Sentinel's own connections are not counted."""

    def __init__(self):
        self.out = False
        self.refused = None  # the last error reply, if the call met one


class AddressBook:
    """Logical addresses ("redis-2:6379", as Redis and Sentinel name nodes)
    to the ports published on 127.0.0.1; and, when the endpoints carry a CA
    (tls_ca), the TLS context every connection is wrapped in."""

    def __init__(self, addresses, tls=None):
        self.addresses = addresses
        self.tls = tls

    def physical(self, host, port):
        logical = "%s:%s" % (host, port)
        try:
            host, port = self.addresses[logical].rsplit(":", 1)
        except KeyError:
            raise ConnectionError("no published port for node address %s" % logical)
        return host, int(port)


class MappedConnection(Connection):
    """redis-py's Connection, dialled through the address book."""

    book = wire = None  # ClusterConnection binds them on a class of its own

    def __init__(self, book=None, wire=None, **kwargs):
        if book is not None:
            self.book, self.wire = book, wire
        super().__init__(**kwargs)

    def _connect(self):
        # Only the socket goes to the published port: host and port stay
        # logical, as the Sentinel pool compares them with the master's.
        logical = self.host, self.port
        self.host, self.port = self.book.physical(*logical)
        try:
            sock = super()._connect()
        finally:
            self.host, self.port = logical
        if self.book.tls is not None:
            # The certificate is checked against the logical host, the name
            # the node's certificate carries (not 127.0.0.1); the handshake
            # is bounded by the socket's timeout, as any read.
            try:
                sock = self.book.tls.wrap_socket(sock, server_hostname=logical[0])
            except (OSError, ssl.SSLError) as e:
                sock.close()
                raise ConnectionError("TLS handshake with %s:%s: %s" % (*logical, e))
        # The client's log shows which node each connection went to, and when.
        sys.stderr.write("redispy driver: mono_ns %d: connected to %s:%s\n" % (time.monotonic_ns(), *logical))
        return sock

    def send_packed_command(self, command, check_health=True):
        if not self._sock:
            self.connect()  # a connect that fails sent nothing
        self.wire.out = True
        super().send_packed_command(command, check_health)

    def read_response(self, disable_decoding=False, **kwargs):  # redis-py 5 added keywords
        try:
            reply = super().read_response(disable_decoding=disable_decoding, **kwargs)
        except ResponseError as e:
            self.wire.out, self.wire.refused = False, e  # the server refused it
            raise
        self.wire.out = False
        return reply


class MappedSentinelConnection(SentinelManagedConnection, MappedConnection):
    """redis-py's Sentinel-managed connection (it asks the Sentinels for the
    master when it connects, and drops itself on READONLY), dialled through
    the address book."""


class Unanswered(Exception):
    """A command to a cluster node went out and its reply never came. It is
    no ConnectionError or TimeoutError, the errors on which RedisCluster
    sends the same command to the same node again (up to five times, 250 ms
    apart: a SET NX that took effect the first time would then come back
    "not set"), so the call ends here, as one that may have taken effect."""


class ClusterConnection(MappedConnection):
    """The connection class of the driver's RedisCluster. RedisCluster
    passes on only the keyword arguments it knows (REDIS_ALLOWED_KEYS), so
    the address book and the wire are bound as class attributes, on a class
    made per driver (bound_cluster_connection).

    Only the lock's own commands count on the wire: not the handshake
    (AUTH, as the connection opens; a connection that cannot be made has
    sent nothing, and RedisCluster may try it again), nor redis-py's reads
    of the slot map (INFO, CLUSTER SLOTS: one that fails makes it ask the
    next node)."""

    handshake = False
    command = None  # the command being sent, in capitals
    UNCOUNTED = ("INFO", "CLUSTER SLOTS")

    def connect(self):
        saved, self.handshake = self.command, True
        try:
            super().connect()
        finally:
            self.command, self.handshake = saved, False

    def send_command(self, *args, **kwargs):
        self.command = str(args[0]).upper()
        super().send_command(*args, **kwargs)

    def counted(self):
        return not self.handshake and self.command not in self.UNCOUNTED

    def send_packed_command(self, command, check_health=True):
        if not self.counted():
            return Connection.send_packed_command(self, command, check_health)
        try:
            super().send_packed_command(command, check_health)
        except (ConnectionError, TimeoutError) as e:
            if self.wire.out:  # some of it may have gone out
                raise Unanswered("%s: %s" % (type(e).__name__, e)) from e
            raise

    def read_response(self, disable_decoding=False, **kwargs):
        if not self.counted():
            return Connection.read_response(self, disable_decoding=disable_decoding, **kwargs)
        try:
            return super().read_response(disable_decoding=disable_decoding, **kwargs)
        except (ConnectionError, TimeoutError) as e:
            # redis-py has closed the connection already.
            raise Unanswered("%s: %s" % (type(e).__name__, e)) from e


def bound_cluster_connection(book, wire):
    return type("BoundClusterConnection", (ClusterConnection,), {"book": book, "wire": wire})


class WholeErrorParser(PythonParser):
    """redis-py's parser, but an error reply keeps its whole message: the
    resource's replies go back as Redis sent them ("ERR inner", where
    redis-py keeps "inner")."""

    def parse_error(self, response):
        return ResponseError(response)


class Driver:
    def __init__(self):
        self.opened = False
        self.client = self.resource = None
        self.build = None  # on the cluster topology: makes the client, on first use
        self.leases = {}  # lease id -> redis.lock.Lock holding it
        self.wire = Wire()

    def open(self, req):
        if self.opened:
            return fail("a lock is already open")
        if req.get("lock") != LOCK:
            return fail("unknown lock %r (this driver has: %s)" % (req.get("lock"), LOCK))
        ttl, e, o = req.get("ttl_ms"), req.get("endpoints"), req.get("options") or {}
        if not is_int(ttl) or ttl <= 0:
            return fail("open needs ttl_ms > 0")
        if not isinstance(e, dict) or not isinstance(e.get("addresses"), dict):
            return fail("open needs endpoints with addresses")
        if not isinstance(o, dict):
            return fail("options must be an object")
        numbers = {k: o.get(k) or 0 for k in ("timeout_ms", "retries", "retry_delay_ms", "wait_ms")}
        if not all(is_int(v) and v >= 0 for v in numbers.values()):
            return fail("options timeout_ms, retries, retry_delay_ms and wait_ms are whole numbers >= 0")
        mode = o.get("sentinel") or "reconnect"
        if mode != "reconnect":
            return fail("sentinel mode %r: redis-py asks Sentinel for the master only when it opens a "
                        "connection (reconnect); it cannot follow Sentinel's announcements" % mode)
        tls = None
        if e.get("tls_ca"):
            # Every node speaks TLS only: the CA is loaded or open fails;
            # never plaintext.
            try:
                tls = ssl.create_default_context(cadata=e["tls_ca"])
            except (ssl.SSLError, ValueError, TypeError) as err:
                return fail("bad endpoints: tls_ca is no PEM certificate (%s)" % err)
        book = AddressBook(e["addresses"], tls)
        nodes = list(e.get("masters") or []) + list(e.get("sentinels") or []) + list(e.get("cluster_nodes") or []) + \
            ([e["resource"]] if e.get("resource") else [])
        missing = [n for n in nodes if n not in e["addresses"]]
        if missing:
            return fail("bad endpoints: no address for node %s" % ", ".join(missing))
        timeout = (numbers["timeout_ms"] or 500) / 1000
        # Every call is bounded: nodes that are paused or cut off hang.
        bounds = {"socket_timeout": timeout, "socket_connect_timeout": timeout}
        # The credentials of the Redis nodes, and of the Sentinels, when set.
        auth = credentials(e, "username", "password")
        if e.get("topology") == "sentinel":
            if not e.get("master_name") or not e.get("sentinels"):
                return fail("sentinel endpoints need master_name and sentinels")
            # redis-py builds its Sentinel clients itself (no connection
            # class), at their published addresses: with TLS, checked against
            # 127.0.0.1, which the nodes' certificate names too.
            sentinel_tls = {"ssl": True, "ssl_ca_data": e["tls_ca"], "ssl_check_hostname": True} if tls else {}
            sentinel = Sentinel([book.physical(*s.rsplit(":", 1)) for s in e["sentinels"]],
                                sentinel_kwargs={**bounds, **credentials(e, "sentinel_username", "sentinel_password"),
                                                 **sentinel_tls},
                                **bounds)
            client = sentinel.master_for(e["master_name"], connection_class=MappedSentinelConnection,
                                         book=book, wire=self.wire, **bounds, **auth, **library_retry())
        elif e.get("topology") == "independent":
            if len(e.get("masters") or []) != 1:
                return fail("%s runs on one master; got %d independent masters" % (LOCK, len(e.get("masters") or [])))
            client = self.client_for(e["masters"][0], book, {**bounds, **auth, **library_retry()})
        elif e.get("topology") == "cluster":
            if not e.get("cluster_nodes"):
                return fail("cluster endpoints need cluster_nodes")
            client = None
            # RedisCluster reads the slot map (and the command table) in its
            # constructor; open must not need the nodes: built on first use.
            self.build = lambda: self.cluster_client(e["cluster_nodes"], book, {**bounds, **auth})
        else:
            return fail("unknown topology %r (this driver has: sentinel, independent, cluster)" % e.get("topology"))
        if e.get("resource"):
            # The resource's replies go back as Redis sent them, not as
            # redis-py's callbacks reshape them (SET's OK as True).
            self.resource = self.client_for(e["resource"], book, {**bounds, **auth}, parser_class=WholeErrorParser)
            self.resource.response_callbacks = {}
        self.client, self.opened = client, True
        # redis-py's timeout is in seconds; int(timeout * 1000) must give
        # back ttl_ms exactly (1.001 * 1000 is 1000.9999999999999).
        self.timeout = ttl / 1000 if int(ttl / 1000 * 1000) == ttl else Fraction(ttl, 1000)
        self.sleep = (numbers["retry_delay_ms"] or 50) / 1000
        # Lock has no attempt count, only a time to go on trying for: about
        # retries more attempts, sleep apart, or wait_ms, whichever is longer.
        waits = [numbers["wait_ms"] / 1000]
        if numbers["retries"]:
            waits.append((numbers["retries"] + 0.5) * self.sleep)
        self.blocking_timeout = max(waits) or None
        follows = ", sentinel %s%s" % (mode, "" if o.get("sentinel") else " (not asked: redis-py's own)") \
            if e["topology"] == "sentinel" else ""
        if e["topology"] == "cluster":
            follows = ", RedisCluster built on first use, no retries of a command on a connection error or " \
                "CLUSTERDOWN (cluster_error_retry_attempts=1, and a command sent without its reply is not sent " \
                "again), MOVED and ASK followed; slot_refresh_ms %s ignored: redis-py has no periodic re-read " \
                "of the slot map, it re-reads it on CLUSTERDOWN, on five connection errors in one call and " \
                "on every tenth MOVED" % (o.get("slot_refresh_ms") or "(not set)")
        sys.stderr.write("redispy driver: redis-py %s (its default retry: %s), %s topology%s%s, ttl %dms, timeout %gs, blocking %s\n"
                         % (redis.__version__, library_retry().get("retry", "none"), e["topology"], follows, ", TLS" if tls else "", ttl, timeout,
                            self.blocking_timeout))
        return {"outcome": "ok"}

    def cluster_client(self, nodes, book, kwargs):
        """redis-py's own cluster client, RedisCluster, dialled through the
        address book, with its retries off: cluster_error_retry_attempts=1
        is one attempt (0 makes 4.3.4 raise None, a TypeError)."""
        # Given a URL, RedisCluster builds each node's pool from its
        # keyword arguments, connection_class included; without one, 4.3.4
        # hands them to Redis(), which takes no connection_class. The URL
        # names the first node; startup_nodes the others.
        client = RedisCluster(url="redis://%s" % nodes[0],
                              startup_nodes=[ClusterNode(h, int(p)) for h, p in (n.rsplit(":", 1) for n in nodes[1:])],
                              cluster_error_retry_attempts=1,
                              connection_class=bound_cluster_connection(book, self.wire), **kwargs)
        # redis-py 4.3.4's Script reads its encoder from client.connection_pool,
        # which RedisCluster has not: Lock(RedisCluster(...)) raises
        # AttributeError while registering its scripts. Register them on a
        # plain client that is never connected (the scripts' SHA1s are
        # computed locally); Lock always runs them on its own client.
        Lock(redis.Redis(), "deadbolt-register-scripts")
        sys.stderr.write("redispy driver: mono_ns %d: cluster slot map read\n" % time.monotonic_ns())
        return client

    def client_for(self, logical, book, bounds, **kwargs):
        host, port = logical.rsplit(":", 1)
        return redis.Redis(connection_pool=ConnectionPool(
            connection_class=MappedConnection, host=host, port=int(port), book=book, wire=self.wire, **bounds, **kwargs))

    def acquire(self, req):
        key, lease = req.get("key"), req.get("lease")
        if not isinstance(key, str) or not key or not isinstance(lease, str) or not lease:
            return fail("acquire needs a key and a lease")
        if lease in self.leases:
            return fail("lease %s is already taken" % lease)
        if self.client is None:
            # Nothing of the acquire has been sent: a client that cannot be
            # built (no node answered the slot map) is a certain failure.
            self.wire.out, self.wire.refused = False, None
            try:
                self.client = self.build()
            except Exception as e:
                return fail("redis-py's RedisCluster could not be built: %s: %s" % (type(e).__name__, e))
        # One Lock per lease, used by this one thread. The token is made
        # as the library makes it, and handed to acquire (its documented
        # argument), so that a refusal can say which value it tried: the
        # harness then reads the key, and a refusal that left its own
        # value there (a retried SET NX) is seen.
        lock = Lock(self.client, key, timeout=self.timeout, sleep=self.sleep,
                    blocking=self.blocking_timeout is not None, blocking_timeout=self.blocking_timeout,
                    thread_local=False)
        token = uuid.uuid1().hex
        r = self.call(lambda: lock.acquire(token=token))
        if r["outcome"] != "ok":
            if r["outcome"] == "info":
                r["token"] = token
            return r
        if not r.pop("reply"):
            return fail("lock not acquired (taken)", refused=True, token=token)
        self.leases[lease] = lock
        # redis-py claims no deadline of its own: none is reported.
        return {"outcome": "ok", "token": lock.local.token.decode()}

    def on_lease(self, req):
        """extend (a new TTL from now, replace_ttl) or reacquire (the
        library's own: PEXPIRE to the lock's timeout), on the Lock that
        holds the lease; the driver keeps the lease whatever the answer."""
        lock = self.leases.get(req.get("lease")) if isinstance(req.get("lease"), str) else None
        if lock is None:
            return fail("no lease %r here" % req.get("lease"))
        if req["op"] == "extend":
            r = self.call(lock.extend, self.timeout, True)
        else:
            r = self.call(lock.reacquire)
        r.pop("reply", None)
        if r["outcome"] == "fail" and r.pop("not_owned", False):
            r["refused"] = True
        return r

    def release(self, req):
        lease = req.get("lease")
        lock = self.leases.pop(lease, None) if isinstance(lease, str) else None
        if lock is None:
            return fail("no lease %r here" % lease)
        r = self.call(lock.release)
        r.pop("reply", None)
        if r["outcome"] == "fail" and r.pop("not_owned", False):
            r["refused"] = True
        return r

    def on_resource(self, req):
        if self.resource is None:
            return fail("this run has no resource node")
        command = req.get("command")
        if not isinstance(command, list) or not command or \
                not all(isinstance(a, (str, int)) and not isinstance(a, bool) for a in command):
            return fail("resource needs a command of strings and numbers")
        r = self.call(self.resource.execute_command, *command)
        if r["outcome"] == "ok":
            r["reply"] = jsonable(r["reply"])
        return r

    def call(self, f, *args):
        """One library call, its outcome classified as the protocol asks."""
        self.wire.out, self.wire.refused = False, None
        try:
            return {"outcome": "ok", "reply": f(*args)}
        except LockNotOwnedError as e:  # the owner check ran: not ours
            return fail(str(e), not_owned=True)
        except ResponseError as e:  # an error reply: refused, no effect
            return fail(str(e))
        except Exception as e:  # redis-py's errors, or anything it let through
            if self.wire.out:  # sent, and no reply came
                return {"outcome": "info", "error": "%s: %s" % (type(e).__name__, e)}
            if self.wire.refused is not None:  # READONLY, which redis-py re-raises as ConnectionError
                return fail("%s: %s (Redis refused it, no effect: %s %s)" % (
                    type(e).__name__, e, type(self.wire.refused).__name__, self.wire.refused))
            return fail("%s: %s" % (type(e).__name__, e))


def library_retry():
    """The retry policy redis.Redis gives the connections of a client built
    as its users build it (redis.Redis(host=..., port=...)): redis-py 6
    retries every command three times by default, redis-py 4 none. The
    driver builds its own connection pool (to dial through the address
    book), which redis-py would otherwise leave without it."""
    default = inspect.signature(redis.Redis.__init__).parameters.get("retry")
    if default is None or default.default is None or default.default is inspect.Parameter.empty:
        return {}
    return {"retry": copy.deepcopy(default.default)}


def resends():
    """Whether the client sends a command that timed out again (the
    hello's resends): redis-py 6's default Retry, with retries left."""
    r = library_retry().get("retry")
    return r is not None and getattr(r, "_retries", 1) > 0


def credentials(e, user, password):
    """redis-py's username and password arguments from the endpoints'
    fields, when set."""
    return {k: e[f] for k, f in (("username", user), ("password", password)) if e.get(f)}


def jsonable(v):
    """A raw RESP2 reply as JSON: bulk strings as strings, an error inside
    an array as its message."""
    if isinstance(v, bytes):
        return v.decode(errors="replace")
    if isinstance(v, (list, tuple)):
        return [jsonable(x) for x in v]
    if isinstance(v, Exception):
        return str(v)
    return v


def handle(driver, req):
    op = req.get("op")
    if op == "open":
        return driver.open(req)
    if not driver.opened:
        return fail("no lock open: the first request must be open")
    handler = {"acquire": driver.acquire, "release": driver.release, "resource": driver.on_resource,
               "extend": driver.on_lease, "reacquire": driver.on_lease}.get(op)
    return handler(req) if handler else fail("unknown op %r" % op)


class OneLine(logging.Formatter):
    """redis-py's cluster client logs every MOVED, ASK and connection error
    with log.exception; unconfigured, logging would print a traceback for
    each on stderr (megabytes of client log in a run). One line each."""

    def format(self, record):
        line = "redispy driver: mono_ns %d: redis-py log: %s" % (time.monotonic_ns(), record.getMessage())
        if record.exc_info and record.exc_info[1] is not None:
            line += " (%s: %s)" % (type(record.exc_info[1]).__name__, record.exc_info[1])
        return line


def main():
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(OneLine())
    logging.getLogger("redis").addHandler(handler)
    emit({"event": "hello", "mono_ns": time.monotonic_ns(), "protocol": 1,
          "driver": "redis-py %s" % redis.__version__, "pid": os.getpid(), "locks": [LOCK],
          "lock_info": {LOCK: {"summary": "redis-py %s's own redis.lock.Lock (SET NX PX, owner-checked "
                                          "release script), unmodified" % redis.__version__,
                               "max_groups": 1, "sentinel": ["reconnect"],
                               "topologies": ["sentinel", "independent", "cluster"], "tls": True,
                               "calls": ["extend", "reacquire"], "resends": resends(),
                               **({"library": "redis-py", "version": redis.__version__} if VERSIONED else {})}}})
    driver = Driver()
    for line in sys.stdin.buffer:  # bytes: a line that is not UTF-8 is malformed too
        if not line.strip():
            continue
        try:
            # Floats stay their decimal text, as the protocol sends them on.
            req = json.loads(line, parse_float=str)
            if not isinstance(req, dict) or not is_int(req.get("id")) or req["id"] <= 0:
                raise ValueError("not an object with an id > 0")
        except ValueError as e:
            emit({"event": "error", "mono_ns": time.monotonic_ns(),
                  "error": "not a request: %s: %r" % (e, line[:200])})
            return 2
        reply = handle(driver, req)
        reply["id"] = req["id"]
        emit(reply)
    return 0  # end of input: the harness is done, or gone; release nothing


if __name__ == "__main__":
    sys.exit(main())
