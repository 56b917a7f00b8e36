"""Driven by test/python.test.ts: calls every function of the neardup Python package on the files the suite
prepared in WORK (corpus.jsonl and the CLI's own outputs of the same commands, made by the suite) and prints
one JSON object of results, numbers as plain lists, for the suite to compare with the CLI's outputs.

    python3 python_api.py WORK all|arrays

'arrays' runs only what returns numbers (dedup, minhash, simhash, the readers): the suite runs it a second
time with numpy made unimportable. Each result also says which kind of container it came in.
"""

import json
import os
import struct
import sys

import neardup
from neardup import formats
from neardup._crc32c import crc32c

work, mode = sys.argv[1], sys.argv[2]
os.chdir(work)
out = {'numpy': neardup.HAVE_NUMPY}


def plain(x):
    """numpy arrays and lists of them as lists; records what x was."""
    if hasattr(x, 'tolist'):
        return x.tolist()
    if isinstance(x, list):
        return [plain(v) for v in x]
    return x


def kind(x):
    return type(x).__module__ + '.' + type(x).__name__


def dtype(x):
    return str(x.dtype) if hasattr(x, 'dtype') else None


corpus = [json.loads(l) for l in open('corpus.jsonl', encoding='utf-8')]
texts = [d['text'] for d in corpus]

# dedup: a path, with ids; the same documents as dicts on stdin; as texts; a kept output from an iterable.
r = neardup.dedup('corpus.jsonl', threshold=0.8, id_field='id', verify='exact')
out['dedup'] = {
    'kept': plain(r.kept), 'kept_kind': kind(r.kept), 'kept_dtype': dtype(r.kept),
    'clusters': plain(r.clusters), 'clusters_dtype': dtype(r.clusters), 'ids': r.ids, 'kept_ids': r.kept_ids,
    'pairs': [list(p) for p in r.pairs], 'removed_ids': r.removed_ids, 'summary': r.summary,
    'duplicate_of': r.duplicate_of(),
}
r2 = neardup.dedup(iter(corpus), id_field='id', verify='exact')
out['dedup_dicts'] = {'kept': plain(r2.kept), 'pairs': [list(p) for p in r2.pairs], 'kept_ids': r2.kept_ids}
r3 = neardup.dedup(texts, pairs=False)
out['dedup_texts'] = {'kept': plain(r3.kept), 'clusters': plain(r3.clusters), 'pairs': r3.pairs,
                      'duplicate_of': {str(k): v for k, v in r3.duplicate_of().items()}}
neardup.dedup((d for d in corpus), kept='py-kept.jsonl')
out['dedup_kept_file'] = open('py-kept.jsonl', encoding='utf-8').read()

# minhash: the array, from a path and from texts; the doubri format.
m = neardup.minhash('corpus.jsonl', num_perm=16, lowercase=True)
out['minhash'] = {'values': plain(m), 'kind': kind(m), 'dtype': dtype(m)}
out['minhash_texts'] = plain(neardup.minhash(texts, num_perm=16, lowercase=True))
out['minhash_doubri'] = plain(neardup.minhash(texts, num_perm=16, lowercase=True, format='doubri'))

# simhash
f = neardup.simhash_fingerprints('corpus.jsonl')
out['simhash'] = {'values': [str(int(v)) for v in f], 'dtype': dtype(f)}
out['simhash_pairs'] = [[str(a), str(b)] for a, b in neardup.simhash_pairs(f, distance=3)]
out['simhash_pairs_ids'] = [[str(a), str(b)] for a, b in neardup.simhash_pairs(f, distance=3, ids=range(100, 100 + len(f)))]
out['simhash_pairs_str'] = [[a, b] for a, b in neardup.simhash_pairs(f, distance=3, ids=['doc "%d"' % (100 + i) for i in range(len(f))])]

# readers, on the CLI's files
s = neardup.read_signatures('cli.mhsg')
out['read_mhsg'] = {'values': plain(s.values), 'count': s.count, 'num_perm': s.num_perm, 'profile': s.profile,
                    'options': s.options, 'format': s.format, 'dtype': dtype(s.values)}
s = neardup.read_signatures('cli-ds.mhsg')
out['read_mhsg_ds'] = {'values': plain(s.values), 'profile': s.profile, 'options': s.options}
s = neardup.read_doubri_hash('cli.hash')
out['read_hash'] = {'values': plain(s.values), 'count': s.count, 'num_perm': s.num_perm, 'format': s.format}
out['read_hash_auto'] = neardup.read_signatures('cli.hash').format
out['read_f'] = {name: plain(neardup.read_doubri_flags(name)) for name in ('cli.hash.f', 'cli-self.hash.f')}
out['read_onion'] = {name: [str(v) for v in plain(neardup.read_onion_hashes(name))] for name in ('H.0', 'H.1', 'D')}
ix = neardup.read_simhash_index('lib.simh')
out['read_simh'] = {'fingerprints': [str(v) for v in plain(ix.fingerprints)], 'ids': [str(v) for v in plain(ix.ids)],
                    'blocks': ix.blocks, 'distance': ix.distance, 'dtype': dtype(ix.fingerprints)}
lsh = neardup.read_lsh_index('cli.lsh')
out['read_lsh'] = {'version': lsh.version, 'profile': lsh.profile, 'num_perm': lsh.num_perm, 'bands': lsh.bands,
                   'rows': lsh.rows, 'keys': lsh.keys, 'signatures': plain(lsh.signatures),
                   'data': [d.decode('utf-8') for d in lsh.data], 'metadata': lsh.metadata}
