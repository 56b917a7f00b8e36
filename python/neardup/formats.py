"""Readers for the files neardup writes (docs/FORMAT.md), with the checks neardup's own readers make.

Binary files with the common 64-byte header (section 3): signatures `MHSG`, LSH indexes `LSHI`, SimHash
indexes `SIMH`, seen sets `PSEN`, a staged dedup's `clusters.rep` (`CLRP`); and the headerless formats of the
original tools: doubri's `.hash` and `.f` files, Onion's hash files. Plus the text outputs of `dedup`
(`--flags`, `--clusters`, `--pairs`, `--removed-ids`) and JSONL outputs in general.

Every reader takes the path of the file, reads it whole, and raises FormatError (a ValueError) naming the
file and the byte offset (or line) of the first thing that is wrong; UnsupportedVersionError for a version
newer than this package reads. verify=False skips the payload CRC-32C (pure Python: ~5 MB per second) and
nothing else. Numbers come back as numpy arrays when numpy can be imported, as lists otherwise.
"""

import json
import os
import struct
from collections import namedtuple

from . import _arrays
from ._arrays import u32_at, u64_at
from ._crc32c import crc32c

MAGIC = b'NDUP\r\n\x1a\n'
HEADER_SIZE = 64
_BOM = 0x01020304


class FormatError(ValueError):
    """A file that is not what its reader expects: .path, .offset (bytes; or None) and .line (or None)."""

    def __init__(self, path, what, offset=None, line=None):
        where = os.fspath(path)
        if line is not None:
            where += ':%d' % line
        if offset is not None:
            where += ': offset %d' % offset
        super().__init__('%s: %s' % (where, what))
        self.path = os.fspath(path)
        self.offset = offset
        self.line = line


class UnsupportedVersionError(FormatError):
    """A file of a newer version than this package reads."""


Header = namedtuple('Header', 'kind version flags params payload_size payload_crc')


def _read(path):
    with open(path, 'rb') as f:
        return f.read()


def parse_header(data, path, kinds, max_version, verify=True):
    """Checks the common header of data (the whole file) as docs/FORMAT.md section 3 says, in its order, and
    the payload CRC when verify. kinds: the accepted 4-letter kinds."""
    if len(data) < HEADER_SIZE:
        raise FormatError(path, 'file of %d bytes is shorter than the 64-byte header' % len(data), 0)
    if data[:8] != MAGIC:
        raise FormatError(path, 'not a neardup file (bad magic %r)' % bytes(data[:8]), 0)
    kind = bytes(data[8:12]).decode('latin-1')
    if kind not in kinds:
        raise FormatError(path, 'file kind %r, expected %s' % (kind, ' or '.join(repr(k) for k in kinds)), 8)
    if u32_at(data, 16) != _BOM:
        raise FormatError(path, 'bad byte-order mark 0x%08x' % u32_at(data, 16), 16)
    stored = u32_at(data, 60)
    if crc32c(data[:60]) != stored:
        raise FormatError(path, 'header checksum mismatch (header damaged)', 60)
    version = u32_at(data, 12)
    if version == 0 or version > max_version:
        raise UnsupportedVersionError(
            path, '%s version %d is not supported (this reader reads up to version %d)' % (kind, version, max_version), 12)
    if u32_at(data, 20) != HEADER_SIZE:
        raise FormatError(path, 'header size %d, expected 64' % u32_at(data, 20), 20)
    if u32_at(data, 56) != 0:
        raise FormatError(path, 'reserved header word is not 0', 56)
    payload_size = u64_at(data, 24)
    if payload_size != len(data) - HEADER_SIZE:
        raise FormatError(path, 'payload size %d in the header, but the file holds %d bytes after it (truncated or extended)'
                          % (payload_size, len(data) - HEADER_SIZE), 24)
    payload_crc = u32_at(data, 32)
    if verify and crc32c(memoryview(data)[HEADER_SIZE:]) != payload_crc:
        raise FormatError(path, 'payload checksum mismatch (payload damaged)', HEADER_SIZE)
    return Header(kind, version, u32_at(data, 36), (u64_at(data, 40), u64_at(data, 48)), payload_size, payload_crc)


