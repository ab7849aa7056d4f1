"""The server's listening socket, with Nagle's algorithm off for every connection.

asyncio turns Nagle's algorithm off only on sockets it creates itself (it checks the protocol
number, which a socket from ``socket.create_server`` leaves 0); on a socket given to Uvicorn it
stays on, and a response's body, written after its headers, waits for the client's delayed ACK:
about 40 ms added to every request. Accepted connections inherit the listening socket's option.

Example:
    >>> listening = listen("127.0.0.1", 0)
    >>> uvicorn.Server(config).run(sockets=[listening])
"""

from __future__ import annotations

import socket


def listen(host: str, port: int) -> socket.socket:
    """A TCP socket listening on ``host:port`` (0: any free port), TCP_NODELAY set; OSError if
    the address cannot be used."""
    listening = socket.create_server((host, port))
    listening.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return listening
