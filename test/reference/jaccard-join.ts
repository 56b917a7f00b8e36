// Exact truth for dedup quality: every pair of sets with Jaccard >= t, found by prefix filtering (an exact
// all-pairs similarity join: with tokens in one global order, rarest first, two sets with J >= t share a token
// among the first |x| - floor(t |x|) + 1 of each), then verified by merging the sorted sets. Also the shingle
// sets of the truth (char 5-grams of the lower-cased text, as String.prototype.toLowerCase does it) and the
// keep rule applied to a pair list, so quality tests need nothing from the code under test.

/** Distinct char n-grams (code points) of the lower-cased text; shorter texts: the whole text; '' -> none. */
export function charShingles(text: string, n = 5, lowercase = true): string[] {
  const cps = Array.from(lowercase ? text.toLowerCase() : text);
  if (cps.length === 0) return [];
  if (cps.length < n) return [cps.join('')];
  const out = new Set<string>();
  for (let i = 0; i + n <= cps.length; i++) out.add(cps.slice(i, i + n).join(''));
  return [...out];
}

/** Sets of strings -> sorted arrays of integer ids (one id per distinct string across all sets). */
export function internSets(sets: string[][]): Uint32Array[] {
  const ids = new Map<string, number>();
  return sets.map((s) => {
    const a = new Uint32Array(s.length);
    for (let i = 0; i < s.length; i++) {
      let id = ids.get(s[i]);
      if (id === undefined) { id = ids.size; ids.set(s[i], id); }
      a[i] = id;
    }
    return a.sort();
  });
}

function jaccardSorted(x: ArrayLike<number>, y: ArrayLike<number>): number {
  if (x.length + y.length === 0) return 1;
  let i = 0, j = 0, inter = 0;
  while (i < x.length && j < y.length) {
    if (x[i] < y[j]) i++;
    else if (y[j] < x[i]) j++;
    else { inter++; i++; j++; }
  }
  return inter / (x.length + y.length - inter);
}

/** Every pair [a, b, J] (a < b) with J >= t, sorted. sets: sorted distinct numbers (ids or hashes). Two empty sets have J = 1. */
export function jaccardJoin(sets: ArrayLike<number>[], t: number): [number, number, number][] {
  // Tokens renamed by rank (rarest first): each set sorted by rank starts with its prefix, and the renamed
  // sets are still sorted distinct sets with the same intersections.
  const freq = new Map<number, number>();
  for (const s of sets) for (let k = 0; k < s.length; k++) freq.set(s[k], (freq.get(s[k]) ?? 0) + 1);
  const tokens = Float64Array.from(freq.keys());
  const byFreq = Array.from(tokens.keys()).sort((x, y) => (freq.get(tokens[x])! - freq.get(tokens[y])!) || tokens[x] - tokens[y]);
  const rank = new Map<number, number>();
  byFreq.forEach((ti, r) => rank.set(tokens[ti], r));
  freq.clear();
  const ranked = sets.map((s) => Uint32Array.from(s as ArrayLike<number>, (v) => rank.get(v)!).sort());
  rank.clear();
  const index = new Map<number, number[]>();
  const empty: number[] = [];
  const out: [number, number, number][] = [];
  const seen = new Int32Array(sets.length).fill(-1);
  for (let b = 0; b < ranked.length; b++) {
    const s = ranked[b];
    if (s.length === 0) {
      for (const a of empty) out.push([a, b, 1]);
      empty.push(b);
      continue;
    }
    const p = Math.min(s.length, s.length - Math.floor(t * s.length) + 1);
    for (let k = 0; k < p; k++) {
      const list = index.get(s[k]);
      if (list) {
        for (const a of list) {
          if (seen[a] === b) continue;
          seen[a] = b;
          const na = ranked[a].length;
          if (Math.min(na, s.length) < t * Math.max(na, s.length) - 1e-9) continue;  // J <= min/max
          const j = jaccardSorted(ranked[a], s);
          if (j >= t) out.push([a, b, j]);
        }
        list.push(b);
      } else {
        index.set(s[k], [b]);
      }
    }
  }
  return out.sort((x, y) => x[0] - y[0] || x[1] - y[1]);
}

/** Brute force over every pair (for checking jaccardJoin on small inputs). */
export function jaccardAllPairs(sets: Uint32Array[], t: number): [number, number, number][] {
  const out: [number, number, number][] = [];
  for (let a = 0; a < sets.length; a++)
    for (let b = a + 1; b < sets.length; b++) { const j = jaccardSorted(sets[a], sets[b]); if (j >= t) out.push([a, b, j]); }
  return out;
}

/** doubri's rule over pairs: in order, a document is dropped when it is paired with an earlier kept one. */
export function keptFlags(n: number, pairs: readonly (readonly [number, number, ...unknown[]])[]): Uint8Array {
  const partners: number[][] = Array.from({ length: n }, () => []);
  for (const [a, b] of pairs) partners[Math.max(a, b)].push(Math.min(a, b));
  const keep = new Uint8Array(n);
  for (let i = 0; i < n; i++) keep[i] = partners[i].some((a) => keep[a]) ? 0 : 1;
  return keep;
}

/** Precision, recall and F1 of a predicted set of keys against the true one. */
export function prf(predicted: Iterable<string>, truth: Iterable<string>): { precision: number; recall: number; f1: number; tp: number; fp: number; fn: number } {
  const p = new Set(predicted), t = new Set(truth);
  let tp = 0;
  for (const k of p) if (t.has(k)) tp++;
  const fp = p.size - tp, fn = t.size - tp;
  const precision = p.size ? tp / p.size : 1, recall = t.size ? tp / t.size : 1;
  return { precision, recall, f1: precision + recall ? (2 * precision * recall) / (precision + recall) : 0, tp, fp, fn };
}
