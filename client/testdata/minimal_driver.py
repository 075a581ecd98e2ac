#!/usr/bin/env python3
"""A minimal deadbolt driver, written from docs/driver-protocol.md alone.

It serves the lock `simple` (SET key token NX PX ttl, released by an
owner-checked script) on one independent master, and the `resource` op.
Standard library only: it speaks RESP2 over a socket itself. It has no
watchdog and no named points, so it sends no renew, lost or stopped events
and ignores `arm`. It is single-threaded, so its lines cannot interleave.
The conformance suite (client/conformance, `deadbolt conformance`) runs it
beside the Go driver.
"""
import json
import os
import random
import secrets
import socket
import sys
import time

RELEASE = ('if redis.call("get",KEYS[1]) == ARGV[1] then '
           'return redis.call("del",KEYS[1]) else return 0 end')


def emit(obj):
    # Only protocol lines on stdout, each whole and flushed.
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def fail(error, **extra):
    return {"outcome": "fail", "error": error, **extra}


def is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


class NotSent(Exception):
    """The command certainly never reached Redis: no connection was made."""


class Unknown(Exception):
    """The command may have reached Redis: a timeout or a dropped link."""


class RedisError(Exception):
    """Redis answered with an error reply: it ran and refused the command."""


class Redis:
    """One connection to one node; every call is bounded by the timeout.
    With credentials, a new connection authenticates (AUTH) first."""

    def __init__(self, addr, timeout, auth=()):
        host, port = addr.rsplit(":", 1)
        self.addr, self.timeout, self.auth = (host, int(port)), timeout, auth
        self.sock, self.buf, self.deadline = None, b"", 0

    def call(self, *args):
        self.deadline = time.monotonic() + self.timeout
        if self.sock is None:
            try:
                self.sock = socket.create_connection(self.addr, timeout=self.timeout)
            except OSError as e:  # refused, or timed out before it was made
                raise NotSent("connect %s:%d: %s" % (self.addr + (e,)))
            if self.auth:
                try:  # the command itself is not sent yet: no effect either way
                    self.io().sendall(self.encode("AUTH", *self.auth))
                    self.reply(top=True)
                except (RedisError, OSError, ValueError) as e:
                    self.close()
                    raise NotSent("AUTH on %s:%d: %s" % (self.addr + (e,)))
        out = self.encode(*args)
        try:
            self.io().sendall(out)
            return self.reply(top=True)
        except RedisError:
            raise  # a whole error line was read: the stream is still in step
        except (OSError, ValueError) as e:
            self.close()  # a late reply would be taken for the next one's
            raise Unknown(str(e) or type(e).__name__)

    @staticmethod
    def encode(*args):
        out = b"*%d\r\n" % len(args)
        for a in args:
            a = str(a).encode()
            out += b"$%d\r\n%s\r\n" % (len(a), a)
        return out

    def io(self):
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise socket.timeout("timed out")
        self.sock.settimeout(left)
        return self.sock

    def fill(self, enough):
        while not enough():
            chunk = self.io().recv(65536)
            if not chunk:
                raise ValueError("connection closed by the server")
            self.buf += chunk

    def reply(self, top=False):
        self.fill(lambda: b"\r\n" in self.buf)
        line, self.buf = self.buf.split(b"\r\n", 1)
        kind, rest = line[:1], line[1:].decode(errors="replace")
        if kind == b"+":
            return rest
        if kind == b"-":
            if top:
                raise RedisError(rest)
            return rest  # an error inside an array: its message
        if kind == b":":
            return int(rest)
        if kind == b"$":
            n = int(rest)
            if n < 0:
                return None
            self.fill(lambda: len(self.buf) >= n + 2)
            data, self.buf = self.buf[:n], self.buf[n + 2:]
            return data.decode(errors="replace")
        if kind == b"*":
            n = int(rest)
            return None if n < 0 else [self.reply() for _ in range(n)]
        raise ValueError("bad reply %r" % line)

    def close(self):
        if self.sock is not None:
            self.sock.close()
        self.sock, self.buf = None, b""


