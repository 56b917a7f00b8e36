"""numpy when it can be imported, plain lists otherwise: every function that returns numbers goes through here."""

import array
import struct
import sys

try:
    import numpy as np
except ImportError:  # numpy is optional
    np = None

HAVE_NUMPY = np is not None

_CODES = {4: ('I', '<u4'), 8: ('Q', '<u8')}


def _array_code(width):
    code = _CODES[width][0]
    if array.array(code).itemsize != width:  # 'I' and 'Q' are 4 and 8 bytes on every platform Python runs on
        raise RuntimeError('unexpected C integer sizes')
    return code


def uints(buf, offset, count, width):
    """count little-endian unsigned integers of width bytes at offset: a numpy array (read-only view of buf)
    or a list."""
    if np is not None:
        return np.frombuffer(buf, dtype=_CODES[width][1], count=count, offset=offset)
    a = array.array(_array_code(width))
    a.frombytes(memoryview(buf)[offset:offset + count * width])
    if sys.byteorder != 'little':
        a.byteswap()
    return a.tolist()


def matrix(buf, offset, rows, cols, width):
    """rows x cols little-endian unsigned integers, row-major: a 2-D numpy array or a list of lists."""
    flat = uints(buf, offset, rows * cols, width)
    if np is not None:
        return flat.reshape(rows, cols)
    return [flat[i * cols:(i + 1) * cols] for i in range(rows)]


def bools(values):
    """A numpy bool array or a list of bool."""
    if np is not None:
        return np.array(values, dtype=bool)
    return [bool(v) for v in values]


def ints(values, dtype='int64'):
    if np is not None:
        return np.array(values, dtype=dtype)
    return [int(v) for v in values]


def u64_list(values):
    """Python ints (all < 2^64) as a numpy uint64 array or a list."""
    if np is not None:
        return np.array(values, dtype=np.uint64)
    return list(values)


def u32_at(buf, offset):
    return struct.unpack_from('<I', buf, offset)[0]


def u64_at(buf, offset):
    return struct.unpack_from('<Q', buf, offset)[0]
