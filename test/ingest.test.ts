// The native JSONL reader (lib/io/input.ts over native/core/text/jsonl_batch.h) against the reference model of a
// line (test/reference/jsonl.ts: JSON.parse + strict UTF-8 + the documented rules), on random and malformed
// lines cut at random batch sizes; its exact reasons and limits; gzip (multi-member) and zstd (multi-frame,
// skippable frames, truncated, corrupt) inputs.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as zlib from 'node:zlib';
import { execFileSync } from 'node:child_process';
import { readDocuments, type DocumentBatch, type ReadDocumentsOptions } from '../lib/io/input';
import type { NeardupError } from '../lib/util/errors';
import { native } from '../lib/native/addon';
import { referenceLine, reasonCategory } from './reference/jsonl';
import { readAllDocs, rejects, zstdRawFrame, zstdRleFrame, zstdSkippableFrame } from './support/formats';
import { rng } from './reference/random';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'neardup-ingest-'));
const FIXTURES = path.join(__dirname, 'fixtures', 'formats');

async function readAll(files: string[], o: ReadDocumentsOptions = {}): Promise<DocumentBatch[]> {
  const out: DocumentBatch[] = [];
  for await (const b of readDocuments(files, o)) out.push(b);
  return out;
}

const docs = readAllDocs;

const write = (name: string, data: string | Buffer) => {
  const f = path.join(dir, name);
  fs.writeFileSync(f, data);
  return f;
};

// ---------------------------------------------------------------------------------------------------------
// Random lines: native == reference

const STRINGS = [
  '"hello"', '"caf\\u00e9"', '"\\ud83d\\ude00 smile"', '"\\ud800 lone high"', '"\\udc00 lone low"', '"a\\nb\\tc\\"d\\\\e\\/f\\b\\f\\r"',
  '"\u00e9\u4e2d\u6587 \ud83d\ude00"', '""', '"\\u0000nul"', '"bad \\x escape"', '"bad \\u12 short"', '"tab\there raw"',
  '"unterminated', '"\\ud83d\\u0041 high then letter"', '"\\uD83D\\uDE00 upper hex"', '"x\\u2028y"',
];
const SCALARS = ['0', '-0', '12', '-7', '1.5', '1e3', '1.0', '12345678901234567890', '-', '01', '1.', '.5', 'true', 'false', 'null', 'nul', 'tru'];

function randomValue(r: () => number, depth: number): string {
  const k = r();
  if (depth > 3 || k < 0.45) return r() < 0.6 ? STRINGS[Math.floor(r() * STRINGS.length)] : SCALARS[Math.floor(r() * SCALARS.length)];
  if (k < 0.7) {
    const n = Math.floor(r() * 4);
    return '[' + Array.from({ length: n }, () => randomValue(r, depth + 1)).join(r() < 0.05 ? ',,' : ',') + (r() < 0.03 ? ',' : '') + ']';
  }
  return randomObject(r, depth + 1);
}

const KEYS = ['text', 'id', 'meta', 'content', 'other', 'te\\u0078t', 'constructor', '__proto__', 'meta.content', 'Text'];

function randomObject(r: () => number, depth: number): string {
  const n = Math.floor(r() * 5);
  const members: string[] = [];
  for (let i = 0; i < n; i++) {
    const key = KEYS[Math.floor(r() * KEYS.length)];
    const ws = r() < 0.2 ? ' \t' : '';
    members.push(`${ws}"${key}"${ws}:${ws}${key === 'meta' && r() < 0.7 ? randomObject(r, depth + 1) : randomValue(r, depth)}`);
  }
  return '{' + members.join(',') + (r() < 0.03 ? ',' : '') + '}';
}

function randomLine(r: () => number): Buffer {
  const k = r();
  let s: string;
  if (k < 0.04) s = '';
  else if (k < 0.06) s = ['[1,2]', '"str"', '5', 'null', ' ', '\r', '{', '}', '{"text":"a"} x', '{"text":"a"}}'][Math.floor(r() * 10)];
  else s = randomObject(r, 0);
  if (r() < 0.1) s += '\r';
  let b = Buffer.from(s, 'utf8');
  if (r() < 0.08 && b.length > 0) {  // a random byte mutation: bad UTF-8, a control byte, a truncation
    const at = Math.floor(r() * b.length);
    const m = r();
    b = Buffer.from(b);
    if (m < 0.4) b[at] = [0xff, 0xc3, 0xed, 0x80, 0xf4][Math.floor(r() * 5)];
    else if (m < 0.6) b[at] = Math.floor(r() * 0x20);
    else b = b.subarray(0, at);
    if (b.includes(0x0a)) b = Buffer.from(b.toString('latin1').replace(/\n/g, ' '), 'latin1');
  }
  return b;
}

