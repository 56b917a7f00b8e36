# datasketch's side of the MinHash rows of bench/peers.ts: MinHash signatures (128 permutations, seed 1, the
# 1.x scheme: SHA-1 shingle hashes, numpy permutations) of every JSONL line's "text", through datasketch's
# own batch path (MinHash.bulk: one permutation set reused, update_batch per document).
#   python3 bench/peers/datasketch-minhash.py word|char IN.jsonl OUT.u32
# Shingles: word 5-grams of text.lower().split() joined by one space, or 5-code-point substrings of
# text.lower(); a shorter text gives one shingle of all of it, an empty one none (neardup's datasketch
# profile does the same). OUT.u32 gets the signatures as u32 little-endian, document-major. Prints one JSON
# line: the CPU seconds of shingling + hashing (time.process_time), without start-up and file reading.
import json
import sys
import time

import numpy as np
from datasketch import MinHash


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
    sigs = MinHash.bulk((shingles(t, unit) for t in texts), num_perm=128, seed=1)
    t1 = time.process_time()
    out = np.concatenate([m.hashvalues for m in sigs]).astype('<u4') if sigs else np.zeros(0, '<u4')
    out.tofile(dst)
    print(json.dumps({'cpu': round(t1 - t0, 4), 'docs': len(texts)}))


main()
