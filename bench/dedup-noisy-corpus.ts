// Generates a large JSONL corpus with planted near-duplicates and noise, for the dedup quality and speed
// benchmarks (never committed). Each line is either a "fresh" document (a SpamAssassin text with 30 % of its
// words replaced: unlike the others) or, with probability --copies (default 0.4), a near-copy of one of the
// last 5,000 documents: 0-30 % of its words replaced, then case, whitespace or punctuation noise (the noise
// model of test/support/noisy-corpus.ts). Deterministic (seeded).
//   node --import tsx bench/dedup-noisy-corpus.ts OUT.jsonl [MB] [copies]
import * as fs from 'node:fs';
import { loadTexts } from './corpus';
import { makeRng, noisyCopy } from '../test/support/noisy-corpus';

export function generateNoisyCorpus(out: string, bytes: number, copies = 0.4, seed = 42): void {
  const texts = loadTexts().map((t) => t.split(' '));
  const rnd = makeRng(seed);
  const word = () => Math.floor(rnd() * 2 ** 31).toString(36);
  const recent: string[] = [];
  const fd = fs.openSync(out + '.tmp', 'w');
  let written = 0, id = 0, pending = 0;
  const parts: string[] = [];
  while (written < bytes) {
    let text: string;
    if (recent.length > 0 && rnd() < copies) {
      text = noisyCopy(recent[Math.floor(rnd() * recent.length)], rnd, word);
    } else {
      const src = texts[Math.floor(rnd() * texts.length)];
      text = word() + ' ' + src.map((w) => (rnd() < 0.3 ? word() : w)).join(' ');
    }
    if (recent.length < 5000) recent.push(text);
    else recent[Math.floor(rnd() * recent.length)] = text;
    const line = JSON.stringify({ id: id++, text }) + '\n';
    parts.push(line);
    pending += line.length;
    written += Buffer.byteLength(line);
    if (pending > 16 << 20) { fs.writeSync(fd, parts.join('')); parts.length = 0; pending = 0; }
  }
  fs.writeSync(fd, parts.join(''));
  fs.closeSync(fd);
  fs.renameSync(out + '.tmp', out);
}

if (require.main === module) {
  const out = process.argv[2];
  if (!out) { console.error('usage: dedup-noisy-corpus.ts OUT.jsonl [MB] [copies]'); process.exit(2); }
  generateNoisyCorpus(out, Number(process.argv[3] ?? 1000) * 1e6, Number(process.argv[4] ?? 0.4));
}
