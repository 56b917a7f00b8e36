#!/usr/bin/env python3
# A cross-check of the generated normalisation tables against an implementation that is not Node's:
# Python's unicodedata (its own Unicode version, e.g. 14.0 in Python 3.11). For every code point assigned
# there: the combining-class ranks of native/core/text/normalization_tables.inc are a one-to-one,
# increasing map of unicodedata.combining(), the NFD and NFKD decompositions are unicodedata.normalize's, and
# the composition pairs are those Python's NFC composes.
# Run: python3 tools/check-normalization-python.py  (standard library only; exit status 1 on a difference)
import os
import re, sys, unicodedata
src = open(os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'native', 'core', 'text', 'normalization_tables.inc')).read()
def arr(name):
    m = re.search(r'%s\[\] = \{(.*?)\n\};' % name, src, re.S)
    return m.group(1)
shift = int(re.search(r'kNormShift = (\d+)', src).group(1))
s1 = [int(x, 0) for x in re.findall(r'0x[0-9a-f]+|\d+', arr('kNormStage1'))]
s2 = [int(x, 0) for x in re.findall(r'0x[0-9a-f]+|\d+', arr('kNormStage2'))]
recs = [tuple(int(v) for v in r.split(',')) for r in re.findall(r'\{([\d, ]+)\}', arr('kNormRecords'))]
pool = [int(x, 16) for x in re.findall(r'0x([0-9a-f]+)', arr('kNormPool'))]
def rec(c): return recs[s2[(s1[c >> shift] << shift) | (c & ((1 << shift) - 1))]]
pairs = {}
bad = 0; known = 0; dbad = 0
for c in range(0x110000):
    if 0xd800 <= c <= 0xdfff: continue
    ch = chr(c)
    if unicodedata.category(ch) == 'Cn': continue
    known += 1
    r = rec(c)
    ccc = unicodedata.combining(ch)
    if unicodedata.normalize('NFD', ch) == ch:
        pairs.setdefault(ccc, set()).add(r[0])
    # decompositions (not Hangul syllables, which the algorithm does)
    if not (0xac00 <= c <= 0xd7a3):
        for form, ln, off in (('NFD', r[2], r[4]), ('NFKD', r[3], r[5])):
            want = [ord(x) for x in unicodedata.normalize(form, ch)]
            got = pool[off:off+ln] if ln else [c]
            if got != want: dbad += 1
print('Python', sys.version.split()[0], 'Unicode', unicodedata.unidata_version, 'assigned there:', known)
ok = all(len(v) == 1 for v in pairs.values())
order = sorted((k, next(iter(v))) for k, v in pairs.items())
mono = all(a[1] < b[1] for a, b in zip(order, order[1:]))
print('each ccc value one rank:', ok, '; ranks increase with ccc:', mono, '; classes:', len(order), '; ccc 0 -> rank', dict(order).get(0))
print('NFD/NFKD decompositions differing from Python:', dbad)
# composition pairs: (NFC of the decomposition's head, its last code point) -> each composite NFC keeps
table = {}
for a_b, comp in re.findall(r'\{0x([0-9a-f]+), 0x([0-9a-f]+)\}', arr('kComposePairs')):
    k = int(a_b, 16)
    table[int(comp, 16)] = (k >> 21, k & 0x1FFFFF)
want = {}
for c in range(0x110000):
    if 0xd800 <= c <= 0xdfff or 0xac00 <= c <= 0xd7a3: continue
    ch = chr(c)
    if unicodedata.category(ch) == 'Cn': continue
    d = unicodedata.normalize('NFD', ch)
    if len(d) >= 2 and unicodedata.normalize('NFC', d) == ch:
        want[c] = (ord(unicodedata.normalize('NFC', d[:-1])), ord(d[-1]))
pbad = sum(1 for c, p in want.items() if table.get(c) != p) + sum(1 for c in table if c not in want and unicodedata.category(chr(c)) != 'Cn')
print('composition pairs:', len(want), 'known to Python;', len(table), 'in the table; differing:', pbad)
sys.exit(0 if ok and mono and dbad == 0 and pbad == 0 else 1)
