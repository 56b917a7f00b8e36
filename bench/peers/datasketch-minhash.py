# datasketch's side of the MinHash rows of bench/peers.ts: MinHash signatures (128 permutations, seed 1, the
# 1.x scheme: SHA-1 shingle hashes, numpy permutations) of every JSONL line's "text", through datasketch's
# own batch path (MinHash.bulk: one permutation set reused, update_batch per document).
#   python3 bench/peers/datasketch-minhash.py word|char|lsh IN.jsonl OUT
# lsh: the word signatures, then the LSH job: MinHashLSH(threshold=0.8, num_perm=128), insert every
# document (key = its line number), query every document; OUT gets the candidate pairs "i j" (i < j), sorted.
# Shingles: word 5-grams of text.lower().split() joined by one space, or 5-code-point substrings of
# text.lower(); a shorter text gives one shingle of all of it, an empty one none (neardup's datasketch
# profile does the same). OUT.u32 gets the signatures as u32 little-endian, document-major. Prints one JSON
# line: the CPU seconds of shingling + hashing (time.process_time), without start-up and file reading.
import json
import sys
import time

import numpy as np
from datasketch import MinHash, MinHashLSH


def shingles(text, unit):
    if unit == 'word':
        toks = text.lower().split()
        if len(toks) < 5:
            return [' '.join(toks).encode('utf-8')] if toks else []
        return [' '.join(toks[i:i + 5]).encode('utf-8') for i in range(len(toks) - 4)]
    t = text.lower()
    if len(t) < 5:
        return [t.encode('utf-8')] if t else []
    return [t[i:i + 5].encode('utf-8') for i in range(len(t) - 4)]


def main():
    unit, src, dst = sys.argv[1:4]
    with open(src, encoding='utf-8') as f:
        texts = [json.loads(line)['text'] for line in f if line.strip()]
    t0 = time.process_time()
    sigs = MinHash.bulk((shingles(t, 'word' if unit == 'lsh' else unit) for t in texts), num_perm=128, seed=1)
    if unit == 'lsh':
        lsh = MinHashLSH(threshold=0.8, num_perm=128)
        for i, m in enumerate(sigs):
            lsh.insert(i, m)
        pairs = set()
        for i, m in enumerate(sigs):
            for j in lsh.query(m):
                if j != i:
                    pairs.add((min(i, j), max(i, j)))
    t1 = time.process_time()
    if unit == 'lsh':
        with open(dst, 'w') as f:
            f.write(''.join('%d %d\n' % p for p in sorted(pairs)))
        print(json.dumps({'cpu': round(t1 - t0, 4), 'docs': len(texts), 'pairs': len(pairs)}))
        return
    out = np.concatenate([m.hashvalues for m in sigs]).astype('<u4') if sigs else np.zeros(0, '<u4')
    out.tofile(dst)
    print(json.dumps({'cpu': round(t1 - t0, 4), 'docs': len(texts)}))


main()
