// Generates an archive of essay-like documents for bench/chunks.ts (never committed): JSONL
// {"id": "e<N>", "text": ...}, 2-5 KB of text each. Words are drawn from a Zipf distribution over a 40,000-word
// made-up vocabulary (s = 1.07), in sentences of 6-24 words and paragraphs of 3-7 sentences; 2,000 stock
// phrases (5-12 words, e.g. boilerplate of theses) appear in about a third of the paragraphs. Planted
// sharing: 12 % of the documents copy 1-4 passages (40-250 words) of earlier documents, and a pool of 500
// "popular sources" (one paragraph each) is copied by 10 % of them; 2 % are light edits of an earlier
// document (1-3 % of the words replaced). Deterministic (seeded).
//   node --import tsx bench/chunks-corpus.ts OUT.jsonl DOCS [--update UPDATE.jsonl CHANGES]
// With --update: CHANGES changes against the corpus: 40 % replacements (edits of an existing document),
// 30 % new documents (with copied passages), 30 % deletions.
import * as fs from 'node:fs';

class Rng {
  private s: number;
  constructor(seed: number) { this.s = seed >>> 0 || 1; }
  next(): number {
    let s = this.s;
    s ^= s << 13; s ^= s >>> 17; s ^= s << 5;
    this.s = s >>> 0;
    return this.s / 2 ** 32;
  }
  int(lo: number, hi: number): number { return lo + Math.floor(this.next() * (hi - lo + 1)); }
}

const SYL = ['ka', 'ro', 'mi', 'te', 'lo', 'an', 'sul', 'ver', 'po', 'dy', 'ne', 'zi', 'ba', 'cho', 'fe', 'gu', 'ist', 'or', 'um', 'tra',
  'pel', 'qua', 'ri', 'so', 'va', 'wen', 'xi', 'ly', 'ment', 'tion', 'ec', 'id', 'os', 'ar', 'el', 'in', 'ux', 'ha', 'mo', 'de'];

function vocabulary(r: Rng, n: number): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  while (out.length < n) {
    let w = '';
    for (let k = r.int(1, 4); k > 0; k--) w += SYL[r.int(0, SYL.length - 1)];
    if (!seen.has(w)) { seen.add(w); out.push(w); }
  }
  return out;
}

export class EssayGenerator {
  private readonly r: Rng;
  private readonly vocab: string[];
  private readonly cdf: Float64Array;
  private readonly phrases: string[];
  private readonly sources: string[];
  /** Texts kept to copy passages from: a bounded reservoir of earlier documents. */
  private readonly pool: string[] = [];

  constructor(seed = 12345) {
    this.r = new Rng(seed);
    this.vocab = vocabulary(this.r, 40000);
    this.cdf = new Float64Array(this.vocab.length);
    let sum = 0;
    for (let i = 0; i < this.vocab.length; i++) { sum += 1 / Math.pow(i + 1, 1.07); this.cdf[i] = sum; }
    for (let i = 0; i < this.cdf.length; i++) this.cdf[i] /= sum;
    this.phrases = Array.from({ length: 2000 }, () => this.words(this.r.int(5, 12)));
    this.sources = Array.from({ length: 500 }, () => this.paragraph());
  }

  private word(): string {
    const x = this.r.next();
    let lo = 0, hi = this.cdf.length - 1;
    while (lo < hi) { const mid = (lo + hi) >> 1; if (this.cdf[mid] < x) lo = mid + 1; else hi = mid; }
    return this.vocab[lo];
  }

  private words(n: number): string {
    const w: string[] = [];
    for (let i = 0; i < n; i++) w.push(this.word());
    return w.join(' ');
  }

  private sentence(): string {
    let s = this.words(this.r.int(6, 24));
    if (this.r.next() < 0.3) s = this.phrases[this.r.int(0, this.phrases.length - 1)] + ' ' + s;
    if (this.r.next() < 0.25) s += ', ' + this.words(this.r.int(3, 8));
    return s.charAt(0).toUpperCase() + s.slice(1) + '.';
  }

  private paragraph(): string {
    const p: string[] = [];
    for (let i = this.r.int(3, 7); i > 0; i--) p.push(this.sentence());
    return p.join(' ');
  }

