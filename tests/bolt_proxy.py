"""A TCP proxy in front of the test Bolt server that can fail the way a server or a network
does, mid-command: a test double of the network, not of the database (every statement still
runs on the real server behind it).

    with BoltProxy(host, port) as proxy:       # bolt://127.0.0.1:{proxy.port} reaches the server
        proxy.die_on_next_run()                # the server "dies" when the next query is sent:
                                               # every connection closed, new ones refused
        proxy.drop_after_commit()              # the next COMMIT of a write transaction
                                               # reaches the server and commits; the
                                               # connection is cut before its reply reaches
                                               # the client (outcome unknown)

Bolt frames its messages in chunks (a 2-byte size, then data; a zero size ends a message); a
message is a PackStream struct whose second byte is its signature (RUN 0x10, BEGIN 0x11,
COMMIT 0x12). COMMIT has no fields, so it is always the chunk `00 02 B0 12` and the end
marker `00 00`; a read transaction's BEGIN carries `{mode: "r"}` in its one field.
"""

from __future__ import annotations

import socket
import threading
from contextlib import suppress
from types import TracebackType

COMMIT = b"\x00\x02\xb0\x12\x00\x00"
RUN = b"\xb3\x10"  # a RUN struct (query, parameters, extra) at the start of a chunk's data
BEGIN = b"\xb1\x11"
READ_MODE = b"\x84mode\x81r"  # the map entry mode: "r" (PackStream tiny strings)


class BoltProxy:
    def __init__(self, host: str, port: int):
        self.upstream = (host, port)
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]
        self._lock = threading.Lock()
        self._sockets: list[socket.socket] = []
        self._die_on_run = self._drop_after_commit = False
        self._cut_on_reply: set[socket.socket] = set()  # servers whose next reply is cut
        self._reading: set[socket.socket] = set()  # servers in a read transaction
        self.commits_dropped = 0
        self._accepting = threading.Thread(target=self._accept, daemon=True)
        self._accepting.start()

    @property
    def uri(self) -> str:
        return f"bolt://127.0.0.1:{self.port}"

    def die_on_next_run(self) -> None:
        with self._lock:
            self._die_on_run = True

    def drop_after_commit(self) -> None:
        with self._lock:
            self._drop_after_commit = True

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return  # closed: the server is "dead", new connections are refused
            server = socket.create_connection(self.upstream)
            with self._lock:
                self._sockets += [client, server]
            threading.Thread(target=self._pump, args=(client, server, True), daemon=True).start()
            threading.Thread(target=self._pump, args=(server, client, False), daemon=True).start()

    def _pump(self, source: socket.socket, target: socket.socket, from_client: bool) -> None:
        cut = (source, target)
        try:
            while data := source.recv(65536):
                if from_client and (cut := self._client_data(data, source, target)):
                    return
                if not from_client and source in self._cut_on_reply:
                    return  # the COMMIT's reply: the server has committed; the client never knows
                target.sendall(data)
        except OSError:
            pass
        finally:
            for sock in cut:
                _close(sock)

    def _client_data(self, data: bytes, client: socket.socket, server: socket.socket
                     ) -> tuple[socket.socket, ...]:
        """The sockets to close when the connection is cut here (none: forward `data`)."""
        with self._lock:
            if self._die_on_run and RUN in data:
                self._die_on_run = False
                self._die()
                return (client, server)
            if BEGIN in data:
                if READ_MODE in data:
                    self._reading.add(server)
                else:
                    self._reading.discard(server)
            if self._drop_after_commit and COMMIT in data and server not in self._reading:
                self._drop_after_commit = False
                self.commits_dropped += 1
                self._cut_on_reply.add(server)
        return ()

    def _die(self) -> None:
        _close(self._listener)  # shutdown wakes the accepting thread (close alone does not)
        for sock in self._sockets:
            _close(sock)

    def close(self) -> None:
        with self._lock:
            self._die()

    def __enter__(self) -> BoltProxy:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()


def _close(sock: socket.socket) -> None:
    with suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)
    sock.close()
