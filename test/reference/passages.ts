// Brute-force reference of shared passages (tests only): the neardup blot profile (valid UTF-8 inputs)
// and the passage definitions of docs/passages.md, computed the slow, obvious way: every window's
// document set by scanning every document, every pair of documents compared position by position.

export interface RefWindows {
  /** The blot of each window (numbers: 32-bit blots; bigints: 64-bit), for the output order and the extract "blot". */
  blots: Array<number | bigint>;
  /**
   * What makes two windows equal: at 32 bits the blot itself (different windows sharing a blot are taken as
   * equal, as the index does); at 64 bits the window's text, compared as such (the lower-cased words in order,
   * or for the xor hash the words held an odd number of times): a 64-bit index must be exact on these corpora.
   */
  keys: Array<number | string>;
  /** Byte range of each window in the document's UTF-8 text. */
  ranges: Array<[number, number]>;
}

function fnv1(bytes: Uint8Array, h = 0x811c9dc5): number {
  for (const b of bytes) h = (Math.imul(h, 0x01000193) ^ b) >>> 0;
  return h;
}
function fmix(h: number): number {
  h ^= h >>> 16; h = Math.imul(h, 0x85ebca6b); h ^= h >>> 13; h = Math.imul(h, 0xc2b2ae35); h ^= h >>> 16;
  return h >>> 0;
}
const M64 = (1n << 64n) - 1n;
function fnv1_64(bytes: Uint8Array): bigint {
  let h = 0xcbf29ce484222325n;
  for (const b of bytes) h = ((h * 0x100000001b3n) & M64) ^ BigInt(b);
  return h;
}
function fmix64(h: bigint): bigint {
  h ^= h >> 33n; h = (h * 0xff51afd7ed558ccdn) & M64; h ^= h >> 33n; h = (h * 0xc4ceb9fe1a85ec53n) & M64; h ^= h >> 33n;
  return h;
}

/**
 * The windows of a text: words are runs of \p{L}\p{N}_, lower-cased per code point; 32 bits: FNV-1 32 each,
 * the ordered (or xor) window hash of docs/FORMAT.md section 11; 64 bits: FNV-1 64 each, mixed, the 64-bit one.
 */
export function refWindows(text: string, seqLen: number, hash: 'xor' | 'ordered' = 'ordered', bits: 32 | 64 = 64): RefWindows {
  const words: Array<{ w: string; h: number; h64: bigint; b: number; e: number }> = [];
  for (const m of text.matchAll(/[\p{L}\p{N}_]+/gu)) {
    const lower = [...m[0]].map((c) => c.toLowerCase()).join('');
    const b = Buffer.byteLength(text.slice(0, m.index!));
    words.push({ w: lower, h: fnv1(Buffer.from(lower)), h64: bits === 64 ? fmix64(fnv1_64(Buffer.from(lower))) : 0n, b, e: b + Buffer.byteLength(m[0]) });
  }
  const blots: Array<number | bigint> = [], keys: Array<number | string> = [], ranges: Array<[number, number]> = [];
  for (let j = 0; j + seqLen <= words.length; j++) {
    const win = words.slice(j, j + seqLen);
    if (bits === 32) {
      let x = 0;
      for (const w of win) {
        if (hash === 'xor') x = (x ^ w.h) >>> 0;
        else x = Math.imul(((x << 5) | (x >>> 27)) ^ w.h, 0x27d4eb2d) >>> 0;
      }
      blots.push(hash === 'xor' ? x : fmix(x));
      keys.push(blots[blots.length - 1] as number);
    } else {
      let x = 0n;
      for (const w of win) {
        if (hash === 'xor') x ^= w.h64;
        else x = ((((x << 5n) | (x >> 59n)) & M64 ^ w.h64) * 0x9e3779b97f4a7c15n) & M64;
      }
      blots.push(hash === 'xor' ? x : fmix64(x));
      if (hash === 'xor') {
        const odd = new Map<string, number>();
        for (const w of win) odd.set(w.w, (odd.get(w.w) ?? 0) ^ 1);
        keys.push([...odd].filter(([, c]) => c).map(([w]) => w).sort().join(' '));
      } else {
        keys.push(win.map((w) => w.w).join(' '));
      }
    }
    ranges.push([words[j].b, words[j + seqLen - 1].e]);
  }
  return { blots, keys, ranges };
}

