"""neardup from Python: runs the neardup command line (a Node.js package) on whole batches and reads what it
writes. Pure Python; numpy is used when it can be imported (arrays), plain lists otherwise.

    import neardup
    r = neardup.dedup('corpus.jsonl', threshold=0.8, id_field='id')
    r.kept            # one bool per line: kept (True) or a near-duplicate (False)
    r.duplicate_of()  # {dropped id: id of the kept line it is a duplicate of}
    sigs = neardup.minhash('corpus.jsonl', num_perm=128)   # (lines x 128) uint32

Inputs (`data` below): a path (str or os.PathLike: JSONL plain, gzip or zstd, or Parquet, as the CLI reads),
a list or tuple of os.PathLike (several files, read in order as one corpus), or an iterable of str (texts)
or of dicts (JSON objects, e.g. {"id": ..., "text": ...}), streamed to the CLI's standard input as JSONL:
one process per call, never one per document. Keyword options the functions do not name are passed to the
CLI: num_perm=128 -> --num-perm 128, fast=True -> --fast (docs/python.md).

The CLI is found by find_cli(): $NEARDUP_BIN, then the npm package this package sits in (or was installed
from), then `neardup` on PATH. docs/FORMAT.md describes the files; neardup.formats reads them.
"""

import json
import os
import shutil
import tempfile

from . import _arrays
from ._cli import NeardupError, NeardupNotFound, find_cli, option_args, parse_summary, run, stream_lines
from .formats import (Clusters, FormatError, Pair, UnsupportedVersionError, iter_jsonl, iter_pairs,
                      read_clusters, read_doubri_flags, read_doubri_hash, read_flags, read_header,
                      read_lsh_index, read_onion_hashes, read_removed_ids, read_seen_set, read_signatures,
                      read_simhash_index, read_staged_clusters)

__version__ = '0.1.0'
HAVE_NUMPY = _arrays.HAVE_NUMPY

__all__ = [
    'dedup', 'DedupResult', 'minhash', 'simhash_fingerprints', 'simhash_pairs',
    'passages_index', 'passages_query', 'passages_pairs', 'passages_extract',
    'similar_build', 'similar_update', 'similar_top', 'similar_query',
    'find_cli', 'NeardupError', 'NeardupNotFound', 'FormatError', 'UnsupportedVersionError',
    'read_header', 'read_signatures', 'read_doubri_hash', 'read_doubri_flags', 'read_onion_hashes',
    'read_simhash_index', 'read_lsh_index', 'read_seen_set', 'read_staged_clusters',
    'read_flags', 'read_clusters', 'iter_pairs', 'read_removed_ids', 'iter_jsonl', 'Pair', 'Clusters', 'HAVE_NUMPY',
]


def _is_path(x):
    return isinstance(x, (str, os.PathLike))


def _records(items, field):
    """JSONL lines (bytes) of an iterable of texts or dicts."""
    for i, item in enumerate(items):
        if isinstance(item, str):
            obj = {field: item}
        elif isinstance(item, dict):
            obj = item
        else:
            raise TypeError('document %d is of type %s: give texts (str) or JSON objects (dict)' % (i, type(item).__name__))
        try:
            line = json.dumps(obj, ensure_ascii=False, allow_nan=False, separators=(',', ':'))
        except (TypeError, ValueError) as e:
            raise TypeError('document %d cannot be written as JSON: %s' % (i, e)) from None
        yield line.encode('utf-8') + b'\n'


def _inputs(data, field):
    """(CLI file arguments, JSONL lines for standard input or None)."""
    if _is_path(data):
        return [os.fspath(data)], None
    if isinstance(data, (list, tuple)) and data and all(isinstance(x, os.PathLike) for x in data):
        return [os.fspath(x) for x in data], None
    if isinstance(data, (bytes, bytearray)):
        raise TypeError('give a path, or an iterable of texts or dicts, not bytes')
    return ['-'], _records(data, field or 'text')


class _Scratch:
    """A private temporary folder for the CLI's outputs, removed when the call ends (however it ends)."""

    def __enter__(self):
        self.dir = tempfile.mkdtemp(prefix='neardup-py-')
        return self

    def path(self, name):
        return os.path.join(self.dir, name)

    def __exit__(self, *exc):
        shutil.rmtree(self.dir, ignore_errors=True)