for (const [field, idField] of [['text', undefined], ['text', 'id'], ['meta.content', 'id'], ['meta\\.content', undefined], ['constructor', undefined]] as const) {
  test(`random lines: the native reader agrees with JSON.parse + strict UTF-8 (field ${field}${idField ? `, id ${idField}` : ''})`, async () => {
    const r = rng(field.length * 31 + (idField ? 7 : 0));
    for (let round = 0; round < 8; round++) {
      const lines = Array.from({ length: 400 }, () => randomLine(r));
      const lastNl = r() < 0.5;
      const data = Buffer.concat(lines.flatMap((l, i) => (i < lines.length - 1 || lastNl ? [l, Buffer.from('\n')] : [l])));
      const f = write(`rand-${round}.jsonl`, data);
      const got = await docs([f], { field, idField, batchBytes: 1 + Math.floor(r() * 3000) });
      // an input that ends in an empty final line without '\n' has one line fewer
      const want = lines.slice(0, lastNl || lines[lines.length - 1].length > 0 ? lines.length : lines.length - 1);
      assert.is(got.length, want.length, `round ${round}: line count`);
      for (let i = 0; i < want.length; i++) {
        const truth = referenceLine(want[i], field, idField);
        const g = got[i];
        const where = `round ${round}, line ${i + 1}: ${JSON.stringify(want[i].toString('latin1')).slice(0, 200)} -> ${g.reason}`;
        assert.is(g.line, i + 1, where);
        if (truth.category === 'ok' && truth.id?.startsWith('integer:') && g.reason !== undefined) {
          // JSON.parse cannot tell 1.0 from 1: a number with a fraction or an exponent is a type error here
          assert.is(reasonCategory(g.reason), 'type', where);
          continue;
        }
        assert.is(g.reason === undefined ? 'ok' : reasonCategory(g.reason), truth.category, where);
        if (truth.category !== 'ok') continue;
        assert.is(g.text, truth.text, where);
        if (idField !== undefined) {
          if (truth.id!.startsWith('integer:')) {
            assert.ok(/^-?\d+$/.test(g.id!), where);
            assert.is(Number(g.id), Number(truth.id!.slice(8)), where);
          } else {
            assert.is(g.id, truth.id, where);
          }
        }
      }
    }
  });
}

test('reference model check: a broken reader would be caught (the categories differ on these lines)', () => {
  const L = (s: string) => Buffer.from(s);
  assert.is(referenceLine(L('{"text":"\\ud800"}'), 'text').category, 'surrogate');
  assert.is(referenceLine(L('{"text":"a","text":5}'), 'text').category, 'type');
  assert.is(referenceLine(L('{"meta":{"content":"x"},"meta":1}'), 'meta.content').category, 'missing');
  assert.is(referenceLine(L('{"te\\u0078t":"x"}'), 'text').text, 'x');
});

// ---------------------------------------------------------------------------------------------------------
// Exact behaviour

test('reasons, in the words of the JavaScript reader; skip and empty keep line i = document i', async () => {
  const lines = [
    '{"text":"first"}', 'not json', '[1, 2]', '"a string"', '{"body":"x"}', '{"text":5}', '{"text":null}', '{"text":{"a":1}}',
    '', '\r', '{"text":"\\ud800"}', '{"text":true}', '{"text":[1]}', '{"text":"last"}',
  ];
  const f = write('reasons.jsonl', Buffer.concat([Buffer.from(lines.join('\n') + '\n'), Buffer.from('{"text":"x\xff"}\n', 'latin1')]));
  const got = await docs([f]);
  assert.equal(got.map((d) => d.reason ?? d.text), [
    'first', "not valid JSON (unexpected 'o' at byte 1)", 'not a JSON object', 'not a JSON object', "field 'text' is missing",
    "field 'text' is number, expected a string", "field 'text' is null, expected a string", "field 'text' is object, expected a string",
    'empty line', 'empty line', "field 'text' holds an unpaired surrogate (\\uD800-\\uDFFF escape), which has no UTF-8 form",
    "field 'text' is boolean, expected a string", "field 'text' is object, expected a string", 'last',
    'invalid UTF-8 near byte 10 of the line',
  ]);
  const empty = await readAll([f], { onBadLine: 'empty' });
  assert.is(empty[0].valid, undefined);
  assert.is(empty.reduce((n, b) => n + b.count, 0), lines.length + 1);
  await rejects(readAll([f]), (e: NeardupError) => e.code === 'ERR_NEARDUP_BAD_LINE' && e.line === 2 &&
    e.message === `${f}:2: not valid JSON (unexpected 'o' at byte 1) (use --on-bad-line skip|empty to go on)`);
});