def read_header(path, verify=True):
    """The common header of any neardup file (any kind, version <= 2^32-1), checked, payload CRC included."""
    data = _read(path)
    kind = bytes(data[8:12]).decode('latin-1') if len(data) >= 12 else ''
    return parse_header(data, path, [kind] if data[:8] == MAGIC else ['?'], 0xFFFFFFFF, verify)


# --- MinHash signatures (section 5) -------------------------------------------------------------------------

Signatures = namedtuple('Signatures', 'values count num_perm profile options format')
Signatures.__doc__ = """A signature file: values (count x num_perm uint32: a numpy array, or a list of lists),
profile ('fast', 'doubri-v1', 'datasketch'; None for a doubri .hash file), options (the JSON options the
signatures were made with; None for doubri), format ('neardup' or 'doubri')."""

_MHSG_PROFILES = {0: 'fast', 1: 'doubri-v1', 2: 'datasketch'}
EMPTY_SIGNATURE_VALUE = 0xFFFFFFFF  # every value of an empty document's or a skipped line's record


def read_signatures(path, verify=True):
    """A signature file of `neardup minhash -o PATH`: neardup's MHSG or doubri's .hash (told by its first bytes)."""
    data = _read(path)
    if data[:7] == b'MinHash':
        return _doubri_hash(data, path)
    h = parse_header(data, path, ['MHSG'], 1, verify)
    if h.flags not in _MHSG_PROFILES:
        raise FormatError(path, 'unknown profile id %d' % h.flags, 36)
    n, k = h.params
    if not 1 <= k <= 65536:
        raise FormatError(path, 'values per record %d is not in 1..65536' % k, 48)
    if 4 * n * k > h.payload_size:
        raise FormatError(path, '%d records of %d values need %d bytes; the payload holds %d' % (n, k, 4 * n * k, h.payload_size), 40)
    end = HEADER_SIZE + 4 * n * k
    try:
        options = json.loads(bytes(data[end:]).decode('utf-8'))
    except ValueError as e:
        raise FormatError(path, 'the options after the signatures are not UTF-8 JSON (%s)' % e, end) from None
    return Signatures(_arrays.matrix(data, HEADER_SIZE, n, k, 4), n, k, _MHSG_PROFILES[h.flags], options, 'neardup')


def _doubri_hash(data, path):
    if len(data) < 24:
        raise FormatError(path, 'doubri .hash file of %d bytes is shorter than its 24-byte header' % len(data), 0)
    if data[:7] != b'MinHash':
        raise FormatError(path, 'not a doubri .hash file (bad magic)', 0)
    if data[7] != 4:
        raise FormatError(path, 'bytes per value %d, expected 4' % data[7], 7)
    n, k = u64_at(data, 8), u64_at(data, 16)
    if k == 0:
        raise FormatError(path, 'values per record is 0', 16)
    if len(data) != 24 + 4 * n * k:
        raise FormatError(path, '%d records of %d values make %d bytes; the file has %d' % (n, k, 24 + 4 * n * k, len(data)), 8)
    return Signatures(_arrays.matrix(data, 24, n, k, 4), n, k, None, None, 'doubri')


def read_doubri_hash(path):
    """doubri 1.0's .hash file (`neardup minhash --format doubri`, `neardup doubri minhash`)."""
    return _doubri_hash(_read(path), path)


def read_doubri_flags(path):
    """doubri's .f file (`neardup doubri init`, updated by `self`/`other`): one ASCII '1' (keep) or '0' per
    record, no newline. Returns bools."""
    data = _read(path)
    bad = data.translate(None, b'01')
    if bad:
        at = next(i for i, b in enumerate(data) if b not in (0x30, 0x31))
        raise FormatError(path, "byte %r is not a flag ('1' or '0')" % bytes(data[at:at + 1]).decode('latin-1'), at)
    return _arrays.bools([b == 0x31 for b in data])