class DedupResult:
    """What dedup() returns.

    kept       per document: True when kept, False for a near-duplicate (numpy bool array, or list)
    clusters   per document: the number of the line it is kept for (its own when kept; int64 array or list;
               -1 when kept for a document of an earlier run that an index with ids names by id only)
    ids        per document: its id (with id_field; else None)
    kept_ids   per document: the id of the line it is kept for (with id_field; else None)
    pairs      the reported pairs: Pair(a, b, a_id, b_id, estimate, exact) (None with pairs=False)
    removed_ids  the ids of the dropped documents (with id_field; else None)
    summary    the CLI's JSON summary (documents, kept, duplicates, clusters, settings, seconds, ...)
    """

    def __init__(self, kept, clusters, ids, kept_ids, pairs, removed_ids, summary):
        self.kept, self.clusters, self.ids, self.kept_ids = kept, clusters, ids, kept_ids
        self.pairs, self.removed_ids, self.summary = pairs, removed_ids, summary

    def duplicate_of(self):
        """{dropped document: the one it is kept for}, by id with id_field, else by line number."""
        out = {}
        for i, k in enumerate(self.kept):
            if not k:
                if self.ids is not None:
                    out[self.ids[i]] = self.kept_ids[i]
                else:
                    out[i] = int(self.clusters[i])
        return out

    def __repr__(self):
        s = self.summary or {}
        return '<DedupResult documents=%s kept=%s duplicates=%s>' % (s.get('documents'), s.get('kept'), s.get('duplicates'))


def dedup(data, threshold=None, id_field=None, field=None, pairs=True, flags=None, clusters=None,
          removed_ids=None, **options):
    """Near-duplicate removal (`neardup dedup`): see DedupResult. threshold: the Jaccard threshold (the CLI's
    default 0.8); id_field: the field holding each document's id (then ids are in every result); field: the
    text field; pairs: also enumerate the reported pairs (pass a path to keep the file). flags, clusters,
    removed_ids: paths to keep those files (by default they go to a temporary folder, removed at the end).
    Any other keyword is a CLI option: verify='exact', fast=True, num_perm=256, kept='kept.jsonl', ..."""
    files, stdin = _inputs(data, field)
    if stdin is not None and (options.get('kept') or options.get('kept_dir')):
        # --kept reads its inputs twice: the documents go to a temporary file instead of the CLI's stdin.
        return _via_file(dedup, data, field, dict(threshold=threshold, id_field=id_field, field=field, pairs=pairs,
                                                 flags=flags, clusters=clusters, removed_ids=removed_ids, **options))
    with _Scratch() as tmp:
        out = {
            'flags': flags or tmp.path('flags.txt'),
            'clusters': clusters or tmp.path('clusters.txt'),
            'pairs': (pairs if _is_path(pairs) else tmp.path('pairs.jsonl')) if pairs else None,
            'removed_ids': (removed_ids or tmp.path('removed.jsonl')) if id_field else None,
        }
        args = ['dedup'] + files + option_args(dict(threshold=threshold, id_field=id_field, field=field, **out, **options))
        stdout, stderr = run(args, stdin)
        summary = parse_summary(stdout, stderr)
        cl = read_clusters(out['clusters'])
        return DedupResult(read_flags(out['flags']), cl.kept, cl.ids, cl.kept_ids,
                           list(iter_pairs(out['pairs'])) if pairs else None,
                           read_removed_ids(out['removed_ids']) if id_field else None, summary)


def _via_file(fn, data, field, kwargs):
    with _Scratch() as tmp:
        path = tmp.path('input.jsonl')
        with open(path, 'wb') as f:
            for line in _records(data, field or 'text'):
                f.write(line)
        return fn(path, **kwargs)


def minhash(data, num_perm=None, profile=None, seed=None, field=None, output=None, format=None, **options):
    """MinHash signatures (`neardup minhash -o FILE`): a (documents x num_perm) uint32 numpy array, or a list
    of lists without numpy; row i is document i. A skipped bad line's row is num_perm x 0xFFFFFFFF. output:
    a path to keep the signature file (read it again with read_signatures); format: 'neardup' (MHSG) or
    'doubri'. Other keywords are CLI options (unit='word', ngram=5, lowercase=True, ...)."""
    files, stdin = _inputs(data, field)
    with _Scratch() as tmp:
        path = os.fspath(output) if output else tmp.path('signatures.mhsg')
        args = ['minhash'] + files + option_args(dict(num_perm=num_perm, profile=profile, seed=seed, field=field,
                                                      output=path, format=format, **options))
        run(args, stdin)
        return read_signatures(path).values


def simhash_fingerprints(data, field=None, **options):
    """SimHash fingerprints (`neardup simhash fingerprint`): one uint64 per document (numpy array, or list of
    int). A line skipped with on_bad_line='skip' has none: 0 in the array, None in the list."""
    files, stdin = _inputs(data, field)
    stdout, _ = run(['simhash', 'fingerprint'] + files + option_args(dict(field=field, **options)), stdin)
    values = [int(l) if l.strip() else None for l in stdout.split('\n')[:-1]]
    if _arrays.HAVE_NUMPY:
        return _arrays.u64_list([0 if v is None else v for v in values])
    return values