test('fields: dot paths into objects, the last of repeated keys, escaped keys, own members only, ids', async () => {
  const f = write('fields.jsonl', [
    '{"meta":{"content":"deep","x":1},"text":"top","id":"a\\u00e9"}',
    '{"meta":{"content":"one"},"meta":{"content":"two"},"id":12345678901234567890}',
    '{"meta":{"content":"gone"},"meta":5,"id":-0}',
    '{"meta":[{"content":"no"}],"id":1.5}',
    '{"me\\u0074a":{"c\\u006fntent":"escaped"},"id":true}',
    '{"a.b":"dotted","text":"t","id":null}',
  ].join('\n'));
  const deep = await docs([f], { field: 'meta.content' });
  assert.equal(deep.map((d) => d.reason ?? d.text), ['deep', 'two', "field 'meta.content' is missing ('meta' is a number, not an object)",
    "field 'meta.content' is missing ('meta' is an array, not an object)", 'escaped', "field 'meta.content' is missing"]);
  const ids = await docs([f], { field: 'meta.content', idField: 'id' });
  assert.equal(ids.map((d) => d.reason ?? d.id), ['"aé"', '12345678901234567890', "field 'meta.content' is missing ('meta' is a number, not an object)",
    "field 'meta.content' is missing ('meta' is an array, not an object)", "field 'id' is boolean, expected a string or an integer",
    "field 'meta.content' is missing"]);
  const dotted = await docs([f], { field: 'a\\.b' });
  assert.is(dotted[5].text, 'dotted');
  const num = await docs([write('num.jsonl', '{"text":"x","id":1e3}\n{"text":"x","id":7}\n')], { idField: 'id' });
  assert.equal(num.map((d) => d.reason ?? d.id), ["field 'id' is a number with a fraction or an exponent, expected a string or an integer", '7']);
  assert.throws(() => native.parseFieldPath('a..b'), /empty name/);
  assert.throws(() => native.parseFieldPath('a\\b'), /backslash/);
  assert.equal(native.parseFieldPath('a\\\\b.c'), ['a\\b', 'c']);
});

test('BOM, CRLF, a final line without newline, empty files, deep nesting, a line split over many chunks', async () => {
  const bom = Buffer.from([0xef, 0xbb, 0xbf]);
  const f = write('bom.jsonl', Buffer.concat([bom, Buffer.from('{"text":"a"}\r\n{"text":"b"}\r\n{"text":"c"}')]));
  assert.equal((await docs([f])).map((d) => d.text), ['a', 'b', 'c']);
  assert.equal(await docs([write('empty.jsonl', '')]), []);
  assert.equal((await docs([write('nl.jsonl', '\n')])).map((d) => d.reason), ['empty line']);
  const deep = '['.repeat(100000) + ']'.repeat(100000);
  assert.equal((await docs([write('deep.jsonl', `{"x":${deep},"text":"after"}\n{"text":${deep}}\n`)])).map((d) => d.reason ?? d.text),
    ['after', "field 'text' is object, expected a string"]);
  const long = 'w'.repeat(3_000_000);
  const lf = write('long.jsonl', `{"text":"a"}\n${JSON.stringify({ text: long })}\n{"text":"b"}\n`);
  for (const batchBytes of [1000, 65536, 1 << 24]) {
    const got = await docs([lf], { batchBytes });
    assert.equal(got.map((d) => d.text?.length), [1, long.length, 1], `batchBytes ${batchBytes}`);
  }
  await rejects(readAll([lf], { maxLineBytes: 100_000, batchBytes: 1000 }),
    (e: NeardupError) => e.code === 'ERR_NEARDUP_INVALID_INPUT' && e.line === 2 && /long\.jsonl:2: the line is longer than 100000 bytes/.test(e.message));
  await rejects(readAll([lf], { maxLineBytes: 100_000 }), (e: NeardupError) => e.line === 2);
  // the same through the stream path (gzip): lines assembled across chunks, the limit checked while buffering
  const lgz = write('long.jsonl.gz', zlib.gzipSync(fs.readFileSync(lf)));
  for (const batchBytes of [1000, 65536]) assert.equal((await docs([lgz], { batchBytes })).map((d) => d.text?.length), [1, long.length, 1]);
  await rejects(readAll([lgz], { maxLineBytes: 100_000, batchBytes: 1000 }), (e: NeardupError) => e.line === 2 && /long\.jsonl\.gz:2: the line is longer/.test(e.message));
  await rejects(readAll([lgz], { maxLineBytes: 100_000 }), (e: NeardupError) => e.line === 2);
  // the plain-file path and the stream path (a FIFO is not a regular file) give the same documents
  const fifo = path.join(dir, 'fifo.jsonl');
  execFileSync('mkfifo', [fifo]);
  const writer = new Promise<void>((resolve, reject) => fs.writeFile(fifo, fs.readFileSync(f), (e) => (e ? reject(e) : resolve())));
  assert.equal(await docs([fifo]), await docs([f]));
  await writer;
});