def read_onion_hashes(path):
    """An Onion hash file (`neardup onion hashgen` / `hashdup`): 64-bit little-endian hashes, no header."""
    data = _read(path)
    if len(data) % 8:
        raise FormatError(path, 'size %d is not a multiple of 8 (64-bit hashes)' % len(data), len(data) - len(data) % 8)
    return _arrays.uints(data, 0, len(data) // 8, 8)


# --- SimHash index (section 7) ------------------------------------------------------------------------------

SimhashIndexFile = namedtuple('SimhashIndexFile', 'fingerprints ids blocks distance')


def _comb(m, k):
    r = 1
    for i in range(k):
        r = r * (m - i) // (i + 1)
    return r


def read_simhash_index(path, verify=True):
    """A SimHash index (`SimhashIndex.save()`, kind SIMH): its fingerprints and ids (uint64, slot order) and
    (blocks, distance). The tables are checked for size and directory bounds, not returned."""
    data = _read(path)
    h = parse_header(data, path, ['SIMH'], 1, verify)
    if h.flags != 0:
        raise FormatError(path, 'flags %d, expected 0' % h.flags, 36)
    p = HEADER_SIZE
    if h.payload_size < 32:
        raise FormatError(path, 'payload of %d bytes is shorter than its 32-byte preamble' % h.payload_size, p)
    count, m, k, tables, s = u64_at(data, p), u32_at(data, p + 8), u32_at(data, p + 12), u32_at(data, p + 16), u32_at(data, p + 20)
    if (m, k) != h.params:
        raise FormatError(path, 'blocks/distance %d/%d differ from the header\'s %d/%d' % (m, k, h.params[0], h.params[1]), p + 8)
    if not (k < m <= 64) or tables != _comb(m, k):
        raise FormatError(path, 'inconsistent blocks %d, distance %d, tables %d' % (m, k, tables), p + 8)
    if count >= 2 ** 32 - 1:
        raise FormatError(path, 'entry count %d is too large' % count, p)
    want_s = 0 if count <= 1 else (count - 1).bit_length()
    if s != want_s:
        raise FormatError(path, 'slot bits %d, expected %d for %d entries' % (s, want_s, count), p + 20)
    if u64_at(data, p + 24) != 0:
        raise FormatError(path, 'reserved field is not 0', p + 24)
    if 32 + 16 * count > h.payload_size:
        raise FormatError(path, '%d entries do not fit the payload' % count, p)
    at = p + 32 + 16 * count
    end = len(data)
    for t in range(tables):
        if at + 8 > end:
            raise FormatError(path, 'table %d starts past the end of the file' % t, at)
        d = u32_at(data, at)
        if d > 30 or (count == 0 and d != 0) or u32_at(data, at + 4) != 0:
            raise FormatError(path, 'table %d: bad directory bits %d or reserved field' % (t, d), at)
        ndir = (1 << d) + 1
        dir_at = at + 8
        dir_end = dir_at + 4 * ndir
        entries_at = dir_end + (-dir_end % 8)
        entries_end = entries_at + 4 * count
        if entries_end + (-entries_end % 8) > end:
            raise FormatError(path, 'table %d runs past the end of the file' % t, at)
        first, last = u32_at(data, dir_at), u32_at(data, dir_end - 4)
        if first != 0 or last != count:
            raise FormatError(path, 'table %d: directory does not run from 0 to %d' % (t, count), dir_at)
        at = entries_end + (-entries_end % 8)
    if at != end:
        raise FormatError(path, '%d bytes after the last table' % (end - at), at)
    return SimhashIndexFile(_arrays.uints(data, p + 32, count, 8), _arrays.uints(data, p + 32 + 8 * count, count, 8), m, k)


# --- LSH index (section 6) ----------------------------------------------------------------------------------

LshIndexFile = namedtuple('LshIndexFile', 'version profile value_bytes num_perm bands rows keys signatures data metadata')
LshIndexFile.__doc__ = """An LSH index (`dedup --index-out`, `LshIndex.save()`): keys by slot (ints or str),
signatures (entries x num_perm, or None when not stored), data (bytes per entry, or None), metadata (the
parsed JSON, or the text when it is not JSON; '' when empty). A version 1 file has integer keys only."""

_LSH_PROFILES = {0: 'fast', 1: 'datasketch', 2: 'doubri'}


def _pad8(x):
    return x + (-x % 8)


def read_lsh_index(path, verify=True):
    data = _read(path)
    h = parse_header(data, path, ['LSHI'], 2, verify)
    if h.flags != 0:
        raise FormatError(path, 'flags %d, expected 0' % h.flags, 36)
    p = HEADER_SIZE
    pre = 32 if h.version == 1 else 64
    if h.payload_size < pre:
        raise FormatError(path, 'payload shorter than its preamble', p)
    profile, vb, k, b, r = struct.unpack_from('<5I', data, p)
    if profile not in _LSH_PROFILES:
        raise FormatError(path, 'unknown profile %d' % profile, p)
    if vb not in (4, 8):
        raise FormatError(path, 'value bytes %d, expected 4 or 8' % vb, p + 4)
    if not 1 <= k <= 65536 or b * r > k or b == 0 or r == 0:
        raise FormatError(path, 'bad num_perm %d / bands %d / rows %d' % (k, b, r), p + 8)
    if h.version == 1:
        if u32_at(data, p + 20) != 0:
            raise FormatError(path, 'reserved field is not 0', p + 20)
        n = u64_at(data, p + 24)
        if (n, b) != h.params:
            raise FormatError(path, 'entries/bands differ from the header', p + 24)
        if 32 + 8 * n + 16 * n * b != h.payload_size:
            raise FormatError(path, 'payload size %d does not match %d ids and %d bands' % (h.payload_size, n, b), 24)
        keys = _arrays.uints(data, p + 32, n, 8)
        return LshIndexFile(1, _LSH_PROFILES[profile], vb, k, b, r, list(map(int, keys)), None, None, '')
    key_type, store, reserved = struct.unpack_from('<3I', data, p + 20)
    n, kbytes, dbytes, mbytes = struct.unpack_from('<4Q', data, p + 32)
    if key_type not in (0, 1):
        raise FormatError(path, 'unknown key type %d' % key_type, p + 20)
    if store & ~3:
        raise FormatError(path, 'unknown store flags 0x%x' % store, p + 24)
    if reserved != 0:
        raise FormatError(path, 'reserved field is not 0', p + 28)
    if (n, b) != h.params or n >= 2 ** 32:
        raise FormatError(path, 'entries/bands differ from the header', p + 32)
    if key_type == 0 and kbytes != 0:
        raise FormatError(path, 'string-key bytes with integer keys', p + 40)
    if not store & 2 and dbytes != 0:
        raise FormatError(path, 'data bytes without stored data', p + 48)
    keys_size = 8 * n if key_type == 0 else 8 * (n + 1) + _pad8(kbytes)
    table = 8 * n + _pad8(4 * n)
    sig_size = _pad8(n * k * vb) if store & 1 else 0
    data_size = 8 * (n + 1) + _pad8(dbytes) if store & 2 else 0
    total = 64 + keys_size + table * (1 + b) + sig_size + data_size + _pad8(mbytes)
    if total != h.payload_size:
        raise FormatError(path, 'payload size %d, the sections need %d' % (h.payload_size, total), 24)
    at = p + 64
    if key_type == 0:
        keys = list(map(int, _arrays.uints(data, at, n, 8)))
    else:
        offs = struct.unpack_from('<%dQ' % (n + 1), data, at)
        base = at + 8 * (n + 1)
        if offs[0] != 0 or offs[-1] != kbytes or any(offs[i] > offs[i + 1] for i in range(n)):
            raise FormatError(path, 'string key offsets are not 0..%d ascending' % kbytes, at)
        keys = []
        for i in range(n):
            try:
                keys.append(bytes(data[base + offs[i]:base + offs[i + 1]]).decode('utf-8'))
            except UnicodeDecodeError:
                raise FormatError(path, 'key %d is not valid UTF-8' % i, base + offs[i]) from None
    at += keys_size + table * (1 + b)
    signatures = None
    if store & 1:
        signatures = _arrays.matrix(data, at, n, k, vb)
        at += sig_size
    entry_data = None
    if store & 2:
        offs = struct.unpack_from('<%dQ' % (n + 1), data, at)
        base = at + 8 * (n + 1)
        if offs[0] != 0 or offs[-1] != dbytes or any(offs[i] > offs[i + 1] for i in range(n)):
            raise FormatError(path, 'data offsets are not 0..%d ascending' % dbytes, at)
        entry_data = [bytes(data[base + offs[i]:base + offs[i + 1]]) for i in range(n)]
        at += data_size
    try:
        text = bytes(data[at:at + mbytes]).decode('utf-8')
    except UnicodeDecodeError:
        raise FormatError(path, 'metadata is not valid UTF-8', at) from None
    try:
        metadata = json.loads(text) if text else ''
    except ValueError:
        metadata = text
    return LshIndexFile(2, _LSH_PROFILES[profile], vb, k, b, r, keys, signatures, entry_data, metadata)


# --- seen set (section 8) -----------------------------------------------------------------------------------

SeenSet = namedtuple('SeenSet', 'ngram approximate fp_rate keys stages')
SeenSet.__doc__ = """A paragraph seen set (`paragraphs --save-seen`): exact sets have keys (uint64 n-gram keys,
in the file's order) and stages None; approximate ones fp_rate and stages (a list of dicts: capacity, count,
blocks, k, scheme, design_fp_rate, seed, bits (bytes of blocks x 64))."""


def read_seen_set(path, verify=True):
    data = _read(path)
    h = parse_header(data, path, ['PSEN'], 2, verify)
    n = h.params[0]
    if not 1 <= n <= 4096:
        raise FormatError(path, 'n-gram length %d is not in 1..4096' % n, 40)
    p = HEADER_SIZE
    end = len(data)
    if h.flags == 0:
        if h.params[1] != 0:
            raise FormatError(path, 'params[1] of an exact set is not 0', 48)
        if h.payload_size < 8:
            raise FormatError(path, 'payload shorter than its count', p)
        count = u64_at(data, p)
        if 8 + 8 * count != h.payload_size:
            raise FormatError(path, '%d keys need %d payload bytes; it has %d' % (count, 8 + 8 * count, h.payload_size), p)
        keys = _arrays.uints(data, p + 8, count, 8)
        if len(set(keys.tolist() if _arrays.HAVE_NUMPY else keys)) != count:
            raise FormatError(path, 'a key is repeated', p + 8)
        return SeenSet(n, False, None, keys, None)
    if h.flags != 1:
        raise FormatError(path, 'flags %d, expected 0 (exact) or 1 (approximate)' % h.flags, 36)
    fp = struct.unpack_from('<d', data, 48)[0]
    if h.payload_size < 16:
        raise FormatError(path, 'payload shorter than its stage count', p)
    nstages, c0 = u64_at(data, p), u64_at(data, p + 8)
    if nstages > 64 or not 1024 <= c0 <= 2 ** 20:
        raise FormatError(path, 'bad stage count %d or first capacity %d' % (nstages, c0), p)
    at = p + 16
    stages = []
    for i in range(nstages):
        if at + 48 > end:
            raise FormatError(path, 'stage %d runs past the end of the file' % i, at)
        cap, cnt, blocks, k, scheme, design, seed = struct.unpack_from('<3QIIdQ', data, at)
        if h.version == 1:
            scheme = 1 if scheme == 0 else -1
        ok = (cnt <= cap <= 2 ** 40 and blocks >= 1 and 1 <= k <= 32 and scheme in (1, 2)
              and cap <= 512 * blocks and blocks <= max(1, -(-cap // 8)))
        if not ok:
            raise FormatError(path, 'stage %d: bad parameters' % i, at)
        if at + 48 + 64 * blocks > end:
            raise FormatError(path, 'stage %d: its bits run past the end of the file' % i, at)
        stages.append({'capacity': cap, 'count': cnt, 'blocks': blocks, 'k': k, 'scheme': scheme,
                       'design_fp_rate': design, 'seed': seed, 'bits': bytes(data[at + 48:at + 48 + 64 * blocks])})
        at += 48 + 64 * blocks
    if at != end:
        raise FormatError(path, '%d bytes after the last stage' % (end - at), at)
    return SeenSet(n, True, fp, None, stages)


# --- staged dedup's clusters.rep (section 13) ---------------------------------------------------------------

StagedClusters = namedtuple('StagedClusters', 'representatives counts')


def read_staged_clusters(path, verify=True):
    """`clusters.rep` of a staged dedup (`dedup --work DIR`, `dedup-stage clusters`): each document's
    representative (the line it is kept for; its own number when kept) and the run's counts."""
    data = _read(path)
    h = parse_header(data, path, ['CLRP'], 1, verify)
    n = h.params[0]
    if 4 * n > h.payload_size:
        raise FormatError(path, '%d representatives do not fit the payload' % n, 40)
    end = HEADER_SIZE + 4 * n
    try:
        counts = json.loads(bytes(data[end:]).decode('utf-8'))
    except ValueError as e:
        raise FormatError(path, 'the counts after the representatives are not UTF-8 JSON (%s)' % e, end) from None
    return StagedClusters(_arrays.uints(data, HEADER_SIZE, n, 4), counts)


# --- text outputs of dedup ----------------------------------------------------------------------------------

def iter_jsonl(path):
    """The JSON values of a JSONL file, one per line, lazily (empty lines are skipped)."""
    with open(path, 'rb') as f:
        for no, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                yield json.loads(line)
            except ValueError as e:
                raise FormatError(path, 'not JSON (%s)' % e, line=no) from None


def read_flags(path):
    """dedup's --flags file: one '1' (kept) or '0' (duplicate) a line. Returns bools, one per input line."""
    data = _read(path)
    if len(data) % 2 or data[1::2].strip(b'\n'):
        at = next((i for i in range(1, len(data), 2) if data[i] != 0x0A), len(data))
        raise FormatError(path, "not one '0' or '1' per line", line=at // 2 + 1)
    flags = data[0::2]
    bad = flags.translate(None, b'01')
    if bad:
        at = next(i for i, b in enumerate(flags) if b not in (0x30, 0x31))
        raise FormatError(path, "%r is not a flag ('1' or '0')" % bytes(flags[at:at + 1]).decode('latin-1'), line=at + 1)
    if _arrays.HAVE_NUMPY:
        return _arrays.np.frombuffer(flags, dtype='u1') == 0x31
    return [b == 0x31 for b in flags]


Clusters = namedtuple('Clusters', 'kept ids kept_ids')
Clusters.__doc__ = """dedup's --clusters file: kept (per input line, the line number it is kept for: its own when
kept), ids and kept_ids (per input line, with --id-field; None without it)."""


def read_clusters(path):
    with open(path, 'rb') as f:
        first = f.read(1)
    if first == b'{':
        kept, ids, kept_ids = [], [], []
        for rec in iter_jsonl(path):
            # null: kept for a document of an earlier run, named by its id only (an index with ids as keys)
            kept.append(-1 if rec['kept'] is None else rec['kept'])
            ids.append(rec['id'])
            kept_ids.append(rec['kept_id'])
        return Clusters(_arrays.ints(kept), ids, kept_ids)
    values = []
    with open(path, 'rb') as f:
        for no, line in enumerate(f, 1):
            try:
                values.append(int(line))
            except ValueError:
                raise FormatError(path, 'not a line number: %r' % line[:40], line=no) from None
    return Clusters(_arrays.ints(values), None, None)


Pair = namedtuple('Pair', 'a b a_id b_id estimate exact')
Pair.__doc__ = """A reported pair of dedup's --pairs: a < b line numbers, their ids (with --id-field, else None),
the signature estimate and the exact Jaccard (None unless verified exactly)."""


def iter_pairs(path):
    """dedup's --pairs file, lazily, as Pair tuples."""
    for rec in iter_jsonl(path):
        yield Pair(rec['a'], rec['b'], rec.get('a_id'), rec.get('b_id'), rec.get('estimate'), rec.get('exact'))


def read_removed_ids(path):
    """dedup's --removed-ids file: the id of each dropped line."""
    return list(iter_jsonl(path))
