"""The processes of a run meet over a plain socket before JAX's distributed runtime starts.

JAX's coordination service ends a process from C++ (SIGABRT and a stack trace)
when a peer is missing, a process id is taken twice or a peer dies, and
waits minutes first; a port already taken crashes process 0, and a
mismatched process count or different data are not noticed at all. So the
command line meets first, on the coordinator's own address and port:
process 0 listens there (which checks that the port is free) and every
other process connects and says who it is (:class:`Hello`: the jaxtests
and jax versions, ``num_processes``, ``process_id``, the options and a digest
of the data). Process 0 answers every peer once all have come, or refuses
them all with one line naming the first problem; a timeout bounds each
wait. Only then does JAX start, with every process known to be there.

Before anything else is said, process 0 and each peer prove to each other
that they know the run's token (a shared secret) with an HMAC
challenge-response (:func:`_proofs`): a client without it is refused with
one line and learns nothing of the run (no versions, no digest), and
cannot stop it either: process 0 keeps waiting for the real peers, and
serves several connections at once, so one that sends nothing holds up no
other. A coordinator that other machines can reach requires a token.

The connections stay open for the whole run (:class:`Link`): a process
that ends (a crash, a kill, an error of its own) closes its end at once, and
one that goes silent stops sending its beat, so its peers stop with one
line and exit status 2 instead of waiting for JAX's heartbeat to abort them.
"""

import dataclasses
import errno
import hashlib
import hmac
import ipaddress
import json
import os
import secrets
import select
import socket
import sys
import threading
import time

__all__ = ["Hello", "JoinError", "Link", "bind_host", "meet"]

_KIND = "jaxtests-join"  # every message says it is one of ours
_PROTOCOL = 2  # 2: the token handshake comes first
_MAX_LINE = 1 << 20  # a hello carries the options: a few kB
_BEAT = 1.0  # seconds between beats on an idle link
_HANDSHAKE = 5.0  # seconds a connection may take to prove the token and say hello
_MAX_PENDING = 64  # connections being checked at once; past it the oldest is dropped
TOKEN_HELP = (
    "give every process the same secret with --token-file PATH (a file only you can read, "
    "mode 0600) or the JAXTESTS_TOKEN environment variable"
)


class JoinError(Exception):
    """A run that cannot start, in one line the user can act on."""


@dataclasses.dataclass(frozen=True)
class Hello:
    """What a process tells process 0 when it joins; every field must match but the id."""

    version: str  # jaxtests and jax versions
    num_processes: int
    process_id: int
    options: dict  # option name -> its value's text
    data: str  # digest of the input data

    def problem(self, ours, taken):
        """Why this peer cannot join process 0's run ``ours`` (``taken`` ids); None if it can."""
        i = self.process_id
        if self.version != ours.version:
            return f"process {i} runs {self.version}, process 0 runs {ours.version}"
        if i == 0:
            return "two processes were started with --process-id 0"
        if self.num_processes != ours.num_processes:
            return (
                f"process {i} was started with --num-processes {self.num_processes}, "
                f"process 0 with --num-processes {ours.num_processes}"
            )
        if i in taken:
            return f"two processes were started with --process-id {i}"
        keys = set(self.options) | set(ours.options)
        names = sorted(k for k in keys if self.options.get(k) != ours.options.get(k))
        if names:
            which = ", ".join(names)
            return (
                f"process {i} runs another command than process 0 (different {which}); "
                "start every process with the same command and options"
            )
        if self.data != ours.data:
            return (
                f"process {i} reads different data than process 0 (the input files' contents "
                "differ); every process must read the same data"
            )
        return None


def bind_host(host):
    """The address process 0 listens on for coordinator ``host`` ("" for every interface).

    An IP address is used as given (127.0.0.1: this machine only); a host
    name is not, since it may resolve differently on process 0's machine
    (Debian maps a machine's own name to 127.0.1.1) than on its peers'.
    """
    try:
        return str(ipaddress.ip_address(host.strip("[]")))
    except ValueError:
        return ""


def is_loopback(host):
    """Whether process 0 at ``host`` listens on this machine's loopback interface only."""
    address = bind_host(host)
    return bool(address) and ipaddress.ip_address(address).is_loopback


