"""The listening socket: every accepted connection has Nagle's algorithm off."""

import socket

from serving.sockets import listen


def test_accepted_connections_send_without_waiting_for_acks():
    with (
        listen("127.0.0.1", 0) as listening,
        socket.create_connection(listening.getsockname()[:2]),
    ):
        accepted, _ = listening.accept()
        with accepted:
            assert accepted.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) != 0
