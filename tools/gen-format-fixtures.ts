// Regenerates test/fixtures/formats/: a small JSONL corpus and its zstd forms made by the zstd command-line
// tool (independent of the addon's libzstd): one frame (level 19, with checksum) and two frames.
//   node --import tsx tools/gen-format-fixtures.ts      (needs the `zstd` program: apt-get install zstd)
import * as fs from 'node:fs';
import * as path from 'node:path';
import { execFileSync } from 'node:child_process';

const dir = path.join(__dirname, '..', 'test', 'fixtures', 'formats');
fs.mkdirSync(dir, { recursive: true });
const words = ['near', 'duplicate', 'text', 'caf\u00e9', '\u4e2d\u6587', 'na\u00efve', '\ud83d\ude00', 'mail', 'line', 'x"y', 'tab\there', 'new\nline'];
const lines: string[] = [];
for (let i = 0; i < 300; i++) {
  const n = 5 + ((i * 7919) % 60);
  const t = Array.from({ length: n }, (_, k) => words[(i * 31 + k * 17) % words.length]).join(' ');
  lines.push(JSON.stringify({ id: `doc-${i}`, n: i, text: t, meta: { content: t.toUpperCase() } }));
}
const text = lines.join('\n') + '\n';
fs.writeFileSync(path.join(dir, 'corpus.jsonl'), text);
const zstd = (input: string, level: number) => execFileSync('zstd', [`-${level}`, '-c', '--check'], { input });
fs.writeFileSync(path.join(dir, 'corpus.jsonl.zst'), zstd(text, 19));
const half = lines.slice(0, 150).join('\n') + '\n';
fs.writeFileSync(path.join(dir, 'corpus-2frames.jsonl.zst'), Buffer.concat([zstd(half, 3), zstd(text.slice(half.length), 3)]));
console.log('wrote', fs.readdirSync(dir).join(', '));
