// Randomised check of the line splitter (readLines, lib/io/jsonl.ts) and the native line parser (through
// readDocuments; its libFuzzer target is native/fuzz/jsonl_fuzz.cc). Seeded inputs mix valid lines, invalid
// UTF-8, bad JSON, CRLF, NUL bytes, empty lines and long lines; the splitter is fed in random chunk sizes and
// the reader cuts batches at random sizes. Independent truth: the input split at '\n' by hand and JSON.parse
// per line.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Readable } from 'node:stream';
import { readLines } from '../lib/io/jsonl';
import { readDocuments } from '../lib/io/input';

function rng(seed: number) {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
}

const PIECES: Buffer[] = [
  Buffer.from('{"text":"hello"}'), Buffer.from('{"text":"caf\u00e9 \ud83d\ude00"}'), Buffer.from('{"text":1}'),
  Buffer.from('{"other":"x"}'), Buffer.from('[1,2]'), Buffer.from('null'), Buffer.from('{"text":"a\\nb"}'),
  Buffer.from('{bad json'), Buffer.from([0xff, 0xfe]), Buffer.from([0xc3]), Buffer.from('\r'), Buffer.from('\0'),
  Buffer.from('{"text":"' + 'x'.repeat(70000) + '"}'), Buffer.from(''), Buffer.from('{"text":"t"}\r'),
];

/** What a line must parse to, computed without the reader: a string, or 'bad'. */
function truth(raw: Buffer): string {
  if (raw.length === 0 || (raw.length === 1 && raw[0] === 0x0d)) return 'bad';
  const s = raw.toString('utf8');
  if (!Buffer.from(s, 'utf8').equals(raw)) return 'bad';
  try {
    const o = JSON.parse(s);
    return o !== null && typeof o === 'object' && !Array.isArray(o) && typeof o.text === 'string' ? 'ok:' + o.text : 'bad';
  } catch {
    return 'bad';
  }
}

test('readLines and readDocuments agree with a hand split and JSON.parse on 300 random inputs in random chunks', async () => {
  const r = rng(14);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'neardup-jsonl-fuzz-'));
  const file = path.join(dir, 'in.jsonl');
  for (let iter = 0; iter < 300; iter++) {
    const parts: Buffer[] = [];
    const lines = Math.floor(r() * 12);
    for (let i = 0; i < lines; i++) {
      const k = Math.floor(r() * 3);
      for (let j = 0; j < k + 1; j++) parts.push(PIECES[Math.floor(r() * PIECES.length)]);
      if (i < lines - 1 || r() < 0.5) parts.push(Buffer.from('\n'));
    }
    const input = Buffer.concat(parts);
    const chunks: Buffer[] = [];
    for (let at = 0; at < input.length;) {
      const n = 1 + Math.floor(r() * (r() < 0.3 ? 4 : 5000));
      chunks.push(input.subarray(at, at + n));
      at += n;
    }
    const got: Buffer[] = [];
    for await (const line of readLines(Readable.from(chunks), 'fuzz')) got.push(Buffer.from(line));
    const want = input.length === 0 ? [] : (input[input.length - 1] === 0x0a ? input.subarray(0, -1) : input).toString('latin1').split('\n').map((s) => Buffer.from(s, 'latin1'));
    assert.is(got.length, want.length, `iteration ${iter}: line count`);
    fs.writeFileSync(file, input);
    const parsed: string[] = [];
    for await (const b of readDocuments([file], { onBadLine: 'skip', batchBytes: 1 + Math.floor(r() * 20000) })) {
      const data = Buffer.from(b.packed.data.buffer, b.packed.data.byteOffset, b.packed.data.length);
      for (let i = 0; i < b.count; i++)
        parsed.push(b.valid && b.valid[i] === 0 ? 'bad' : 'ok:' + data.toString('utf8', b.packed.offsets[i], b.packed.offsets[i + 1]));
    }
    assert.is(parsed.length, want.length, `iteration ${iter}: documents`);
    for (let i = 0; i < want.length; i++) {
      assert.ok(got[i].equals(want[i]), `iteration ${iter}, line ${i + 1}: bytes`);
      assert.is(parsed[i], truth(want[i]), `iteration ${iter}, line ${i + 1}: parse`);
    }
  }
  fs.rmSync(dir, { recursive: true, force: true });
});

test.run();