const cmp = (x: number | bigint, y: number | bigint) => (x < y ? -1 : x > y ? 1 : 0);

/** The documents holding each window (by its key; ascending ids). */
function docSets(docs: RefWindows[]): Map<number | string, number[]> {
  const sets = new Map<number | string, number[]>();
  docs.forEach((d, id) => {
    for (const b of new Set(d.keys)) {
      const s = sets.get(b) ?? [];
      s.push(id);
      sets.set(b, s);
    }
  });
  return sets;
}

function unionBytes(ranges: Array<[number, number]>): number {
  const r = [...ranges].sort((x, y) => x[0] - y[0] || x[1] - y[1]);
  let total = 0, lo = -1, hi = -1;
  for (const [b, e] of r) {
    if (lo >= 0 && b <= hi) { hi = Math.max(hi, e); continue; }
    if (lo >= 0) total += hi - lo;
    lo = b; hi = e;
  }
  if (lo >= 0) total += hi - lo;
  return total;
}

export interface RefPassage {
  count: number;
  windows: number;
  firstBlot: number | bigint;
  docs: Array<{ doc: number; begin: number; end: number }>;
}

/**
 * extract: windows held by at least max(minDocs, round(mean + sigma * sd)) documents (mean, sd over the
 * counts of the distinct blots); per document, maximal runs of consecutive such windows with one document
 * set; the same (set, blots) run in several documents is one passage (first occurrence per document).
 */
export function refExtract(docs: RefWindows[], sigma: number, minDocs: number): RefPassage[] {
  const sets = docSets(docs);
  const counts = [...sets.values()].map((s) => s.length);
  const mean = counts.length ? counts.reduce((a, b) => a + b, 0) / counts.length : 0;
  const sd = counts.length ? Math.sqrt(counts.reduce((a, c) => a + (c - mean) * (c - mean), 0) / counts.length) : 0;
  const threshold = Math.max(minDocs, 1, Math.round(mean + sigma * sd));
  const setKey = (b: number | string) => (sets.get(b)!.length >= threshold ? sets.get(b)!.join(',') : undefined);
  const found = new Map<string, RefPassage>();
  docs.forEach((d, id) => {
    for (let i = 0; i < d.keys.length;) {
      const k = setKey(d.keys[i]);
      if (k === undefined) { i++; continue; }
      let j = i + 1;
      while (j < d.keys.length && setKey(d.keys[j]) === k) j++;
      const key = k + '|' + JSON.stringify(d.keys.slice(i, j));
      const p = found.get(key) ?? { count: 0, windows: j - i, firstBlot: d.blots[i], docs: [] };
      if (!p.docs.some((x) => x.doc === id)) p.docs.push({ doc: id, begin: d.ranges[i][0], end: d.ranges[j - 1][1] });
      p.count = p.docs.length;
      found.set(key, p);
      i = j;
    }
  });
  return [...found.values()].sort((x, y) => y.count - x.count || y.windows - x.windows || cmp(x.firstBlot, y.firstBlot) || x.docs[0].doc - y.docs[0].doc);
}

export interface RefRun { a: number; b: number; len: number }

/** Maximal aligned runs of equal windows between x and y; starts only at the first 16 positions of a blot in y. */
export function refAlignedRuns(x: Array<number | string>, y: Array<number | string>): RefRun[] {
  const seen = new Map<number | string, number>();
  const allowed = y.map((b) => {
    const n = (seen.get(b) ?? 0) + 1;
    seen.set(b, n);
    return n <= 16;
  });
  const runs: RefRun[] = [];
  for (let i = 0; i < x.length; i++) {
    for (let j = 0; j < y.length; j++) {
      if (x[i] !== y[j] || !allowed[j]) continue;
      if (i > 0 && j > 0 && x[i - 1] === y[j - 1]) continue;
      let len = 1;
      while (i + len < x.length && j + len < y.length && x[i + len] === y[j + len]) len++;
      runs.push({ a: i, b: j, len });
    }
  }
  return runs;
}