v1 = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'fixtures', 'lsh-v1')
out['read_lsh_v1'] = {}
for name, file in (('datasketch', 'datasketch.lsh'), ('fast64', 'fast64.lsh'), ('empty', 'empty-doubri.lsh')):
    ix = neardup.read_lsh_index(os.path.join(v1, file))
    out['read_lsh_v1'][name] = {'version': ix.version, 'profile': ix.profile, 'value_bytes': ix.value_bytes,
                                'num_perm': ix.num_perm, 'bands': ix.bands, 'rows': ix.rows, 'keys': ix.keys}
seen = neardup.read_seen_set('cli.psen')
out['read_psen'] = {'ngram': seen.ngram, 'approximate': seen.approximate, 'keys': len(seen.keys),
                    'distinct': len(set(plain(seen.keys)))}
seen = neardup.read_seen_set('cli-approx.psen')
out['read_psen_approx'] = {'ngram': seen.ngram, 'approximate': seen.approximate, 'fp_rate': seen.fp_rate,
                           'count': sum(st['count'] for st in seen.stages),
                           'bits_ok': all(len(st['bits']) == 64 * st['blocks'] for st in seen.stages)}
rep = neardup.read_staged_clusters(os.path.join('W', 'clusters.rep'))
out['read_clrp'] = {'representatives': plain(rep.representatives), 'counts': rep.counts}
out['read_flags'] = plain(neardup.read_flags('cli-flags.txt'))
out['read_clusters'] = plain(neardup.read_clusters('cli-clusters.txt').kept)
out['header'] = list(neardup.read_header('cli.mhsg'))


# damaged files: each gives a FormatError naming the file and the offset
def error_of(fn, path):
    try:
        fn(path)
    except neardup.FormatError as e:
        return {'type': type(e).__name__, 'message': str(e), 'offset': e.offset, 'line': e.line}
    return None


raw = open('cli.mhsg', 'rb').read()
damaged = {
    'magic': b'X' + raw[1:],
    'header_crc': raw[:44] + bytes([raw[44] ^ 1]) + raw[45:],
    'payload': raw[:100] + bytes([raw[100] ^ 0x40]) + raw[101:],
    'truncated': raw[:-3],
}
newer = bytearray(raw[:64])
struct.pack_into('<I', newer, 12, 9)
struct.pack_into('<I', newer, 60, crc32c(bytes(newer[:60])))
damaged['newer'] = bytes(newer) + raw[64:]
out['errors'] = {}
for name, data in damaged.items():
    p = 'bad-%s.mhsg' % name
    open(p, 'wb').write(data)
    out['errors'][name] = error_of(neardup.read_signatures, p)
open('bad.f', 'wb').write(b'1101x1')
out['errors']['flags_f'] = error_of(neardup.read_doubri_flags, 'bad.f')
open('bad-flags.txt', 'wb').write(b'1\n0\n2\n')
out['errors']['flags_txt'] = error_of(neardup.read_flags, 'bad-flags.txt')
open('bad.onion', 'wb').write(b'\0' * 12)
out['errors']['onion'] = error_of(neardup.read_onion_hashes, 'bad.onion')
raw = open('lib.simh', 'rb').read()
open('bad.simh', 'wb').write(raw[:-8])
out['errors']['simh_truncated'] = error_of(neardup.read_simhash_index, 'bad.simh')
out['errors']['simh_as_lsh'] = error_of(neardup.read_lsh_index, 'lib.simh')
out['errors']['verify_false'] = neardup.read_signatures('bad-payload.mhsg', verify=False).count

# the CLI's own errors
try:
    neardup.dedup('bad.jsonl')
    out['cli_error'] = None
except neardup.NeardupError as e:
    out['cli_error'] = {'message': str(e), 'returncode': e.returncode, 'stderr': e.stderr}
try:
    neardup.dedup([{'id': 1, 'text': 'a'}, {'id': 2}], id_field='id')
    out['cli_error_stdin'] = None
except neardup.NeardupError as e:
    out['cli_error_stdin'] = {'message': str(e), 'returncode': e.returncode}
try:
    neardup.dedup([b'bytes are not texts'])
except TypeError as e:
    out['type_error'] = str(e)

if mode == 'all':
    out['passages_index'] = neardup.passages_index('corpus.jsonl', 'py-P', id_field='id')
    out['passages_query'] = list(neardup.passages_query('cli-P', [{'id': d['id'], 'text': d['text']} for d in corpus[:20]], id_field='id'))
    out['passages_pairs'] = list(neardup.passages_pairs('cli-P'))
    out['passages_pairs_own'] = list(neardup.passages_pairs('py-P'))
    out['passages_extract'] = list(neardup.passages_extract('cli-P', limit=5))
    it = neardup.passages_pairs('cli-P')
    next(it)
    it.close()  # stops the process
    out['similar_build'] = neardup.similar_build('corpus.jsonl', 'py-S')
    out['similar_top'] = list(neardup.similar_top('cli-S'))
    out['similar_top_own'] = list(neardup.similar_top('py-S'))
    out['similar_top_ids'] = list(neardup.similar_top('cli-S', ids=[corpus[1]['id'], corpus[2]['id']]))
    out['similar_query'] = list(neardup.similar_query(corpus[:10], 'cli-S'))
    neardup.similar_update([{'id': corpus[1]['id'], 'text': None}], 'py-S')
    out['similar_top_updated'] = list(neardup.similar_top('py-S'))
    try:
        list(neardup.passages_pairs('no-such-index'))
        out['stream_error'] = None
    except neardup.NeardupError as e:
        out['stream_error'] = {'message': str(e), 'returncode': e.returncode}

json.dump(out, sys.stdout)
