// Decompression bombs and oversized units (issue 36): a Parquet page whose zstd/gzip data expands far beyond
// the size its header declares, a column chunk larger than the memory limit, a zstd JSONL input that expands
// to one endless line. Each must fail promptly with ERR_NEARDUP_INVALID_INPUT naming the file (and the row
// group and column, or the line), after holding no more than the limit: the peak RSS of the run is bounded.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as zlib from 'node:zlib';
import { TSX_FLAGS } from './support/tsx';
import { parquetBytes, readAllDocs, rejects, zstdBombFrame } from './support/formats';

const MAIN = path.join(__dirname, '..', 'lib', 'cli', 'main.ts');
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'neardup-bombs-'));
test.after(() => fs.rmSync(tmp, { recursive: true, force: true }));
const TIME = fs.existsSync('/usr/bin/time') ? '/usr/bin/time' : undefined;

/** Runs the CLI with `env` added; the peak RSS in MiB when /usr/bin/time is there. */
function run(args: string[], env: Record<string, string> = {}): { code: number; stderr: string; peakMb?: number } {
  const cmd = TIME ? [TIME, '-f', 'peak-kb=%M', process.execPath] : [process.execPath];
  const r = spawnSync(cmd[0], [...cmd.slice(1), ...TSX_FLAGS, MAIN, ...args], {
    cwd: tmp, env: { ...process.env, ...env }, maxBuffer: 1 << 26, timeout: 120_000,
  });
  const stderr = r.stderr.toString();
  const m = /peak-kb=(\d+)/.exec(stderr);
  return { code: r.status ?? -1, stderr, peakMb: m ? Number(m[1]) / 1024 : undefined };
}

const GiB = 2 ** 30;

test('a Parquet ZSTD page that expands far past its declared size stops at that size, naming row group and column', async () => {
  // each page's data becomes a 2 GiB frame of RLE blocks (64 KB on disk); the header declares the real page size
  const bomb = (b: Uint8Array) => new Uint8Array(zstdBombFrame(b, 0x61, 2 * GiB));
  const file = path.join(tmp, 'zstd-bomb.parquet');
  fs.writeFileSync(file, await parquetBytes([{ name: 'text', data: ['a short document', 'another one'] }], { codec: 'ZSTD', zstd: bomb }));
  assert.ok(fs.statSync(file).size < 200_000);
  const r = run(['dedup', file, '--flags', path.join(tmp, 'f1')]);
  assert.is.not(r.code, 0);
  assert.match(r.stderr, /zstd-bomb\.parquet: row group 1 of 1, column 'text': a ZSTD page expands to more than the \d+ bytes its header declares/);
  assert.not.match(r.stderr, /at .*\.ts:\d+/, 'no stack');
  if (r.peakMb !== undefined) assert.ok(r.peakMb < 400, `peak RSS ${r.peakMb.toFixed(0)} MiB`);
  assert.not.ok(fs.existsSync(path.join(tmp, 'f1')), 'no output on failure');
});

test('a Parquet GZIP page that expands past its declared size is refused the same way', async () => {
  const zeros = zlib.gzipSync(Buffer.alloc(64 << 20));  // ~64 KB of gzip for 64 MiB
  const file = path.join(tmp, 'gzip-bomb.parquet');
  fs.writeFileSync(file, await parquetBytes([{ name: 'text', data: ['one', 'two'] }], { codec: 'GZIP', gzip: () => new Uint8Array(zeros) }));
  const r = run(['dedup', file, '--flags', path.join(tmp, 'f2')]);
  assert.is.not(r.code, 0);
  assert.match(r.stderr, /gzip-bomb\.parquet: row group 1 of 1, column 'text': a GZIP page expands to more than the \d+ bytes its header declares/);
});

