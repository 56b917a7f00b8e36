// Writes a corpus as a packed file for the C++ core benchmarks: u64 LE count, count+1 u64 LE offsets, bytes.
//   node --import tsx bench/pack-corpus.ts OUT [JSONL.gz]
import * as fs from 'node:fs';
import { loadTexts } from './corpus';

const [out, src] = process.argv.slice(2);
const texts = loadTexts(src).map((t) => Buffer.from(t, 'utf8'));
const head = Buffer.alloc(8 + 8 * (texts.length + 1));
head.writeBigUInt64LE(BigInt(texts.length), 0);
let at = 0;
texts.forEach((t, i) => { at += t.length; head.writeBigUInt64LE(BigInt(at), 8 + 8 * (i + 1)); });
fs.writeFileSync(out, Buffer.concat([head, ...texts]));
console.log(`${out}: ${texts.length} docs, ${at} bytes`);
