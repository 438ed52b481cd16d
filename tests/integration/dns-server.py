#!/usr/bin/python3
"""A test nameserver for test-egress-dns: answers A queries for every name
under .test with one address (TTL 300), alias.NAME.test with a CNAME to
real.NAME.test first, other types with no records, and nx.test with NXDOMAIN.
Usage: dns-server.py LISTEN_ADDR ANSWER_ADDR"""
import socket
import struct
import sys


def name_end(msg, off):
    while msg[off]:
        off += 1 + msg[off]
    return off + 1


def encode(name):
    return b"".join(bytes([len(l)]) + l.encode() for l in name.split(".")) + b"\0"


def answer(msg, addr):
    qid, _, qd = struct.unpack("!HHH", msg[:6])
    end = name_end(msg, 12)
    labels, off = [], 12
    while msg[off]:
        labels.append(msg[off + 1:off + 1 + msg[off]].decode())
        off += 1 + msg[off]
    name = ".".join(labels).lower()
    qtype = struct.unpack("!H", msg[end:end + 2])[0]
    question = msg[12:end + 4]
    rcode, records = 0, b""
    count = 0
    if name == "nx.test" or not name.endswith(".test"):
        rcode = 3
    elif qtype == 1:
        owner = b"\xc0\x0c"
        if labels[0] == "alias":
            target = "real." + ".".join(labels[1:])
            rdata = encode(target)
            records += owner + struct.pack("!HHIH", 5, 1, 300, len(rdata)) + rdata
            owner = encode(target)
            count += 1
        records += owner + struct.pack("!HHIH", 1, 1, 300, 4) + socket.inet_aton(addr)
        count += 1
    header = struct.pack("!HHHHHH", qid, 0x8180 | rcode, 1, count, 0, 0)
    return header + question + records


def main():
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind((sys.argv[1], 53))
    while True:
        msg, peer = s.recvfrom(4096)
        try:
            s.sendto(answer(msg, sys.argv[2]), peer)
        except (IndexError, struct.error, UnicodeDecodeError):
            pass


main()