  private passage(): string {
    const src = this.pool[this.r.int(0, this.pool.length - 1)].split(' ');
    const len = Math.min(src.length, this.r.int(40, 250));
    const at = this.r.int(0, src.length - len);
    return src.slice(at, at + len).join(' ');
  }

  private edit(text: string): string {
    const rate = 0.01 + this.r.next() * 0.02;
    return text.split(' ').map((w) => (this.r.next() < rate ? this.word() : w)).join(' ');
  }

  /** One document of 2-5 KB. */
  document(): string {
    if (this.pool.length > 100 && this.r.next() < 0.02) return this.edit(this.pool[this.r.int(0, this.pool.length - 1)]);
    const target = this.r.int(2000, 5000);
    const parts: string[] = [];
    let len = 0;
    const copier = this.pool.length > 100 && this.r.next() < 0.12;
    let copies = copier ? this.r.int(1, 4) : 0;
    while (len < target) {
      let p: string;
      if (copies > 0 && this.r.next() < 0.35) {
        p = this.passage();
        copies--;
      } else if (copier && this.r.next() < 0.1) {
        p = this.sources[this.r.int(0, this.sources.length - 1)];
      } else {
        p = this.paragraph();
      }
      parts.push(p);
      len += p.length + 2;
    }
    const text = parts.join('\n\n');
    if (this.pool.length < 20000) this.pool.push(text);
    else if (this.r.next() < 0.02) this.pool[this.r.int(0, this.pool.length - 1)] = text;
    return text;
  }

  /** An edited version of a text (a replacement in an update). */
  revise(text: string): string {
    const paras = text.split('\n\n');
    const i = this.r.int(0, paras.length - 1);
    paras[i] = this.r.next() < 0.5 ? this.paragraph() : this.edit(paras[i]);
    if (this.r.next() < 0.3) paras.push(this.passage());
    return paras.join('\n\n');
  }

  int(lo: number, hi: number): number { return this.r.int(lo, hi); }
}

class LineWriter {
  private parts: string[] = [];
  private size = 0;
  private readonly fd: number;
  constructor(private readonly file: string) { this.fd = fs.openSync(file + '.tmp', 'w'); }
  write(s: string): void {
    this.parts.push(s);
    this.size += s.length;
    if (this.size > 8 << 20) this.flush();
  }
  private flush(): void { fs.writeSync(this.fd, this.parts.join('')); this.parts = []; this.size = 0; }
  close(): void { this.flush(); fs.closeSync(this.fd); fs.renameSync(this.file + '.tmp', this.file); }
}

/** Writes DOCS documents; with an update file, CHANGES changes against them. Returns the generator. */
export function generate(out: string, docs: number, update?: { file: string; changes: number }): void {
  const g = new EssayGenerator();
  const w = new LineWriter(out);
  // Texts of a sample of documents, for the replacements of the update.
  const keep = new Map<number, string>();
  const want = update ? Math.min(docs, update.changes * 2) : 0;
  const step = want ? Math.max(1, Math.floor(docs / want)) : 0;
  for (let i = 0; i < docs; i++) {
    const text = g.document();
    if (step && i % step === 0 && keep.size < want) keep.set(i, text);
    w.write(JSON.stringify({ id: `e${i}`, text }) + '\n');
  }
  w.close();
  if (!update) return;
  const u = new LineWriter(update.file);
  const ids = [...keep.keys()];
  let next = docs;
  for (let c = 0; c < update.changes; c++) {
    const kind = c % 10;
    if (kind < 4) {
      const id = ids.pop()!;
      u.write(JSON.stringify({ id: `e${id}`, text: g.revise(keep.get(id)!) }) + '\n');
    } else if (kind < 7) {
      u.write(JSON.stringify({ id: `e${next++}`, text: g.document() }) + '\n');
    } else {
      u.write(JSON.stringify({ id: `e${ids.pop()!}`, text: null }) + '\n');
    }
  }
  u.close();
}

if (require.main === module) {
  const [out, n] = process.argv.slice(2);
  const ui = process.argv.indexOf('--update');
  if (!out || !n) { console.error('usage: chunks-corpus.ts OUT.jsonl DOCS [--update UPDATE.jsonl CHANGES]'); process.exit(2); }
  generate(out, Number(n), ui > 0 ? { file: process.argv[ui + 1], changes: Number(process.argv[ui + 2]) } : undefined);
}