export interface RefQueryMatch {
  doc: number;
  windows: number;
  runs: Array<{ len: number; query: [number, number]; doc: [number, number] }>;
}

/** query: documents nominated by query windows held by at most maxDocs documents, with >= minPassages runs. */
export function refQuery(q: RefWindows, docs: RefWindows[], minPassages: number, maxDocs: number): RefQueryMatch[] {
  const sets = docSets(docs);
  const cands = new Set<number>();
  for (const b of q.keys) {
    const s = sets.get(b);
    if (s && s.length <= maxDocs) s.forEach((d) => cands.add(d));
  }
  const out: RefQueryMatch[] = [];
  for (const d of [...cands].sort((a, b) => a - b)) {
    const runs = refAlignedRuns(q.keys, docs[d].keys);
    if (runs.length === 0 || runs.length < minPassages) continue;
    const covered = new Set<number>();
    runs.forEach((r) => { for (let i = r.a; i < r.a + r.len; i++) covered.add(i); });
    out.push({
      doc: d, windows: covered.size,
      runs: runs.map((r) => ({ len: r.len, query: [q.ranges[r.a][0], q.ranges[r.a + r.len - 1][1]], doc: [docs[d].ranges[r.b][0], docs[d].ranges[r.b + r.len - 1][1]] })),
    });
  }
  return out.sort((x, y) => y.windows - x.windows || y.runs.length - x.runs.length || x.doc - y.doc);
}

export interface RefPair { a: number; b: number; passages: number; windows: number; bytesA: number; bytesB: number }

/**
 * pairs: windows held by 2 .. maxDocs documents, first occurrence per document; for each pair a < b, the
 * windows of a also in b, matched at their first occurrences, grouped into runs of consecutive positions
 * on one diagonal.
 */
export function refPairs(docs: RefWindows[], minPassages: number, maxDocs: number): RefPair[] {
  const sets = docSets(docs);
  const firsts = docs.map((d) => {
    const m = new Map<number | string, number>();
    d.keys.forEach((b, i) => {
      const s = sets.get(b)!;
      if (s.length >= 2 && s.length <= maxDocs && !m.has(b)) m.set(b, i);
    });
    return m;
  });
  const out: RefPair[] = [];
  for (let a = 0; a < docs.length; a++) {
    for (let b = a + 1; b < docs.length; b++) {
      const matches: Array<[number, number]> = [];
      for (const [k, i] of firsts[a]) if (firsts[b].has(k)) matches.push([i, firsts[b].get(k)!]);
      if (matches.length === 0) continue;
      matches.sort((x, y) => (x[0] - x[1]) - (y[0] - y[1]) || x[0] - y[0]);
      const ra: Array<[number, number]> = [], rb: Array<[number, number]> = [];
      let passages = 0;
      for (let s = 0; s < matches.length;) {
        let e = s + 1;
        while (e < matches.length && matches[e][0] - matches[e][1] === matches[s][0] - matches[s][1] && matches[e][0] === matches[e - 1][0] + 1) e++;
        passages++;
        ra.push([docs[a].ranges[matches[s][0]][0], docs[a].ranges[matches[e - 1][0]][1]]);
        rb.push([docs[b].ranges[matches[s][1]][0], docs[b].ranges[matches[e - 1][1]][1]]);
        s = e;
      }
      if (passages >= minPassages) out.push({ a, b, passages, windows: matches.length, bytesA: unionBytes(ra), bytesB: unionBytes(rb) });
    }
  }
  return out.sort((x, y) => y.passages - x.passages || y.windows - x.windows || x.a - y.a || x.b - y.b);
}
