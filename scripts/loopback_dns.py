#!/usr/bin/env python3
"""A DNS server on loopback that answers every A query with 127.0.0.1.

For scripts/schemathesis.sh: with it as FENIX_DNS_SERVERS (and 127.0.0.1/32
allowed), any https URL that schemathesis registers resolves, so endpoints,
deliveries and their attempts exist for the fuzzer to reach, while every query
and every delivery stays on loopback (port 443, where nothing listens: the
attempts fail fast with "connection refused"). AAAA and other queries get an
empty answer.

Prints the UDP port it listens on, then serves until killed.
"""

import socket
import struct
import sys

A, IN = 1, 1


def answer(query: bytes) -> bytes | None:
    if len(query) < 12:
        return None
    ident, flags, qdcount = struct.unpack("!HHH", query[:6])
    if flags & 0x8000 or qdcount != 1:
        return None
    # The question: labels up to the zero byte, then type and class.
    end = 12
    while end < len(query) and query[end] != 0:
        end += 1 + query[end]
    end += 5
    if end > len(query):
        return None
    question = query[12:end]
    qtype, qclass = struct.unpack("!HH", question[-4:])
    records = b""
    if qtype == A and qclass == IN:
        # Name as a pointer to the question (offset 12), TTL 60 s, 127.0.0.1.
        records = struct.pack("!HHHIH", 0xC00C, A, IN, 60, 4) + socket.inet_aton("127.0.0.1")
    # Response, recursion desired copied, recursion available, no error.
    reply_flags = 0x8000 | (flags & 0x0100) | 0x0080
    header = struct.pack("!HHHHHH", ident, reply_flags, 1, 1 if records else 0, 0, 0)
    return header + question + records


def main() -> None:
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.bind(("127.0.0.1", 0))
    print(sock.getsockname()[1], flush=True)
    while True:
        query, peer = sock.recvfrom(4096)
        reply = answer(query)
        if reply is not None:
            sock.sendto(reply, peer)


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        sys.exit(0)
