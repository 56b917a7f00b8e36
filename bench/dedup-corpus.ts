// Generates a large JSONL corpus for bench/dedup.ts from the SpamAssassin texts (never committed): each line
// is one of the texts, mutated. Mix (by line): 70 % "new" documents (30 % of the words replaced and a random
// token prepended: mostly unlike each other), 20 % near-copies (0.5-5 % of the words replaced), 10 % exact
// copies of a text. Deterministic (seeded).
//   node --import tsx bench/dedup-corpus.ts OUT.jsonl [GB]
import * as fs from 'node:fs';
import { loadTexts } from './corpus';

export function generateCorpus(out: string, bytes: number): void {
  const texts = loadTexts().map((t) => t.split(' '));
  let s = 0x9e3779b9;
  const rnd = () => { s ^= s << 13; s ^= s >>> 17; s ^= s << 5; return (s >>> 0) / 2 ** 32; };
  const word = () => Math.floor(rnd() * 2 ** 31).toString(36);
  const fd = fs.openSync(out + '.tmp', 'w');
  let written = 0;
  const parts: string[] = [];
  let pending = 0;
  while (written < bytes) {
    const src = texts[Math.floor(rnd() * texts.length)];
    const kind = rnd();
    const rate = kind < 0.7 ? 0.3 : kind < 0.9 ? [0.005, 0.01, 0.02, 0.05][Math.floor(rnd() * 4)] : 0;
    const words = rate === 0 ? src : src.map((w) => (rnd() < rate ? word() : w));
    const text = (kind < 0.7 ? word() + ' ' : '') + words.join(' ');
    const line = JSON.stringify({ id: written, text }) + '\n';
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
  if (!out) { console.error('usage: dedup-corpus.ts OUT.jsonl [GB]'); process.exit(2); }
  generateCorpus(out, Number(process.argv[3] ?? 1) * 1e9);
}
