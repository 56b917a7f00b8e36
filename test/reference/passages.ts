// Brute-force reference of shared passages (tests only): the neardup blot profile (valid UTF-8 inputs)
// and the passage definitions of docs/passages.md, computed the slow, obvious way: every window's
// document set by scanning every document, every pair of documents compared position by position.

export interface RefWindows {
  blots: number[];
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

/** The windows of a text: words are runs of \p{L}\p{N}_, lower-cased per code point, FNV-1 32 each. */
export function refWindows(text: string, seqLen: number, hash: 'xor' | 'ordered' = 'ordered'): RefWindows {
  const words: Array<{ h: number; b: number; e: number }> = [];
  for (const m of text.matchAll(/[\p{L}\p{N}_]+/gu)) {
    const lower = [...m[0]].map((c) => c.toLowerCase()).join('');
    const b = Buffer.byteLength(text.slice(0, m.index!));
    words.push({ h: fnv1(Buffer.from(lower)), b, e: b + Buffer.byteLength(m[0]) });
  }
  const blots: number[] = [], ranges: Array<[number, number]> = [];
  for (let j = 0; j + seqLen <= words.length; j++) {
    let x = 0;
    for (let t = 0; t < seqLen; t++) {
      if (hash === 'xor') x = (x ^ words[j + t].h) >>> 0;
      else x = Math.imul(((x << 5) | (x >>> 27)) ^ words[j + t].h, 0x27d4eb2d) >>> 0;
    }
    blots.push(hash === 'xor' ? x : fmix(x));
    ranges.push([words[j].b, words[j + seqLen - 1].e]);
  }
  return { blots, ranges };
}

/** The documents holding each blot (ascending ids). */
function docSets(docs: RefWindows[]): Map<number, number[]> {
  const sets = new Map<number, number[]>();
  docs.forEach((d, id) => {
    for (const b of new Set(d.blots)) {
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
  firstBlot: number;
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
  const setKey = (b: number) => (sets.get(b)!.length >= threshold ? sets.get(b)!.join(',') : undefined);
  const found = new Map<string, RefPassage>();
  docs.forEach((d, id) => {
    for (let i = 0; i < d.blots.length;) {
      const k = setKey(d.blots[i]);
      if (k === undefined) { i++; continue; }
      let j = i + 1;
      while (j < d.blots.length && setKey(d.blots[j]) === k) j++;
      const key = k + '|' + d.blots.slice(i, j).join(',');
      const p = found.get(key) ?? { count: 0, windows: j - i, firstBlot: d.blots[i], docs: [] };
      if (!p.docs.some((x) => x.doc === id)) p.docs.push({ doc: id, begin: d.ranges[i][0], end: d.ranges[j - 1][1] });
      p.count = p.docs.length;
      found.set(key, p);
      i = j;
    }
  });
  return [...found.values()].sort((x, y) => y.count - x.count || y.windows - x.windows || x.firstBlot - y.firstBlot || x.docs[0].doc - y.docs[0].doc);
}

export interface RefRun { a: number; b: number; len: number }

/** Maximal aligned runs of equal windows between x and y; starts only at the first 16 positions of a blot in y. */
export function refAlignedRuns(x: number[], y: number[]): RefRun[] {
  const seen = new Map<number, number>();
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
  for (const b of q.blots) {
    const s = sets.get(b);
    if (s && s.length <= maxDocs) s.forEach((d) => cands.add(d));
  }
  const out: RefQueryMatch[] = [];
  for (const d of [...cands].sort((a, b) => a - b)) {
    const runs = refAlignedRuns(q.blots, docs[d].blots);
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
    const m = new Map<number, number>();
    d.blots.forEach((b, i) => {
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