def _check_token(host, port, token):
    """The HMAC key of ``token`` (bytes or None); refuse a reachable coordinator without one."""
    if token is None:
        if not is_loopback(host):
            raise JoinError(
                f"--coordinator {host}:{port} can be reached from other machines, and anyone "
                f"who reaches it could stop or join the run: {TOKEN_HELP}"
            )
        return b""  # 127.0.0.1 without a token: any user of this machine may connect
    if not token:
        raise JoinError(f"the token is empty: {TOKEN_HELP}")
    return bytes(token)


def _proofs(key, ours, theirs):
    """``(peer's proof, process 0's proof)`` of the token ``key`` for the nonces exchanged.

    Both nonces enter both proofs, each under its own label, so neither side's
    proof can be replayed as the other's or in another connection.
    """
    nonces = bytes.fromhex(ours) + bytes.fromhex(theirs)
    return tuple(
        hmac.new(key, label + nonces, hashlib.sha256).hexdigest() for label in (b"peer", b"root")
    )


def _nonce(message):
    """The 32-byte hex nonce ``message`` carries as ``challenge``, or None."""
    value = message.get("challenge") if isinstance(message, dict) else None
    if not isinstance(value, str) or len(value) != 64:
        return None
    try:
        bytes.fromhex(value)
    except ValueError:
        return None
    return value


def _listener(host, port):
    """A socket listening on ``(bind_host(host), port)``; None when the port is in use.

    Raises :class:`JoinError` when it cannot listen for another reason.
    """
    address = bind_host(host)
    if address:
        places = [(socket.AF_INET6 if ":" in address else socket.AF_INET, address)]
    else:  # every interface: IPv6 and IPv4 on one socket, or IPv4 alone
        places = [(socket.AF_INET6, "::"), (socket.AF_INET, "")]
    for k, (family, where) in enumerate(places):
        try:
            sock = socket.socket(family, socket.SOCK_STREAM)
        except OSError:
            continue
        try:
            if family == socket.AF_INET6 and not address:
                sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
            # As JAX's server does: a port left in TIME_WAIT by an earlier run is free.
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind((where, port))
            sock.listen(64)
            return sock
        except OSError as exc:
            sock.close()
            if exc.errno == errno.EADDRINUSE:
                return None
            if k + 1 < len(places):  # no IPv6 here: IPv4 alone
                continue
            if exc.errno == errno.EADDRNOTAVAIL:
                raise JoinError(
                    f"--coordinator {host}:{port}: {host} is not an address of this machine; "
                    "start process 0 on the machine that --coordinator names"
                ) from None
            raise JoinError(f"--coordinator {host}:{port}: cannot listen: {exc.strerror}") from None
    raise JoinError(f"--coordinator {host}:{port}: cannot open a socket")


def _send(sock, **message):
    sock.sendall(_encode({"protocol": _PROTOCOL, **message}))


def _receive(sock, deadline):
    """The next message on ``sock`` before ``deadline``: a dict, "eof", "timeout" or "foreign"."""
    line = b""
    while not line.endswith(b"\n"):
        left = deadline - time.monotonic()
        if left <= 0:
            return "timeout"
        sock.settimeout(left)
        try:
            chunk = sock.recv(1)  # one line, nothing past it (the link reads on later)
        except TimeoutError:
            return "timeout"
        except OSError:
            return "eof"
        if not chunk:
            return "eof" if not line else "foreign"
        line += chunk
        if len(line) > _MAX_LINE:
            return "foreign"
    try:
        message = json.loads(line)
    except ValueError:
        return "foreign"
    if not isinstance(message, dict) or message.get("kind") != _KIND:
        return "foreign"
    return message


def _hello(message):
    """The :class:`Hello` in ``message``, or None when it is not one."""
    try:
        return Hello(
            str(message["version"]),
            int(message["num_processes"]),
            int(message["process_id"]),
            dict(message["options"]),
            str(message["data"]),
        )
    except (KeyError, TypeError, ValueError):
        return None


def meet(host, port, hello, timeout, token=None):
    """Meet the other processes of ``hello``'s run at ``host:port``; a :class:`Link` to them.

    Process 0 listens and waits up to ``timeout`` seconds for every other
    process; the others connect (retrying until ``timeout``) and wait for its
    answer. Each side first proves it knows ``token`` (bytes; None only on a
    loopback coordinator). Raises :class:`JoinError` on every process the
    problem reaches.
    """
    key = _check_token(host, port, token)
    if hello.process_id == 0:
        return _serve(host, port, hello, timeout, key)
    return _join(host, port, hello, timeout, key)


