// A small corpus with planted near-duplicates and the noise real corpora have: near-copies of earlier
// documents with some words replaced, and on top case changes, whitespace changes and punctuation added or
// removed. Deterministic (seeded). bench/dedup-noisy-corpus.ts is the large version (SpamAssassin texts as bases).
export interface NoisyOptions {
  seed?: number;
  /** Documents to generate. */
  n?: number;
  /** Texts to start fresh documents from (default: random words from a made-up vocabulary). */
  bases?: string[];
  /** Share of documents that are near-copies of an earlier one. */
  copies?: number;
}

export function makeRng(seed: number): () => number {
  let s = (seed >>> 0) || 1;
  return () => { s ^= s << 13; s ^= s >>> 17; s ^= s << 5; return (s >>> 0) / 2 ** 32; };
}

const RATES = [0, 0, 0.005, 0.01, 0.02, 0.03, 0.04, 0.05, 0.07, 0.1, 0.15, 0.3];

/** A near-copy of `src`: words replaced at a random rate, then case, whitespace and punctuation noise. */
export function noisyCopy(src: string, rnd: () => number, word: () => string): string {
  const rate = RATES[Math.floor(rnd() * RATES.length)];
  let words = src.split(/\s+/).filter((w) => w.length > 0).map((w) => (rnd() < rate ? word() : w));
  const noise = rnd();
  if (noise < 0.25) {
    // case: capitalised words, or the whole text upper- or lower-cased
    const k = rnd();
    words = k < 0.4 ? words.map((w) => (rnd() < 0.3 ? w[0].toUpperCase() + w.slice(1) : w))
      : k < 0.7 ? words.map((w) => w.toUpperCase()) : words.map((w) => w.toLowerCase());
  } else if (noise < 0.45) {
    // punctuation: added after some words, or stripped
    words = rnd() < 0.5 ? words.map((w) => (rnd() < 0.06 ? w + ',.;!'[Math.floor(rnd() * 4)] : w)) : words.map((w) => w.replace(/[.,;:!?]+$/, '') || w);
  }
  let out = '';
  const ws = noise >= 0.45 && noise < 0.65;  // whitespace: runs of spaces, tabs and newlines between words
  for (let i = 0; i < words.length; i++) {
    if (i > 0) out += ws && rnd() < 0.15 ? ['  ', '\n', '\t', ' \n '][Math.floor(rnd() * 4)] : ' ';
    out += words[i];
  }
  return out;
}

export function noisyCorpus(o: NoisyOptions = {}): string[] {
  const rnd = makeRng(o.seed ?? 1);
  const syll = ['ka', 'lo', 're', 'mi', 'tan', 'sor', 'ven', 'de', 'qu', 'il', 'ob', 'ex', 'ar', 'po', 'ne', 'sti'];
  const vocab = Array.from({ length: 4000 }, () => Array.from({ length: 1 + Math.floor(rnd() * 3) }, () => syll[Math.floor(rnd() * syll.length)]).join(''));
  const word = () => vocab[Math.floor(rnd() * rnd() * vocab.length)];
  const n = o.n ?? 300, copies = o.copies ?? 0.5;
  const texts: string[] = [];
  for (let i = 0; i < n; i++) {
    if (i > 5 && rnd() < copies) {
      texts.push(noisyCopy(texts[Math.floor(rnd() * texts.length)], rnd, word));
    } else if (o.bases && o.bases.length) {
      texts.push(o.bases[Math.floor(rnd() * o.bases.length)]);
    } else {
      const words = Array.from({ length: 60 + Math.floor(rnd() * 150) }, word);
      // sentences: capitalised first word, a full stop
      texts.push(words.map((w, k) => (k % 12 === 0 ? w[0].toUpperCase() + w.slice(1) : w) + (k % 12 === 11 ? '.' : '')).join(' '));
    }
  }
  return texts;
}
