// Reference chunk similarity (tests only): chunk ids from the reference shingle stream, and the top lists by
// brute force over exact chunk sets (the chunks' bytes, no hashing), ranked as docs/similar.md says.
import { refShingles } from './text';
import { fast64 } from './hash';
import { toBytes } from './index';

export interface RefChunkOptions {
  n?: number;
  bits?: number;
  seed?: bigint;
  split?: 'whitespace' | 'nonword';
  lowercase?: boolean;
  stripPunctuation?: boolean;
  short?: 'whole' | 'none';
}

function shingles(text: string | Uint8Array, o: RefChunkOptions): Uint8Array[] {
  return refShingles(toBytes(text), {
    unit: 'word', n: o.n ?? 5, split: o.split ?? 'nonword', lowercase: o.lowercase ?? true,
    stripPunctuation: o.stripPunctuation ?? false, short: o.short ?? 'whole',
  }).shingles;
}

/** Sorted distinct chunk ids: the top `bits` bits of fast64 of each chunk's bytes. */
export function refChunkIds(text: string | Uint8Array, o: RefChunkOptions = {}): bigint[] {
  const bits = BigInt(o.bits ?? 64);
  const set = new Set<bigint>();
  for (const s of shingles(text, o)) set.add(fast64(s, o.seed ?? 0n) >> (64n - bits));
  return [...set].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

/** The chunks themselves (their bytes as latin1 strings), no hashing. */
export function refChunkSet(text: string | Uint8Array, o: RefChunkOptions = {}): Set<string> {
  return new Set(shingles(text, o).map((s) => Buffer.from(s).toString('latin1')));
}

export interface RefEntry { id: string | number; other: string | number; similarity: number; reverse: number; shared: number }

const idText = (id: string | number) => (typeof id === 'string' ? JSON.stringify(id) : String(id));

/**
 * Per document (in input order), its top k documents by similarity(doc -> other) = |A ∩ B| / |A|: shared
 * descending, then reverse similarity descending, then id (JSON text, UTF-8 bytes) ascending; floors applied.
 */
export function refSimilar(docs: ReadonlyArray<{ id: string | number; text: string | Uint8Array }>,
                           o: RefChunkOptions & { k?: number; minShared?: number; minSimilarity?: number } = {}): RefEntry[][] {
  const sets = docs.map((d) => refChunkSet(d.text, o));
  const keys = docs.map((d) => Buffer.from(idText(d.id), 'utf8'));
  return docs.map((a, i) => {
    const rows: Array<{ j: number; shared: number }> = [];
    docs.forEach((_, j) => {
      if (i === j) return;
      let shared = 0;
      for (const c of sets[i]) if (sets[j].has(c)) shared++;
      if (shared === 0 || shared < (o.minShared ?? 1) || shared / sets[i].size < (o.minSimilarity ?? 0)) return;
      rows.push({ j, shared });
    });
    rows.sort((x, y) => y.shared - x.shared || sets[x.j].size - sets[y.j].size || Buffer.compare(keys[x.j], keys[y.j]));
    return rows.slice(0, o.k ?? 100).map((r) => ({
      id: a.id, other: docs[r.j].id, similarity: r.shared / sets[i].size, reverse: r.shared / sets[r.j].size, shared: r.shared,
    }));
  });
}
