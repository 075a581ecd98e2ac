#!/usr/bin/python3
"""deadbolt driver for redis-py's own lock, redis.lock.Lock, unmodified.

It speaks docs/driver-protocol.md on stdin and stdout and serves one lock,
`redispy`: a redis.lock.Lock per lease (SET key token NX PX ttl, released by
the library's owner-checked script), over the connections a redis-py user
has: redis.sentinel.Sentinel(...).master_for(...) on the Sentinel topology,
which asks the Sentinels for the master only when it opens a connection, and
redis.Redis on one independent master. Run it with Debian's python3-redis
(4.3.x): /usr/bin/python3 drivers/redispy/driver.py.

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
import json
import os
import sys
import time
from fractions import Fraction

try:
    import redis
    from redis.connection import Connection, ConnectionPool, PythonParser
    from redis.exceptions import ConnectionError, LockNotOwnedError, ResponseError
    from redis.lock import Lock
    from redis.sentinel import Sentinel, SentinelManagedConnection
except ImportError as e:
    sys.stderr.write(
        "redispy driver: %s cannot import redis-py (%s); install Debian's python3-redis "
        "(apt-get install python3-redis; `make scenario` and `make test` install it)\n" % (sys.executable, e))
    sys.exit(3)

LOCK = "redispy"


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
    to the ports published on 127.0.0.1."""

    def __init__(self, addresses):
        self.addresses = addresses

    def physical(self, host, port):
        logical = "%s:%s" % (host, port)
        try:
            host, port = self.addresses[logical].rsplit(":", 1)
        except KeyError:
            raise ConnectionError("no published port for node address %s" % logical)
        return host, int(port)


class MappedConnection(Connection):
    """redis-py's Connection, dialled through the address book."""

    def __init__(self, book, wire, **kwargs):
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
        # The client's log shows which node each connection went to, and when.
        sys.stderr.write("redispy driver: mono_ns %d: connected to %s:%s\n" % (time.monotonic_ns(), *logical))
        return sock

    def send_packed_command(self, command, check_health=True):
        if not self._sock:
            self.connect()  # a connect that fails sent nothing
        self.wire.out = True
        super().send_packed_command(command, check_health)

    def read_response(self, disable_decoding=False):
        try:
            reply = super().read_response(disable_decoding=disable_decoding)
        except ResponseError as e:
            self.wire.out, self.wire.refused = False, e  # the server refused it
            raise
        self.wire.out = False
        return reply


class MappedSentinelConnection(SentinelManagedConnection, MappedConnection):
    """redis-py's Sentinel-managed connection (it asks the Sentinels for the
    master when it connects, and drops itself on READONLY), dialled through
    the address book."""


class WholeErrorParser(PythonParser):
    """redis-py's parser, but an error reply keeps its whole message: the
    resource's replies go back as Redis sent them ("ERR inner", where
    redis-py keeps "inner")."""

    def parse_error(self, response):
        return ResponseError(response)


class Driver:
    def __init__(self):
        self.client = self.resource = None
        self.leases = {}  # lease id -> redis.lock.Lock holding it
        self.wire = Wire()

    def open(self, req):
        if self.client is not None:
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
        book = AddressBook(e["addresses"])
        nodes = list(e.get("masters") or []) + list(e.get("sentinels") or []) + ([e["resource"]] if e.get("resource") else [])
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
            sentinel = Sentinel([book.physical(*s.rsplit(":", 1)) for s in e["sentinels"]],
                                sentinel_kwargs={**bounds, **credentials(e, "sentinel_username", "sentinel_password")},
                                **bounds)
            client = sentinel.master_for(e["master_name"], connection_class=MappedSentinelConnection,
                                         book=book, wire=self.wire, **bounds, **auth)
        elif e.get("topology") == "independent":
            if len(e.get("masters") or []) != 1:
                return fail("%s runs on one master; got %d independent masters" % (LOCK, len(e.get("masters") or [])))
            client = self.client_for(e["masters"][0], book, {**bounds, **auth})
        else:
            return fail("unknown topology %r (this driver has: sentinel, independent)" % e.get("topology"))
        if e.get("resource"):
            # The resource's replies go back as Redis sent them, not as
            # redis-py's callbacks reshape them (SET's OK as True).
            self.resource = self.client_for(e["resource"], book, {**bounds, **auth}, parser_class=WholeErrorParser)
            self.resource.response_callbacks = {}
        self.client = client
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
        sys.stderr.write("redispy driver: redis-py %s, %s topology%s, ttl %dms, timeout %gs, blocking %s\n"
                         % (redis.__version__, e["topology"], follows, ttl, timeout, self.blocking_timeout))
        return {"outcome": "ok"}

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
        # One Lock per lease, used by this one thread.
        lock = Lock(self.client, key, timeout=self.timeout, sleep=self.sleep,
                    blocking=self.blocking_timeout is not None, blocking_timeout=self.blocking_timeout,
                    thread_local=False)
        r = self.call(lock.acquire)
        if r["outcome"] != "ok":
            return r
        if not r.pop("reply"):
            return fail("lock not acquired (taken)", refused=True)
        self.leases[lease] = lock
        # redis-py claims no deadline of its own: none is reported.
        return {"outcome": "ok", "token": lock.local.token.decode()}

    def release(self, req):
        lease = req.get("lease")
        lock = self.leases.pop(lease, None) if isinstance(lease, str) else None
        if lock is None:
            return fail("no lease %r here" % lease)
        r = self.call(lock.release)
        r.pop("reply", None)
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
            return fail(str(e))
        except ResponseError as e:  # an error reply: refused, no effect
            return fail(str(e))
        except Exception as e:  # redis-py's errors, or anything it let through
            if self.wire.out:  # sent, and no reply came
                return {"outcome": "info", "error": "%s: %s" % (type(e).__name__, e)}
            if self.wire.refused is not None:  # READONLY, which redis-py re-raises as ConnectionError
                return fail("%s: %s (Redis refused it, no effect: %s %s)" % (
                    type(e).__name__, e, type(self.wire.refused).__name__, self.wire.refused))
            return fail("%s: %s" % (type(e).__name__, e))


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
    if driver.client is None:
        return fail("no lock open: the first request must be open")
    handler = {"acquire": driver.acquire, "release": driver.release, "resource": driver.on_resource}.get(op)
    return handler(req) if handler else fail("unknown op %r" % op)


def main():
    emit({"event": "hello", "mono_ns": time.monotonic_ns(), "protocol": 1,
          "driver": "redis-py %s" % redis.__version__, "pid": os.getpid(), "locks": [LOCK],
          "lock_info": {LOCK: {"summary": "redis-py %s's own redis.lock.Lock (SET NX PX, owner-checked "
                                          "release script), unmodified" % redis.__version__,
                               "max_groups": 1, "sentinel": ["reconnect"]}}})
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