@dataclasses.dataclass
class _Pending:
    """A connection process 0 is still checking."""

    nonce: str  # process 0's challenge
    deadline: float
    line: bytes = b""
    proven: bool = False  # it proved the token; its hello comes next


def _serve(host, port, hello, timeout, key):
    n = hello.num_processes
    sock = _listener(host, port)
    if sock is None:  # the port is taken: by another process 0 of this run, or not
        raise JoinError(_taken(host, port, hello, key))
    deadline = time.monotonic() + timeout
    peers = {}
    pending = {}  # socket -> _Pending, oldest first
    refused = 0  # connections that did not prove the token
    try:
        sock.setblocking(False)
        while len(peers) < n - 1:
            now = time.monotonic()
            for conn in [c for c, p in pending.items() if p.deadline <= now]:
                del pending[conn]
                conn.close()  # too slow to prove the token and say hello: dropped
            if now >= deadline:
                missing = ", ".join(str(i) for i in range(1, n) if i not in peers)
                problem = (
                    f"only {len(peers) + 1} of {n} processes joined within {timeout:g} s "
                    f"(missing: process {missing}); start each with the same --coordinator and "
                    "--num-processes, or raise --join-timeout"
                )
                if refused:
                    problem += f" ({refused} connection(s) refused for a wrong or missing token)"
                for conn in peers.values():
                    _refuse(conn, f"process 0 gave up: {problem}")
                raise JoinError(problem)
            wait = min([deadline, *(p.deadline for p in pending.values())]) - now
            ready, _, _ = select.select([sock, *pending], [], [], max(wait, 0.0))
            for conn in ready:
                if conn is sock:
                    _admit(sock, pending)
                    continue
                state = pending[conn]
                message = _read_line(conn, state)
                if message is None:  # more to come
                    continue
                if message == "drop":  # closed, or not one of ours (a port scan): ignored
                    del pending[conn]
                    conn.close()
                elif not state.proven:
                    theirs, proof = _nonce(message), message.get("proof")
                    if theirs is not None and isinstance(proof, str):
                        peer_proof, root_proof = _proofs(key, state.nonce, theirs)
                        state.proven = hmac.compare_digest(proof.encode(), peer_proof.encode())
                    if state.proven:
                        _send_soon(conn, _encode({"proof": root_proof}))
                    else:
                        refused += 1
                        del pending[conn]
                        conn.setblocking(True)
                        conn.settimeout(1.0)
                        _refuse(
                            conn,
                            f"process 0 refused this process: wrong or missing token; {TOKEN_HELP}",
                        )
                else:
                    del pending[conn]
                    peer = _hello(message)
                    if peer is None:
                        conn.close()
                        continue
                    conn.setblocking(True)
                    conn.settimeout(_HANDSHAKE)
                    problem = peer.problem(hello, peers)
                    if problem is not None:
                        for c in (conn, *peers.values()):
                            _refuse(c, problem)
                        raise JoinError(problem)
                    peers[peer.process_id] = conn
        for i, conn in peers.items():
            try:
                _send(conn, ok=True)
            except OSError:
                problem = f"process {i} left before the run started"
                for c in peers.values():
                    _refuse(c, problem)
                raise JoinError(problem) from None
    except BaseException:
        for conn in peers.values():
            conn.close()
        raise
    finally:
        for conn in pending:
            conn.close()
        sock.close()
    return Link(peers, is_root=True)


def _admit(sock, pending):
    """Accept a connection on ``sock`` and challenge it (nothing else is said before its proof)."""
    try:
        conn, _ = sock.accept()
    except (BlockingIOError, InterruptedError, ConnectionAbortedError):
        return
    conn.setblocking(False)
    if len(pending) >= _MAX_PENDING:  # a flood of silent connections: the oldest goes
        oldest = next(iter(pending))
        del pending[oldest]
        oldest.close()
    state = _Pending(secrets.token_hex(32), time.monotonic() + _HANDSHAKE)
    pending[conn] = state
    _send_soon(conn, _encode({"protocol": _PROTOCOL, "challenge": state.nonce}))


