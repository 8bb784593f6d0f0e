"""The client network a request counts against: an IPv4 address, or the /64 network of an IPv6 address.

One IPv6 host is usually given a whole /64, so counting single IPv6 addresses would let one machine
take a fresh quota with every address it picks. No Django import: plain rules, tested on their own.
"""

from __future__ import annotations

import ipaddress

IPV6_PREFIX = 64


def client_network(address: str) -> str:
    """'203.0.113.9' for an IPv4 address, '2001:db8:1:2::/64' for any IPv6 address in that /64; '' if none."""
    try:
        parsed = ipaddress.ip_address((address or "").strip())
    except ValueError:
        return ""
    if isinstance(parsed, ipaddress.IPv6Address):
        if parsed.ipv4_mapped is not None:
            return str(parsed.ipv4_mapped)
        return str(ipaddress.IPv6Network(f"{parsed}/{IPV6_PREFIX}", strict=False))
    return str(parsed)