// ---------------------------------------------------------------------------------------------------------
// Compressed inputs

const CORPUS = Array.from({ length: 3000 }, (_, i) => JSON.stringify({ id: i, text: `document ${i} ${'lorem ipsum '.repeat(i % 40)}` })).join('\n') + '\n';

test('gzip: detected by magic bytes whatever the name, multi-member files, corrupt and truncated files', async () => {
  const plain = await docs([write('c.jsonl', CORPUS)], { idField: 'id' });
  const gz = zlib.gzipSync(CORPUS);
  assert.equal(await docs([write('c-gz.data', gz)], { idField: 'id' }), plain);
  const half = CORPUS.length >> 1;
  const multi = Buffer.concat([zlib.gzipSync(CORPUS.slice(0, half)), zlib.gzipSync(CORPUS.slice(half))]);
  assert.equal(await docs([write('multi.jsonl.gz', multi)], { idField: 'id' }), plain);
  await rejects(readAll([write('trunc.jsonl.gz', gz.subarray(0, gz.length >> 1))]),
    (e: NeardupError) => e.code === 'ERR_NEARDUP_CORRUPT' && e.message.includes('trunc.jsonl.gz'));
  const bad = Buffer.from(gz);
  bad.fill(0x41, 100, 400);
  await rejects(readAll([write('bad.jsonl.gz', bad)]), (e: NeardupError) => e.code === 'ERR_NEARDUP_CORRUPT' && e.message.includes('bad.jsonl.gz'));
});

test('zstd: raw, RLE and compressed frames, several frames, skippable frames; truncated and corrupt files name the file', async () => {
  const plain = await docs([write('z.jsonl', CORPUS)], { idField: 'id' });
  const bytes = Buffer.from(CORPUS);
  const third = Math.floor(bytes.length / 3);
  const frames = Buffer.concat([zstdRawFrame(bytes.subarray(0, third), 1000), zstdSkippableFrame(50), zstdRawFrame(bytes.subarray(third, 2 * third)),
    zstdRawFrame(new Uint8Array(0)), zstdRawFrame(bytes.subarray(2 * third))]);
  assert.equal(await docs([write('frames.jsonl.zst', frames)], { idField: 'id' }), plain);
  // a frame that expands a lot (RLE) and a text made by the zstd tool (compressed blocks, checksum)
  const rle = Buffer.concat([zstdRawFrame(Buffer.from('{"text":"')), zstdRleFrame(0x61, 100000), zstdRawFrame(Buffer.from('"}\n'))]);
  assert.equal((await docs([write('rle.jsonl.zst', rle)])).map((d) => d.text), ['a'.repeat(100000)]);
  const tool = await docs([path.join(FIXTURES, 'corpus.jsonl.zst')]);
  const toolPlain = await docs([path.join(FIXTURES, 'corpus.jsonl')]);
  assert.ok(tool.length > 100);
  assert.equal(tool, toolPlain);
  const multi = await docs([path.join(FIXTURES, 'corpus-2frames.jsonl.zst')]);
  assert.equal(multi, toolPlain);
  const z = fs.readFileSync(path.join(FIXTURES, 'corpus.jsonl.zst'));
  await rejects(readAll([write('trunc.jsonl.zst', z.subarray(0, z.length - 40))]),
    (e: NeardupError) => e.code === 'ERR_NEARDUP_CORRUPT' && /trunc\.jsonl\.zst/.test(e.message) && /ends inside a frame|not valid zstd/.test(e.message));
  const bad = Buffer.from(z);
  bad.fill(0x13, 40, 90);
  await rejects(readAll([write('bad.jsonl.zst', bad)]),
    (e: NeardupError) => e.code === 'ERR_NEARDUP_CORRUPT' && /bad\.jsonl\.zst/.test(e.message));
});

test('several files: firstLine restarts, fileIndex, bytes add up to the uncompressed sizes', async () => {
  const a = write('a.jsonl', '{"text":"a1"}\n{"text":"a2"}\n');
  const b = write('b.jsonl.zst', zstdRawFrame(Buffer.from('{"text":"b1"}\n')));
  const batches = await readAll([a, b, a]);
  assert.equal(batches.map((x) => [x.fileIndex, x.firstLine, x.count, x.compression]), [[0, 1, 2, 'none'], [1, 1, 1, 'zstd'], [2, 1, 2, 'none']]);
  assert.is(batches.reduce((n, x) => n + x.bytes, 0), 28 + 14 + 28);
});

test.after(() => fs.rmSync(dir, { recursive: true, force: true }));
test.run();
