"""Where an accepted connection waits for its request: in one thread's selector, not in a thread of its own. Only once
its request head has arrived (the blank line after the headers) does it take one of ``workers`` handler threads. So
an idle or slow-sending connection (a slow-loris) costs a socket, not a thread: thousands of them neither spawn
thousands of threads nor keep the next real request waiting, since a real client sends its head at once.

Bounds: a connection whose head is not complete ``timeout`` seconds after its accept is closed unanswered. One whose
head is complete waits for a free handler as long as it takes (a handler is bounded too: each write of an answer
gets ``timeout`` seconds). At most ``capacity`` connections wait: a new one beyond that closes the idle one that has
waited longest (a real client sends its request at once, so it leaves before the idle ones), or, when every waiting
one has its request complete (the server is saturated), the new one is closed unanswered."""

from __future__ import annotations

import collections
import contextlib
import io
import selectors
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

HEAD_END = (b"\r\n\r\n", b"\n\n")
HEAD_LIMIT = 64 * 1024  # handed over even without its end: http.server refuses a longer line or too many headers
CHUNK = 16 * 1024


@dataclass(eq=False)
class Arrival:
    """An accepted connection, the bytes it sent so far and the monotonic time its head must be complete by."""

    sock: socket.socket
    address: tuple
    deadline: float
    head: bytearray = field(default_factory=bytearray)

    def complete(self) -> bool:
        return any(end in self.head for end in HEAD_END) or len(self.head) >= HEAD_LIMIT


class HeadReader(io.RawIOBase):
    """The request's bytes for ``http.server``'s ``rfile``: those the room read first, then the socket's, each read
    within what is left of the arrival's deadline (so no byte-a-second sender holds a handler past it)."""

    def __init__(self, arrival: Arrival, *, timeout: float) -> None:
        self.arrival, self.timeout, self.pending = arrival, timeout, memoryview(bytes(arrival.head))

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        if self.pending:
            size = min(len(buffer), len(self.pending))
            buffer[:size], self.pending = self.pending[:size], self.pending[size:]
            return size
        left = self.arrival.deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("the request head did not arrive in time")
        sock = self.arrival.sock
        sock.settimeout(left)
        try:
            return sock.recv_into(buffer)
        finally:
            sock.settimeout(self.timeout)  # what each write of the answer gets


class WaitingRoom:
    """Holds accepted connections until their head is complete, then runs ``handle(arrival)`` in a daemon thread,
    at most ``workers`` at once. ``handle`` owns the socket from then on (closes it)."""

    def __init__(self, *, handle: Callable[[Arrival], None], workers: int, capacity: int, timeout: float) -> None:
        self.handle, self.timeout, self.capacity = handle, timeout, capacity
        self.free = threading.BoundedSemaphore(workers)
        self.selector = selectors.DefaultSelector()
        self.incoming: collections.deque[Arrival] = collections.deque()
        self.waiting: dict[socket.socket, Arrival] = {}  # by accept time: the first waited longest
        self.ready: collections.deque[Arrival] = collections.deque()
        self.wake_in, self.wake_out = socket.socketpair()
        self.wake_in.setblocking(False)
        self.wake_out.setblocking(False)
        self.selector.register(self.wake_in, selectors.EVENT_READ)
        self.closing = False
        self.thread = threading.Thread(target=self._run, name="dialogbench-serve-room", daemon=True)
        self.thread.start()

    def admit(self, sock: socket.socket, address: tuple) -> None:
        """Take an accepted connection (from the accepting thread)."""
        sock.setblocking(False)
        self.incoming.append(Arrival(sock, address, time.monotonic() + self.timeout))
        self._wake()

    def close(self) -> None:
        """Stop waiting: every connection still here is closed (those being answered finish on their own)."""
        self.closing = True
        self._wake()
        self.thread.join(timeout=5)

    def _wake(self) -> None:
        with contextlib.suppress(OSError):  # full (a wake is pending anyway) or closed (the room is gone)
            self.wake_out.send(b"\0")

    def _run(self) -> None:
        try:
            while not self.closing:
                self._take_incoming()
                self._hand_over()
                for key, _ in self.selector.select(self._expire()):
                    if key.fileobj is self.wake_in:
                        with contextlib.suppress(OSError):
                            self.wake_in.recv(4096)
                    else:
                        self._read(key.data)
        finally:
            for arrival in [*self.incoming, *self.waiting.values(), *self.ready]:
                _close(arrival.sock)
            self.selector.close()
            self.wake_in.close()
            self.wake_out.close()

    def _take_incoming(self) -> None:
        while self.incoming:
            arrival = self.incoming.popleft()
            if len(self.waiting) + len(self.ready) >= self.capacity:
                if not self.waiting:  # saturated: every one waiting is a complete request
                    _close(arrival.sock)
                    continue
                self._drop(next(iter(self.waiting.values())))
            self.waiting[arrival.sock] = arrival
            self.selector.register(arrival.sock, selectors.EVENT_READ, arrival)

    def _read(self, arrival: Arrival) -> None:
        try:
            data = arrival.sock.recv(CHUNK)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            data = b""
        if not data:  # the client hung up before asking
            self._drop(arrival)
            return
        arrival.head += data
        if arrival.complete():
            self.selector.unregister(arrival.sock)
            del self.waiting[arrival.sock]
            self.ready.append(arrival)

    def _hand_over(self) -> None:
        while self.ready and self.free.acquire(blocking=False):
            arrival = self.ready.popleft()
            threading.Thread(target=self._work, args=(arrival,), name="dialogbench-serve", daemon=True).start()

    def _work(self, arrival: Arrival) -> None:
        try:
            self.handle(arrival)
        finally:
            self.free.release()
            self._wake()  # a handler is free: the next complete request may go

    def _expire(self) -> float | None:
        """Close every connection still sending its head past its deadline; the seconds until the next one's
        (``None``: none is sending). The first to wait has the first deadline: each is its accept time + timeout."""
        now = time.monotonic()
        while self.waiting and (first := next(iter(self.waiting.values()))).deadline <= now:
            self._drop(first)
        return max(0.0, next(iter(self.waiting.values())).deadline - now) if self.waiting else None

    def _drop(self, arrival: Arrival) -> None:
        self.selector.unregister(arrival.sock)
        del self.waiting[arrival.sock]
        _close(arrival.sock)


def _close(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):
        sock.close()