def _read_line(conn, state):
    """The message ``conn`` completed (a dict), None while the line goes on, or "drop"."""
    while True:
        try:
            chunk = conn.recv(1)  # one line, nothing past it (the link reads on later)
        except (BlockingIOError, InterruptedError):
            return None
        except OSError:
            return "drop"
        if not chunk:
            return "drop"
        state.line += chunk
        if chunk == b"\n":
            break
        if len(state.line) > _MAX_LINE:
            return "drop"
    line, state.line = state.line, b""
    try:
        message = json.loads(line)
    except ValueError:
        return "drop"
    if not isinstance(message, dict) or message.get("kind") != _KIND:
        return "drop"
    return message


def _refuse(conn, problem):
    try:
        _send(conn, ok=False, error=problem)
    except OSError:
        pass
    conn.close()


def _prove(conn, key, deadline):
    """Prove the token ``key`` to the process 0 on ``conn`` and check its proof.

    Returns None when both proved it, else the reply that was not a proof (a
    dict with an ``error``, "timeout", "eof" or "foreign").
    """
    challenge = _receive(conn, deadline)
    ours = _nonce(challenge)
    if ours is None:
        return challenge
    theirs = secrets.token_hex(32)
    mine, root = _proofs(key, ours, theirs)
    _send(conn, challenge=theirs, proof=mine)
    reply = _receive(conn, deadline)
    proof = reply.get("proof") if isinstance(reply, dict) else None
    if isinstance(proof, str) and hmac.compare_digest(proof.encode(), root.encode()):
        return None
    return reply if isinstance(reply, dict) and reply.get("error") else "unproven"


def _taken(host, port, hello, key):
    """Why process 0 cannot listen on a port in use: another process 0, or another program."""
    reply = None
    try:
        with socket.create_connection((host.strip("[]"), port), timeout=5.0) as conn:
            # another process 0 of this run answers at once
            if _prove(conn, key, time.monotonic() + 2.0) is None:
                _send(conn, **dataclasses.asdict(hello))
                reply = _receive(conn, time.monotonic() + 2.0)
    except OSError:
        pass
    if isinstance(reply, dict) and reply.get("error"):
        return str(reply["error"])
    return (
        f"--coordinator {host}:{port}: port {port} is already in use (by another program, or a "
        "run in progress); choose a free port"
    )


def _join(host, port, hello, timeout, key):
    deadline = time.monotonic() + timeout
    address = (host.strip("[]"), port)
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            raise JoinError(
                f"no process 0 answered at {host}:{port} within {timeout:g} s; start process 0 "
                "(--process-id 0) with the same --coordinator, or raise --join-timeout"
            )
        try:
            conn = socket.create_connection(address, timeout=min(left, 5.0))
            break
        except socket.gaierror as exc:
            raise JoinError(f"--coordinator {host}:{port}: unknown host ({exc.strerror})") from None
        except OSError:  # nobody listens yet: process 0 may start later
            time.sleep(min(0.2, max(left, 0)))
    try:
        # Nothing about this run (versions, options, data) goes out before process 0
        # proved it knows the token.
        reply = _prove(conn, key, time.monotonic() + timeout + 5.0)
        if reply is None:
            _send(conn, **dataclasses.asdict(hello))
            # Process 0 answers once every process came, within its own timeout.
            reply = _receive(conn, time.monotonic() + timeout + 5.0)
    except OSError:
        reply = "eof"
    if isinstance(reply, dict) and reply.get("ok"):
        return Link({0: conn}, is_root=False)
    conn.close()
    if isinstance(reply, dict):
        raise JoinError(str(reply.get("error", "process 0 refused this process")))
    if reply == "timeout":
        raise JoinError(
            f"{host}:{port} accepted the connection but did not answer as a jaxtests process 0 "
            f"within {timeout + 5:g} s (another program listens there?); check --coordinator"
        )
    if reply == "unproven":
        raise JoinError(
            f"the process 0 at {host}:{port} did not prove that it knows this run's token "
            f"(another run's, or another program?); check --coordinator, and {TOKEN_HELP}"
        )
    raise JoinError(
        f"{host}:{port} is not a jaxtests process 0 waiting for its peers (another program "
        "listens there, a run already started, or an older jaxtests); check --coordinator"
    )


