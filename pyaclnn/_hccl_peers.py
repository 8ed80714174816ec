"""Which rank a gloo failure is about. gloo names the peer of a broken connection by its socket address only
("Connection closed by peer [127.0.0.1]:55989"), and that address is either the peer's listening address (when
this rank connected to it) or the peer's ephemeral end (when the peer connected here). Both are learnt once the
communicator is connected: the listening addresses from gloo's own rendezvous records in the store, the
ephemeral ends from each rank's own sockets (Linux /proc), published in the store. Best effort: anything that
cannot be read leaves the address unmapped, and the message keeps gloo's address."""
from __future__ import annotations

import ipaddress
import json
import os
import re
import struct

_PEER = re.compile(r"\[([0-9A-Fa-f:.]+)\]:(\d+)")
_ENDS_KEY = "pyaclnn-hccl-ends/"


def _norm(ip: str, port: int):
    addr = ipaddress.ip_address(ip)
    if addr.version == 6 and addr.ipv4_mapped is not None:
        addr = addr.ipv4_mapped
    return (str(addr), int(port))


def _listener(record: bytes):
    """gloo's rendezvous record of one rank (torch's gloo: u64 hostname length, hostname, u64 address length,
    the listener's sockaddr, ...): its (ip, port), or None."""
    (host_len,) = struct.unpack_from("<Q", record, 0)
    at = 8 + host_len + 8
    (family,) = struct.unpack_from("<H", record, at)
    (port,) = struct.unpack_from(">H", record, at + 2)
    if family == 2:    # AF_INET
        return _norm(str(ipaddress.IPv4Address(record[at + 4:at + 8])), port)
    if family == 10:   # AF_INET6
        return _norm(str(ipaddress.IPv6Address(record[at + 8:at + 24])), port)
    return None


def _proc_addr(text: str):
    """An address of /proc/net/tcp{,6} ("0100007F:AD11": 32-bit words in host order) as (ip, port)."""
    hexip, hexport = text.split(":")
    raw = bytes.fromhex(hexip)
    raw = b"".join(raw[i:i + 4][::-1] for i in range(0, len(raw), 4))
    ip = ipaddress.IPv4Address(raw) if len(raw) == 4 else ipaddress.IPv6Address(raw)
    return _norm(str(ip), int(hexport, 16))


def _own_connections():
    """(local, remote) of this process's established TCP sockets."""
    inodes = set()
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[8:-1])
    out = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(table, encoding="ascii") as fh:
                rows = fh.read().splitlines()[1:]
        except OSError:
            continue
        for row in rows:
            f = row.split()
            if len(f) > 9 and f[3] == "01" and f[9] in inodes:   # 01: ESTABLISHED
                out.append((_proc_addr(f[1]), _proc_addr(f[2])))
    return out


def learn(store, rank: int, size: int) -> dict:
    """After the process group is connected: {(ip, port): rank} for the other ranks of this communicator. `store`
    is the communicator's prefixed store (gloo's records are under "0/<rank>")."""
    try:
        listeners = {}
        for r in range(size):
            address = _listener(bytes(store.get(f"0/{r}")))
            if address is not None:
                listeners[address] = r
        # the ends of the connections this rank opened to the others' listeners are what they will see of it
        mine = [local for local, remote in _own_connections() if listeners.get(remote, rank) != rank]
        store.set(_ENDS_KEY + str(rank), json.dumps(mine))
        store.wait([_ENDS_KEY + str(r) for r in range(size)])
        ends, seen = {}, {}
        for r in range(size):
            for ip, port in json.loads(store.get(_ENDS_KEY + str(r))):
                seen[(ip, port)] = seen.get((ip, port), 0) + 1
                ends[(ip, port)] = r
        # ranks that are threads of one process see each other's sockets: an end two ranks claim names nobody
        ends = {k: r for k, r in ends.items() if seen[k] == 1}
        ends.update(listeners)
        return {k: r for k, r in ends.items() if r != rank}
    except Exception:  # noqa: BLE001 - a record in another format: the messages keep gloo's addresses
        return {}


def peer_of(message: str, peers: dict):
    """The rank gloo's message is about, or None."""
    for ip, port in _PEER.findall(message):
        port = int(port)
        # torch 2.13's gloo prints the port in network byte order (measured: 43047 shows as 10152); both are tried
        for candidate in (port, ((port & 0xFF) << 8) | (port >> 8)):
            try:
                r = peers.get(_norm(ip, candidate))
            except ValueError:
                break
            if r is not None:
                return r
    return None