test('a Parquet column chunk larger than the memory limit is refused before it is read (NEARDUP_DOCUMENT_MEMORY, --memory)', async () => {
  const big = 'x'.repeat(65 << 20);  // over the 64 MiB that dedup --memory budgets count as at least
  const file = path.join(tmp, 'big-chunk.parquet');
  fs.writeFileSync(file, await parquetBytes([{ name: 'id', data: [1, 2], type: 'INT32' }, { name: 'text', data: ['small', big] }], { codec: 'GZIP' }));
  assert.ok(fs.statSync(file).size < 100_000, 'compresses well');
  for (const [args, env] of [[[], { NEARDUP_DOCUMENT_MEMORY: '1M' }], [['--memory', '2M'], {}], [['--memory', '64M'], {}]] as const) {
    const r = run(['dedup', file, '--flags', path.join(tmp, 'f3'), ...args], env);
    assert.is.not(r.code, 0, r.stderr);
    assert.match(r.stderr, /big-chunk\.parquet: row group 1 of 1, column 'text': the column chunk is 65\.\d MiB uncompressed, more than the memory limit of (1|64)\.0 MiB/);
  }
  // the library call: memoryLimit
  await rejects(readAllDocs([file], { memoryLimit: 1 << 20 }), (e) => e.code === 'ERR_NEARDUP_INVALID_INPUT' && /column 'text'/.test(e.message));
  assert.is((await readAllDocs([file], { memoryLimit: 80 << 20 }))[1].text, big);
});

test('a zstd JSONL input that expands to one endless line stops at the document memory, naming the line', () => {
  const file = path.join(tmp, 'endless.jsonl.zst');
  fs.writeFileSync(file, Buffer.concat([
    zstdBombFrame(Buffer.from('{"text":"first"}\n{"text":"'), 0x61, 0),
    zstdBombFrame(new Uint8Array(0), 0x61, 2 * GiB),
  ]));
  const r = run(['dedup', file, '--flags', path.join(tmp, 'f4')], { NEARDUP_DOCUMENT_MEMORY: '64M' });
  assert.is.not(r.code, 0);
  assert.match(r.stderr, /endless\.jsonl\.zst:2: the line is longer than 67108864 bytes/);
  if (r.peakMb !== undefined) assert.ok(r.peakMb < 600, `peak RSS ${r.peakMb.toFixed(0)} MiB`);
});

test('Parquet row groups are read in slices of rows: documents, ids and lines as one whole read', async () => {
  const n = 5000;
  const texts = Array.from({ length: n }, (_, i) => `document ${i} ${'w'.repeat(i % 50)}`);
  const file = path.join(tmp, 'slices.parquet');
  fs.writeFileSync(file, await parquetBytes([{ name: 'id', data: texts.map((_, i) => `d${i}`) }, { name: 'text', data: texts }],
    { codec: 'SNAPPY', rowGroupSize: 3000, pageSize: 4096 }));
  for (const batchBytes of [1, 4096, 1 << 24]) {
    const docs = await readAllDocs([file], { idField: 'id', batchBytes });
    assert.is(docs.length, n);
    docs.forEach((d, i) => {
      assert.is(d.text, texts[i]);
      assert.is(d.id, `"d${i}"`);
      assert.is(d.line, i + 1);
    });
  }
});

test('Parquet type mismatches: binary text read when valid UTF-8, else named binary; a list column named a list', async () => {
  const bin = path.join(tmp, 'binary.parquet');
  fs.writeFileSync(bin, await parquetBytes([{ name: 'text', type: 'BYTE_ARRAY', data: [Buffer.from('plain text'), Buffer.from([0x61, 0xff, 0x62])] }]));
  assert.equal((await readAllDocs([bin])).map((d) => d.reason ?? d.text),
    ['plain text', "field 'text' is binary (BYTE_ARRAY without a UTF-8 annotation) and not valid UTF-8"]);
  const list = path.join(tmp, 'list.parquet');
  fs.writeFileSync(list, await parquetBytes([{ name: 'text', data: [['a', 'b'], ['c']] }]));
  assert.equal((await readAllDocs([list])).map((d) => d.reason ?? d.text),
    ["field 'text' is a list, expected a string", "field 'text' is a list, expected a string"]);
  const r = run(['dedup', '--fast', list]);
  assert.is(r.code, 1);
  assert.match(r.stderr, /list\.parquet:1: field 'text' is a list, expected a string/);
});

test.run();
