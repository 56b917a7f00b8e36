// One JSONL document of about MB megabytes of random words, then five small documents (docs/memory.md,
// "One large document"). Words: 3-9 random letters from a vocabulary of 200,000, or (--short) one letter.
// Run: node bench/large-document.mjs MB OUT.jsonl [--short]; then bash bench/large-document.sh OUT.jsonl
import { createWriteStream } from 'node:fs';
const mb = Number(process.argv[2]);
const out = createWriteStream(process.argv[3]);
const short = process.argv.includes('--short');
let x = 0x9e3779b9 >>> 0;
const rnd = () => { x ^= x << 13; x >>>= 0; x ^= x >>> 17; x ^= x << 5; x >>>= 0; return x; };
const words = [];
for (let i = 0; i < 200000; i++) {
  let w = '';
  const n = 3 + (rnd() % 7);
  for (let j = 0; j < n; j++) w += String.fromCharCode(97 + rnd() % 26);
  words.push(w);
}
const word = () => short ? String.fromCharCode(97 + rnd() % 26) : words[rnd() % words.length];
out.write('{"id":"big","text":"');
for (let written = 0; written < mb * 1e6;) {
  let chunk = '';
  for (let i = 0; i < 20000; i++) chunk += word() + ' ';
  out.write(chunk);
  written += chunk.length;
}
out.write('"}\n');
for (let i = 0; i < 5; i++) out.write(JSON.stringify({ id: 'small' + i, text: `a small document number ${i} with some words in it to chunk` }) + '\n');
out.end();