class Link:
    """The open connections of a run: process 0 to every peer, a peer to process 0.

    :meth:`watch` starts a thread that sends a beat every second and ends
    this process (one line on stderr, exit status 2) when a peer's
    connection closes before the peer said it finished, when a peer is
    silent for ``silence`` seconds, or when a peer reports a failure (process
    0 then tells the others); :meth:`leave` says how this process finished.
    """

    def __init__(self, conns, is_root):
        self.conns = dict(conns)  # process id -> socket
        self.is_root = is_root
        self.finished = set()  # peers that said they finished
        self.done = False  # this process finished
        self.lock = threading.Lock()

    def watch(self, silence):
        """Start the watching thread (a daemon: it never keeps the process alive)."""
        for conn in self.conns.values():
            conn.setblocking(False)
        threading.Thread(target=self._run, args=(silence,), daemon=True).start()

    def leave(self, status, message=None):
        """This process finished with exit status ``status`` (``message``: its error line).

        On success the connections stay open until the process exits, and
        a peer seeing them close then knows it was the end. On failure the
        peers are told and this process ends now with ``status``: JAX's
        shutdown would wait for peers that are stopping too.
        """
        with self.lock:
            self.done = True
            if status == 0:
                self._tell(done=True)
                return
            text = message or f"exit status {status}"
            self._tell(
                **({"abort": f"process 0 failed: {text}"} if self.is_root else {"fail": text})
            )
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(status)

    def settle(self, seconds=2 * _BEAT):
        """Wait ``seconds`` for the watching thread to see a peer that stopped.

        A collective whose peer was killed fails in this process at about the
        moment the peer's connection closes; the peer's end, not that failure,
        is the error to report, and the watcher reports it (and exits) within
        a quarter beat of the close. Returns if no peer stopped.
        """
        if self.conns:
            time.sleep(seconds)

    def _tell(self, **message):
        data = _encode(message)
        for conn in self.conns.values():
            _send_soon(conn, data)

    def _stop(self, problem):
        """End this process on ``problem`` (process 0 first tells the other peers)."""
        with self.lock:
            if self.is_root:
                self._tell(abort=problem)
        # On its own line: a progress bar may hold the terminal's current one.
        start = "\n" if sys.stderr.isatty() else ""
        print(f"{start}jaxtests: error: {problem}", file=sys.stderr, flush=True)
        os._exit(2)

    def _run(self, silence):
        heard = {i: time.monotonic() for i in self.conns}
        buffers = {i: b"" for i in self.conns}
        last_beat = -_BEAT
        while True:
            if time.monotonic() - last_beat >= _BEAT:
                with self.lock:
                    self._tell(beat=True)
                last_beat = time.monotonic()
            waiting = {c: i for i, c in self.conns.items() if i not in self.finished}
            if not waiting and self.done:
                return
            ready, _, _ = select.select(list(waiting), [], [], _BEAT / 4)
            for conn in ready:
                i = waiting[conn]
                try:
                    chunk = conn.recv(65536)
                except BlockingIOError:
                    continue
                except OSError:
                    chunk = b""
                if not chunk:
                    if i not in self.finished:
                        self._stop(f"process {i} stopped before the end of the run")
                    continue
                heard[i] = time.monotonic()
                *lines, buffers[i] = (buffers[i] + chunk).split(b"\n")
                for line in lines:
                    self._message(i, line)
            now = time.monotonic()
            for i in waiting.values():
                if i not in self.finished and now - heard[i] > silence:
                    self._stop(f"process {i} sent nothing for {silence:g} s (hung or cut off)")

    def _message(self, i, line):
        try:
            message = json.loads(line)
        except ValueError:
            return
        if not isinstance(message, dict):
            return
        if message.get("done"):
            self.finished.add(i)
        elif "fail" in message:  # a peer's own error (process 0 hears these)
            self._stop(f"process {i} failed: {message['fail']}")
        elif "abort" in message:  # process 0 stops the run
            self._stop(str(message["abort"]))


def _encode(message):
    return json.dumps({"kind": _KIND, **message}).encode() + b"\n"


def _send_soon(conn, data, timeout=1.0):
    """Send ``data`` on a non-blocking ``conn`` within ``timeout`` s; a peer gone is ignored."""
    deadline = time.monotonic() + timeout
    while data:
        try:
            data = data[conn.send(data) :]
        except BlockingIOError:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([], [conn], [], left)[1]:
                return
        except OSError:
            return