def simhash_pairs(fingerprints, distance=None, blocks=None, ids=None):
    """Pairs of fingerprints within `distance` bits (`neardup simhash find-all`), lazily: (a, b) tuples of
    fingerprints (a < b), or of ids when ids (one per fingerprint: ints from 0 to 2^64-1, or strings) is
    given, each id the object given. Integer ids pair as a < b; with any string id, a comes before b in
    the order given."""
    if ids is None:
        lines = ('%d\n' % int(f) for f in fingerprints)
        args = ['simhash', 'find-all'] + option_args(dict(distance=distance, blocks=blocks))
        for line in stream_lines(args, (l.encode() for l in lines)):
            a, b = line.split()
            yield (int(a), int(b))
        return
    ids = list(ids)
    # ids as the CLI reads them: integers in decimal, strings as JSON text (spaces and quotes kept)
    texts = [json.dumps(i) if isinstance(i, str) else '%d' % int(i) for i in ids]
    back = dict(zip(texts, ids))
    lines = ('%s %d\n' % (t, int(f)) for t, f in zip(texts, fingerprints))
    args = ['simhash', 'find-all'] + option_args(dict(distance=distance, blocks=blocks, ids=True))
    decoder = json.JSONDecoder()
    for line in stream_lines(args, (l.encode() for l in lines)):
        s = line.decode('utf-8').strip()
        if s.startswith('"'):
            _, end = decoder.raw_decode(s)
        else:
            end = s.index(' ')
        yield (back[s[:end]], back[s[end:].strip()])


def _jsonl(args, stdin=None):
    for line in stream_lines(args, stdin):
        if line.strip():
            yield json.loads(line)


def passages_index(data, out, field=None, **options):
    """Builds (or adds the documents to) the passage index folder `out` (`neardup passages index -o OUT`).
    Returns the CLI's summary (or None when it prints none)."""
    files, stdin = _inputs(data, field)
    stdout, stderr = run(['passages', 'index', '-o', os.fspath(out)] + files + option_args(dict(field=field, **options)), stdin)
    return parse_summary(stdout, stderr)


def passages_query(index, data, field=None, **options):
    """For each document of data, the indexed documents sharing passages with it, lazily: dicts
    {"id", "matches": [...]} as `neardup passages query` prints them."""
    files, stdin = _inputs(data, field)
    return _jsonl(['passages', 'query', os.fspath(index)] + files + option_args(dict(field=field, **options)), stdin)


def passages_pairs(index, **options):
    """Every pair of indexed documents sharing passages, lazily: {"a", "b", "passages", "windows", "coverA", "coverB"}."""
    return _jsonl(['passages', 'pairs', os.fspath(index)] + option_args(options))


def passages_extract(index, **options):
    """The passages shared by the most documents first, lazily: {"blot", "count", "windows", "docs": [...]}."""
    return _jsonl(['passages', 'extract', os.fspath(index)] + option_args(options))


def similar_build(data, index, field=None, **options):
    """Builds the chunk-similarity index folder `index` (`neardup similar build`). Returns the summary, if any."""
    files, stdin = _inputs(data, field)
    stdout, stderr = run(['similar', 'build'] + files + ['--index', os.fspath(index)] + option_args(dict(field=field, **options)), stdin)
    return parse_summary(stdout, stderr)


def similar_update(data, index, field=None, **options):
    """Applies documents to the index (`neardup similar update`: new ids added, known ids replaced,
    {"id": ..., "text": None} deletes). Returns the summary, if any."""
    files, stdin = _inputs(data, field)
    stdout, stderr = run(['similar', 'update'] + files + ['--index', os.fspath(index)] + option_args(dict(field=field, **options)), stdin)
    return parse_summary(stdout, stderr)


def similar_top(index, ids=None):
    """The similar documents of every indexed document (or of `ids`), lazily:
    {"id", "other", "similarity", "reverse", "shared"}."""
    return _jsonl(['similar', 'top', '--index', os.fspath(index)] + option_args(dict(id=list(ids) if ids is not None else None)))


def similar_query(data, index, field=None, **options):
    """The indexed documents similar to each document of data, without adding them, lazily (the lines of
    similar_top, "id" being the query document's)."""
    files, stdin = _inputs(data, field)
    return _jsonl(['similar', 'query'] + files + ['--index', os.fspath(index)] + option_args(dict(field=field, **options)), stdin)
