"""CRC-32C (Castagnoli), as docs/FORMAT.md section 2 defines it: reflected polynomial 0x82F63B78, initial and
final XOR 0xFFFFFFFF; crc32c(b"123456789") == 0xE3069283.

Pure Python, table-driven, four bytes a step ("slicing by 4"): about 5 MB per second. The readers check a
payload's CRC by default; pass verify=False to them for large trusted files.
"""

import sys

_POLY = 0x82F63B78


def _tables():
    t0 = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ _POLY if c & 1 else c >> 1
        t0.append(c)
    tables = [t0]
    for _ in range(3):
        prev = tables[-1]
        tables.append([(prev[i] >> 8) ^ t0[prev[i] & 0xFF] for i in range(256)])
    return [tuple(t) for t in tables]


_T0, _T1, _T2, _T3 = _tables()
_LITTLE = sys.byteorder == 'little'


def crc32c(data, crc=0):
    """The CRC-32C of data (bytes-like), continuing from crc (the value of the bytes before it)."""
    mv = memoryview(data).cast('B')
    c = crc ^ 0xFFFFFFFF
    n = len(mv)
    head = n - n % 4
    t0, t1, t2, t3 = _T0, _T1, _T2, _T3
    if head:
        words = mv[:head].cast('I') if _LITTLE else None
        if words is not None:
            for w in words:
                c ^= w
                c = t3[c & 0xFF] ^ t2[(c >> 8) & 0xFF] ^ t1[(c >> 16) & 0xFF] ^ t0[c >> 24]
        else:
            for i in range(0, head, 4):
                c ^= mv[i] | (mv[i + 1] << 8) | (mv[i + 2] << 16) | (mv[i + 3] << 24)
                c = t3[c & 0xFF] ^ t2[(c >> 8) & 0xFF] ^ t1[(c >> 16) & 0xFF] ^ t0[c >> 24]
    for i in range(head, n):
        c = t0[(c ^ mv[i]) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF

