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

redis-py runs as its users run it: every client setting and every Lock
argument but the lease time keeps the default this redis-py gives it (read
off its own signatures: no socket timeout, redis-py 6's Retry of three
more sends, Lock's blocking acquire polled every 100 ms), unless a knob
(options.library, declared in the hello's lock_info options) says
otherwise. RedisCluster sends a command again on a connection error or
CLUSTERDOWN, as redis-py does: a SET NX whose first attempt took effect
then comes back "not set", a refusal that says which token it tried, and
the harness reads the key back. MOVED and ASK are followed as redis-py
does; its re-reads of the slot map are its own (slot_refresh_ms is
ignored, and the log says so). Two redis-py 4.3.4 defects are stepped around without touching the
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
import re
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
    from redis.backoff import NoBackoff
    from redis.lock import Lock
    from redis.retry import Retry
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
        # While an acquire is under way, when its last SET NX was sent:
        # each is a try of a blocking acquire (the protocol's
        # try_began_mono_ns).
        self.acquiring = False
        self.tried = 0


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

    def send_command(self, *args, **kwargs):
        if self.wire.acquiring and str(args[0]).upper() == "SET" and any(str(a).upper() == "NX" for a in args[3:]):
            self.wire.tried = time.monotonic_ns()
        super().send_command(*args, **kwargs)

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
        super().send_packed_command(command, check_health)

    def read_response(self, disable_decoding=False, **kwargs):
        if not self.counted():
            return Connection.read_response(self, disable_decoding=disable_decoding, **kwargs)
        return super().read_response(disable_decoding=disable_decoding, **kwargs)


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
        try:
            st = settings_of(o)
        except ValueError as err:
            return fail(str(err))
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
        # The client's settings, each redis-py's default unless a knob says
        # otherwise (no socket timeout: a paused node hangs a call).
        bounds = client_kwargs(st)
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
                                         book=book, wire=self.wire, **bounds, **auth)
        elif e.get("topology") == "independent":
            if len(e.get("masters") or []) != 1:
                return fail("%s runs on one master; got %d independent masters" % (LOCK, len(e.get("masters") or [])))
            client = self.client_for(e["masters"][0], book, {**bounds, **auth})
        elif e.get("topology") == "cluster":
            if not e.get("cluster_nodes"):
                return fail("cluster endpoints need cluster_nodes")
            client = None
            # RedisCluster reads the slot map (and the command table) in its
            # constructor; open must not need the nodes: built on first use.
            self.build = lambda: self.cluster_client(e["cluster_nodes"], book, {**bounds, **auth}, st)
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
        self.lock_args = lock_kwargs(st)
        follows = ", sentinel %s%s" % (mode, "" if o.get("sentinel") else " (not asked: redis-py's own)") \
            if e["topology"] == "sentinel" else ""
        if e["topology"] == "cluster":
            follows = ", RedisCluster built on first use, MOVED and ASK followed; slot_refresh_ms %s ignored: " \
                "redis-py has no periodic re-read of the slot map, it re-reads it on CLUSTERDOWN, on five " \
                "connection errors in one call and on every tenth MOVED" % (o.get("slot_refresh_ms") or "(not set)")
        changed = ["%s=%s" % (k["name"], st[k["name"]]) for k in KNOBS if st[k["name"]] != k["default"]]
        sys.stderr.write("redispy driver: redis-py %s, %s topology%s%s, ttl %dms, settings %s\n"
                         % (redis.__version__, e["topology"], follows, ", TLS" if tls else "", ttl,
                            ", ".join(changed) or "redis-py's defaults"))
        return {"outcome": "ok"}

    def cluster_client(self, nodes, book, kwargs, st):
        """redis-py's own cluster client, RedisCluster, dialled through the
        address book, with its retries as the settings say."""
        # Given a URL, RedisCluster builds each node's pool from its
        # keyword arguments, connection_class included; without one, 4.3.4
        # hands them to Redis(), which takes no connection_class. The URL
        # names the first node; startup_nodes the others.
        client = RedisCluster(url="redis://%s" % nodes[0],
                              startup_nodes=[ClusterNode(h, int(p)) for h, p in (n.rsplit(":", 1) for n in nodes[1:])],
                              cluster_error_retry_attempts=st["cluster_error_retry_attempts"],
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
        lock = Lock(self.client, key, timeout=self.timeout, thread_local=False, **self.lock_args)
        token = uuid.uuid1().hex
        self.wire.acquiring, self.wire.tried = True, 0
        try:
            r = self.call(lambda: lock.acquire(token=token))
        finally:
            self.wire.acquiring = False
        if r["outcome"] != "ok":
            if r["outcome"] == "info":
                r["token"] = token
            return r
        if not r.pop("reply"):
            return fail("lock not acquired (taken)", refused=True, token=token)
        self.leases[lease] = lock
        # redis-py claims no deadline of its own: none is reported. The
        # lease runs from the try (SET NX) that took the key.
        ok = {"outcome": "ok", "token": lock.local.token.decode()}
        if self.wire.tried:
            ok["try_began_mono_ns"] = self.wire.tried
        return ok

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


def go_duration(seconds):
    """A duration as Go writes one (time.Duration.String): the knobs'
    canonical text, the harness's and every driver's."""
    ns = round(seconds * 1e9)
    if ns == 0:
        return "0s"
    sign, ns = ("-" if ns < 0 else ""), abs(ns)

    def frac(v, unit):
        whole, part = divmod(v, unit)
        digits = str(part).rjust(len(str(unit)) - 1, "0").rstrip("0")
        return str(whole) + ("." + digits if digits else "")
    if ns < 1000:
        return sign + "%dns" % ns
    if ns < 10**6:
        return sign + frac(ns, 1000) + "\u00b5s"
    if ns < 10**9:
        return sign + frac(ns, 10**6) + "ms"
    h, rest = divmod(ns, 3600 * 10**9)
    m, rest = divmod(rest, 60 * 10**9)
    head = "%dh%dm" % (h, m) if h else ("%dm" % m if m else "")
    return sign + head + frac(rest, 10**9) + "s"


UNITS = {"ns": 1e-9, "us": 1e-6, "\u00b5s": 1e-6, "\u03bcs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}
DURATION = re.compile(r"^([+-]?)((?:\d+(?:\.\d*)?|\.\d+)(?:ns|us|\u00b5s|\u03bcs|ms|s|m|h))+$")


def parse_duration(text):
    """Seconds of a Go duration ("100ms", "1.5s", "1m30s", "0")."""
    if text == "0":
        return 0.0
    m = DURATION.match(text)
    if not m:
        raise ValueError("%r is no duration (a Go duration such as 200ms)" % text)
    total = sum(float(n) * UNITS[u] for n, u in re.findall(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|\u00b5s|\u03bcs|ms|s|m|h)", text))
    return -total if m.group(1) == "-" else total


def seconds_text(v):
    return "none" if v is None else go_duration(v)


def knobs():
    """The knobs: redis-py's client settings and Lock's arguments (all but
    the lease time), each with the default this redis-py gives it, read
    off its own signatures."""
    client = inspect.signature(redis.Redis.__init__).parameters
    lock = inspect.signature(Lock.__init__).parameters
    cluster = inspect.signature(RedisCluster.__init__).parameters
    retry = client.get("retry")
    default_retry = retry.default if retry is not None and isinstance(retry.default, Retry) else None
    return [
        {"name": "socket_timeout", "kind": "duration", "nullable": True, "from": "timeout_ms",
         "default": seconds_text(client["socket_timeout"].default),
         "summary": "redis-py socket_timeout: how long a command waits for its reply (none: for ever)"},
        {"name": "socket_connect_timeout", "kind": "duration", "nullable": True, "from": "timeout_ms",
         "default": seconds_text(client["socket_connect_timeout"].default),
         "summary": "redis-py socket_connect_timeout (none: for ever)"},
        {"name": "retry_on_timeout", "kind": "bool", "default": str(bool(client["retry_on_timeout"].default)).lower(),
         "summary": "redis-py retry_on_timeout: a command that timed out is sent again"},
        {"name": "retry_attempts", "kind": "int", "default": str(default_retry._retries if default_retry else 0),
         "summary": "redis-py retry=Retry(backoff, N): how many more times a failed command is sent (redis-py 6 "
                    "builds Retry(ExponentialWithJitterBackoff, 3); redis-py 4 none, and a Retry alone does "
                    "nothing without retry_on_timeout)"},
        {"name": "cluster_error_retry_attempts", "kind": "int",
         "default": str(cluster["cluster_error_retry_attempts"].default),
         "summary": "RedisCluster cluster_error_retry_attempts: tries of a command after a connection error or CLUSTERDOWN"},
        {"name": "sleep", "kind": "duration", "from": "retry_delay_ms", "default": go_duration(lock["sleep"].default),
         "summary": "Lock sleep: the wait between two tries of a blocking acquire"},
        {"name": "blocking", "kind": "bool", "default": str(bool(lock["blocking"].default)).lower(),
         "summary": "Lock blocking: an acquire tries again until it gets the lock or blocking_timeout passes"},
        {"name": "blocking_timeout", "kind": "duration", "nullable": True, "from": "wait_ms",
         "default": seconds_text(lock["blocking_timeout"].default),
         "summary": "Lock blocking_timeout: how long a blocking acquire tries (none: until it gets the lock)"},
    ]


KNOBS = knobs()
DEFAULT_RETRY = inspect.signature(redis.Redis.__init__).parameters.get("retry")


def canonical(knob, v):
    """v as the knob's canonical text, or ValueError naming what it takes."""
    if not isinstance(v, str):
        raise ValueError("lock option %s: %r is no string" % (knob["name"], v))
    if v == "none" and knob.get("nullable"):
        return v
    try:
        if knob["kind"] == "duration":
            return go_duration(parse_duration(v))
        if knob["kind"] == "int":
            return str(int(v))
        if knob["kind"] == "bool" and v.lower() in ("true", "false", "1", "0"):
            return "true" if v.lower() in ("true", "1") else "false"
    except ValueError:
        pass
    takes = {"duration": "a duration such as 200ms", "int": "a whole number", "bool": "true or false"}[knob["kind"]]
    raise ValueError("lock option %s: %r is no value of %s (it takes %s%s)"
                     % (knob["name"], v, knob["name"], takes, ", or none" if knob.get("nullable") else ""))


def settings_of(o):
    """Every knob's value for options o: its default, what the open's own
    options a knob takes its value from say (timeout_ms, retry_delay_ms,
    wait_ms), what options.library sets (the harness sends every knob)."""
    lib = o.get("library") or {}
    if not isinstance(lib, dict):
        raise ValueError("options.library must be an object")
    st = {k["name"]: k["default"] for k in KNOBS}
    for k in KNOBS:
        v = o.get(k.get("from") or "")
        if is_int(v) and v > 0:
            st[k["name"]] = go_duration(v / 1000)
    known = {k["name"]: k for k in KNOBS}
    for name, v in lib.items():
        if name not in known:
            raise ValueError("unknown lock option %r (known: %s)" % (name, ", ".join(k["name"] for k in KNOBS)))
        st[name] = canonical(known[name], v)
    return st


def seconds(v):
    return None if v == "none" else parse_duration(v)


def client_kwargs(st):
    """redis.Redis's keyword arguments for settings st: the timeouts, and a
    retry only where a knob changed it from this redis-py's own."""
    kwargs = {"socket_timeout": seconds(st["socket_timeout"]),
              "socket_connect_timeout": seconds(st["socket_connect_timeout"]),
              "retry_on_timeout": st["retry_on_timeout"] == "true"}
    default = next(k for k in KNOBS if k["name"] == "retry_attempts")["default"]
    base = DEFAULT_RETRY.default if DEFAULT_RETRY is not None and isinstance(DEFAULT_RETRY.default, Retry) else None
    if st["retry_attempts"] != default:
        retry = copy.deepcopy(base) if base is not None else Retry(NoBackoff(), 0)
        retry._retries = int(st["retry_attempts"])
        kwargs["retry"] = retry
    elif base is not None:
        # The driver builds its own connection pool, to which redis.Redis
        # would not hand its default Retry.
        kwargs["retry"] = copy.deepcopy(base)
    return kwargs


def lock_kwargs(st):
    return {"sleep": parse_duration(st["sleep"]), "blocking": st["blocking"] == "true",
            "blocking_timeout": seconds(st["blocking_timeout"])}


def behaviour(st, ttl_ms):
    """What a client with settings st does with a command, read off a
    connection redis-py builds with them (never connected): how long it
    waits for a reply, how many more times it sends a failed command and
    whether a timed-out one is among them; and the longest call."""
    conn = Connection(**client_kwargs(st))
    retries = conn.retry._retries
    resends = retries != 0 and any(issubclass(TimeoutError, e) for e in conn.retry._supported_errors)
    wait = conn.socket_timeout
    out = {"client": "redis-py %s" % redis.__version__, "call_timeout_ms": -1 if wait is None else max(int(wait * 1000), 1),
           "longest_call_ms": -1}
    if retries:
        out["retries"] = retries if retries > 0 else -1
    if resends:
        out["resends"] = True
    args = lock_kwargs(st)
    if wait is not None and retries >= 0 and not (args["blocking"] and args["blocking_timeout"] is None):
        cap = getattr(conn.retry._backoff, "_cap", 0) or 0
        one = (retries + 1) * wait + retries * cap
        tries = (args["blocking_timeout"] or 0) if args["blocking"] else 0
        out["longest_call_ms"] = max(int((tries + args["sleep"] + 2 * one) * 1000), 1)
    return out


def lock_info(st, ttl_ms):
    info = {"summary": "redis-py %s's own redis.lock.Lock (SET NX PX, owner-checked release script), unmodified, "
                       "at redis-py's defaults unless a knob says otherwise" % redis.__version__,
            "max_groups": 1, "sentinel": ["reconnect"], "topologies": ["sentinel", "independent", "cluster"], "tls": True,
            "calls": ["extend", "reacquire"], "options": KNOBS, **behaviour(st, ttl_ms)}
    if VERSIONED:
        info.update({"library": "redis-py", "version": redis.__version__})
    return info


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


def declare(req):
    """The lock's lock_info as it runs with the request's options."""
    if req.get("lock") != LOCK:
        return fail("unknown lock %r (this driver has: %s)" % (req.get("lock"), LOCK))
    o = req.get("options") or {}
    if not isinstance(o, dict):
        return fail("options must be an object")
    try:
        st = settings_of(o)
    except ValueError as err:
        return fail(str(err))
    return {"outcome": "ok", "lock_info": lock_info(st, req.get("ttl_ms") or 0)}


def handle(driver, req):
    op = req.get("op")
    if op == "declare":
        return declare(req)
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
          "lock_info": {LOCK: lock_info(settings_of({}), 0)}})
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