class Driver:
    def __init__(self):
        self.lock = self.resource = None
        self.leases = {}  # lease id -> (key, token)

    def open(self, req):
        if self.lock is not None:
            return fail("a lock is already open")
        if req.get("lock") != "simple":
            return fail("unknown lock %r (this driver has: simple)" % req.get("lock"))
        ttl, e, o = req.get("ttl_ms"), req.get("endpoints"), req.get("options") or {}
        if not is_int(ttl) or ttl <= 0:
            return fail("open needs ttl_ms > 0")
        if not isinstance(o, dict) or not all(is_int(v) and v >= 0 for v in o.values()):
            return fail("options are whole numbers >= 0")
        if not isinstance(e, dict) or e.get("topology") != "independent" or len(e.get("masters") or []) != 1:
            return fail("simple needs endpoints with one independent master")
        addresses = e.get("addresses") or {}
        timeout = (o.get("timeout_ms") or 500) / 1000
        # Credentials for every node, when the endpoints have them.
        auth = (e["username"], e["password"]) if e.get("username") and e.get("password") else \
            (e["password"],) if e.get("password") else ()
        try:  # each logical address is a published port; connected on first use
            self.lock = Redis(addresses[e["masters"][0]], timeout, auth)
            if e.get("resource"):
                self.resource = Redis(addresses[e["resource"]], timeout, auth)
        except KeyError as k:
            self.lock = self.resource = None
            return fail("no address for node %s" % k)
        self.ttl_ms, self.retries = ttl, o.get("retries") or 0
        self.retry_delay, self.wait = (o.get("retry_delay_ms") or 50) / 1000, (o.get("wait_ms") or 0) / 1000
        return {"outcome": "ok"}

    def acquire(self, req):
        key, lease = req.get("key"), req.get("lease")
        if not isinstance(key, str) or not key or not isinstance(lease, str) or not lease:
            return fail("acquire needs a key and a lease")
        if lease in self.leases:
            return fail("lease %s is already taken" % lease)
        give_up, attempt = time.monotonic() + self.wait, 0
        while True:
            r = self.try_acquire(key, lease)
            if not r.get("refused") or (attempt >= self.retries and time.monotonic() >= give_up):
                return r
            attempt += 1
            time.sleep(random.uniform(0, self.retry_delay))

    def try_acquire(self, key, lease):
        token, start = secrets.token_hex(12), time.monotonic_ns()
        r = self.run(self.lock, ["SET", key, token, "NX", "PX", self.ttl_ms])
        if r["outcome"] != "ok":
            return r  # fail (no connection, an error reply) or info
        if r["reply"] != "OK":
            return fail("lock not acquired", refused=True)
        self.leases[lease] = (key, token)
        return {"outcome": "ok", "token": token, "deadline_mono_ns": start + self.ttl_ms * 1_000_000}

    def release(self, req):
        lease = req.get("lease")
        held = self.leases.pop(lease, None) if isinstance(lease, str) else None
        if held is None:
            return fail("no lease %r here" % lease)
        key, token = held
        r = self.run(self.lock, ["EVAL", RELEASE, 1, key, token])
        if r["outcome"] == "ok" and r["reply"] != 1:
            return fail("lock was no longer held")
        return {"outcome": "ok"} if r["outcome"] == "ok" else r

    def on_resource(self, req):
        if self.resource is None:
            return fail("this run has no resource node")
        command = req.get("command")
        if not isinstance(command, list) or not command or \
                not all(isinstance(a, (str, int, float)) and not isinstance(a, bool) for a in command):
            return fail("resource needs a command of strings and numbers")
        return self.run(self.resource, command)

    def run(self, conn, command):
        """One Redis call, its outcome classified as the protocol asks."""
        try:
            return {"outcome": "ok", "reply": conn.call(*command)}
        except (NotSent, RedisError) as e:  # certainly no effect
            return fail(str(e))
        except Unknown as e:  # it may have taken effect
            return {"outcome": "info", "error": str(e)}

    def handle(self, req):
        op = req.get("op")
        if op == "open":
            return self.open(req)
        if self.lock is None:
            return fail("no lock open: the first request must be open")
        handler = {"acquire": self.acquire, "release": self.release, "resource": self.on_resource}.get(op)
        return handler(req) if handler else fail("unknown op %r" % op)


def main():
    emit({"event": "hello", "mono_ns": time.monotonic_ns(), "protocol": 1,
          "driver": "python-minimal", "pid": os.getpid(), "locks": ["simple"]})
    driver = Driver()
    for line in sys.stdin.buffer:  # bytes: a line that is not UTF-8 is malformed too
        if not line.strip():
            continue
        try:
            req = json.loads(line)
            if not isinstance(req, dict) or not is_int(req.get("id")) or req["id"] <= 0:
                raise ValueError("not an object with an id > 0")
        except ValueError as e:
            emit({"event": "error", "mono_ns": time.monotonic_ns(),
                  "error": "not a request: %s: %r" % (e, line[:200])})
            return 2
        reply = driver.handle(req)
        reply["id"] = req["id"]
        emit(reply)
    return 0  # end of input: the harness is done, or gone; release nothing


if __name__ == "__main__":
    sys.exit(main())
