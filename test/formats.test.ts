// Parquet input (snappy, gzip, zstd and uncompressed pages; several row groups; nulls; nested members; ids;
// corrupt files), and the dedup outputs that carry ids, compress, or go one per input (--kept-dir).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as zlib from 'node:zlib';
import { readDocuments } from '../lib/io/input';
import type { NeardupError } from '../lib/util/errors';
import { cli } from './cli-helper';
import { parquetBytes, readAllDocs, rejects, zstdRawFrame } from './support/formats';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'neardup-formats-'));
const write = (name: string, data: string | Buffer) => {
  const f = path.join(dir, name);
  fs.mkdirSync(path.dirname(f), { recursive: true });
  fs.writeFileSync(f, data);
  return f;
};

const docs = readAllDocs;

const TEXTS = Array.from({ length: 500 }, (_, i) => `row ${i}: caf\u00e9 \u4e2d\u6587 ${'words and more words '.repeat(i % 30)}`);

test('Parquet: snappy, gzip, zstd and uncompressed pages, several row groups: row i = document i, string and integer ids', async () => {
  const want = TEXTS.map((t, i) => ({ text: t, reason: undefined, id: `"id-${i}"`, line: i + 1 }));
  for (const codec of ['SNAPPY', 'GZIP', 'ZSTD', 'UNCOMPRESSED'] as const) {
    const f = write(`t-${codec}.parquet`, await parquetBytes([
      { name: 'text', data: TEXTS, type: 'STRING' }, { name: 'key', data: TEXTS.map((_, i) => `id-${i}`), type: 'STRING' },
      { name: 'n', data: TEXTS.map((_, i) => BigInt(i) * 1000000000000n), type: 'INT64' }, { name: 'm', data: TEXTS.map((_, i) => i), type: 'INT32' },
    ], { codec, rowGroupSize: 64 }));
    assert.equal(await docs([f], { idField: 'key', batchBytes: 5000 }), want, codec);
    assert.equal((await docs([f], { idField: 'n' })).map((d) => d.id), TEXTS.map((_, i) => String(BigInt(i) * 1000000000000n)), codec);
    assert.equal((await docs([f], { idField: 'm' })).map((d) => d.id), TEXTS.map((_, i) => String(i)), codec);
    const batches: number[] = [];
    for await (const b of readDocuments([f], { batchBytes: 5000 })) batches.push(b.firstLine);
    assert.ok(batches.length > 8, codec);
  }
});

test('xz, bzip2, lz4, zip, 7-Zip and lzip inputs are named, with the formats read and how to decompress', async () => {
  const heads: [string, number[]][] = [
    ['xz', [0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00]], ['bzip2', [0x42, 0x5a, 0x68, 0x39]], ['lz4', [0x04, 0x22, 0x4d, 0x18]],
    ['zip', [0x50, 0x4b, 0x03, 0x04]], ['7-Zip', [0x37, 0x7a, 0xbc, 0xaf, 0x27, 0x1c]], ['lzip', [0x4c, 0x5a, 0x49, 0x50]],
  ];
  for (const [name, magic] of heads) {
    const f = write(`in-${name}.bin`, Buffer.concat([Buffer.from(magic), Buffer.alloc(100, 7)]));
    await rejects((async () => { for await (const _ of readDocuments([f])) void _; })(),
      (e: NeardupError) => e.code === 'ERR_NEARDUP_UNSUPPORTED' && e.message.startsWith(`${f}: ${name}-compressed input is not read`), name);
  }
  // through the CLI: a file and standard input (one process each)
  const r = cli(dir, ['dedup', '--fast', 'in-xz.bin']);
  assert.is(r.code, 1);
  assert.match(r.stderr, /in-xz\.bin: xz-compressed input is not read \(inputs are JSONL, plain, gzip or zstd, and Parquet\); decompress it first, e\.g\. 'xz -dc in-xz\.bin \| neardup \.\.\. -'/);
  const s = cli(dir, ['dedup', '--fast', '-'], fs.readFileSync(path.join(dir, 'in-lz4.bin')));
  assert.is(s.code, 1);
  assert.match(s.stderr, /<stdin>: lz4-compressed input is not read/);
  // a JSONL line that merely starts with such letters is text ("BZh" is bzip2's magic, not '{"BZh')
  const ok = write('bzh.jsonl', '{"text":"BZh91AY&SY"}\n');
  assert.is((await docs([ok]))[0].text, 'BZh91AY&SY');
});

test('Parquet: nulls and wrong types follow --on-bad-line (FILE:ROW); a missing column names the columns', async () => {
  const f = write('nulls.parquet', await parquetBytes([
    { name: 'text', data: ['a', null, 'c', 'd'], type: 'STRING', nullable: true }, { name: 'id', data: [1.5, 2, 3, 4], type: 'DOUBLE' },
    { name: 'k', data: ['x', 'y', null, 'w'], type: 'STRING', nullable: true },
  ], { rowGroupSize: 2 }));
  assert.equal((await docs([f])).map((d) => d.reason ?? d.text), ['a', "field 'text' is null, expected a string", 'c', 'd']);
  assert.equal((await docs([f], { idField: 'k' })).map((d) => d.reason ?? d.id),
    ['"x"', "field 'text' is null, expected a string", "field 'k' is null, expected a string or an integer", '"w"']);
  assert.equal((await docs([f], { idField: 'id' })).map((d) => d.reason ?? d.id)[0], "field 'id' is number, expected a string or an integer");
  await rejects((async () => { for await (const _ of readDocuments([f])) void _; })(),
    (e: NeardupError) => e.code === 'ERR_NEARDUP_BAD_LINE' && e.line === 2 && e.message.startsWith(`${f}:2: field 'text' is null`));
  await rejects((async () => { for await (const _ of readDocuments([f], { field: 'body' })) void _; })(),
    (e: NeardupError) => e.code === 'ERR_NEARDUP_INVALID_INPUT' && /no column 'body' for the field \(columns: text, id, k\)/.test(e.message));
  const e = cli(dir, ['dedup', '--fast', 'nulls.parquet']);
  assert.is(e.code, 1);
  assert.match(e.stderr, /nulls\.parquet:2: field 'text' is null/);
});

test('Parquet: a nested member by dot path (a struct/JSON column)', async () => {
  const f = write('nested.parquet', await parquetBytes([
    { name: 'meta', data: [{ content: 'deep one', n: 1 }, { content: 'deep two', n: 2 }, { other: 1 }] },
  ]));
  assert.equal((await docs([f], { field: 'meta.content' })).map((d) => d.reason ?? d.text), ['deep one', 'deep two', "field 'meta.content' is missing"]);
});

test('Parquet: corrupt and truncated files are ERR_NEARDUP_CORRUPT naming the file', async () => {
  const good = await parquetBytes([{ name: 'text', data: TEXTS, type: 'STRING' }], { rowGroupSize: 100 });
  const cases: [string, Buffer][] = [
    ['trunc.parquet', good.subarray(0, good.length - 30)],
    ['footer.parquet', Buffer.concat([good.subarray(0, good.length - 8), Buffer.from([0xff, 0xff, 0xff, 0x7f]), Buffer.from('PAR1')])],
    ['pages.parquet', (() => { const b = Buffer.from(good); b.fill(0x77, 40, 2000); return b; })()],
    ['magic-only.parquet', Buffer.from('PAR1')],
  ];
  for (const [name, data] of cases) {
    const f = write(name, data);
    await rejects((async () => { for await (const _ of readDocuments([f])) void _; })(),
      (e: NeardupError) => e.code === 'ERR_NEARDUP_CORRUPT' && e.message.includes(name), name);
  }
  const r = cli(dir, ['dedup', '--fast', 'trunc.parquet']);
  assert.is(r.code, 1);
  assert.match(r.stderr, /cannot read 'trunc\.parquet': not a valid Parquet file/);
  const z = cli(dir, ['minhash', write('x.jsonl.zst', zstdRawFrame(Buffer.from('{"text":"ok"}\n')).subarray(0, 12))]);
  assert.is(z.code, 1);
  assert.match(z.stderr, /x\.jsonl\.zst/);
});

// ---------------------------------------------------------------------------------------------------------
// dedup outputs

// 40 documents: pairs (2k, 2k+1) are near-copies for k < 10
const DOCS = Array.from({ length: 40 }, (_, i) => {
  const base = i < 20 ? Math.floor(i / 2) : i;
  return `document number ${base} ${'the quick brown fox jumps over the lazy dog '.repeat(3)} ${base * 7919} tail ${base}` + (i < 20 && i % 2 ? '!' : '');
});
const line = (t: string, i: number) => JSON.stringify({ id: i % 3 === 0 ? i : `doc-${i}`, text: t });
const JSONL = DOCS.map(line).join('\n') + '\n';

test('dedup --id-field: pairs and clusters carry ids, --removed-ids; without it the outputs are as before', () => {
  write('d.jsonl', JSONL);
  const plain = cli(dir, ['dedup', 'd.jsonl', '--pairs', 'p0', '--clusters', 'c0', '--flags', 'f0']);
  assert.is(plain.code, 0, plain.stderr);
  const flags = fs.readFileSync(path.join(dir, 'f0'), 'utf8').trim().split('\n');
  assert.equal(flags.map((f, i) => (i < 20 && i % 2 ? '0' : '1')), flags, 'the planted pairs are found');
  const clusters = fs.readFileSync(path.join(dir, 'c0'), 'utf8');
  assert.is(clusters, DOCS.map((_, i) => `${i < 20 && i % 2 ? i - 1 : i}\n`).join(''));
  const pairs = fs.readFileSync(path.join(dir, 'p0'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
  assert.equal(Object.keys(pairs[0]), ['a', 'b', 'estimate', 'exact']);
  const withIds = cli(dir, ['dedup', 'd.jsonl', '--id-field', 'id', '--pairs', 'p1', '--clusters', 'c1', '--flags', 'f1', '--removed-ids', 'r1']);
  assert.is(withIds.code, 0, withIds.stderr);
  assert.is(fs.readFileSync(path.join(dir, 'f1'), 'utf8'), flags.join('\n') + '\n');
  const id = (i: number) => (i % 3 === 0 ? i : `doc-${i}`);
  const p1 = fs.readFileSync(path.join(dir, 'p1'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
  assert.is(p1.length, pairs.length);
  for (const p of p1) {
    assert.equal(Object.keys(p), ['a', 'b', 'a_id', 'b_id', 'estimate', 'exact']);
    assert.is(p.a_id, id(p.a));
    assert.is(p.b_id, id(p.b));
  }
  const c1 = fs.readFileSync(path.join(dir, 'c1'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
  assert.equal(c1, DOCS.map((_, i) => ({ id: id(i), kept: i < 20 && i % 2 ? i - 1 : i, kept_id: id(i < 20 && i % 2 ? i - 1 : i) })));
  assert.equal(fs.readFileSync(path.join(dir, 'r1'), 'utf8').trim().split('\n').map((l) => JSON.parse(l)),
    DOCS.map((_, i) => i).filter((i) => i < 20 && i % 2).map(id));
  // a bad id is a bad line (skip: its id is null in the outputs)
  write('badid.jsonl', JSONL + JSON.stringify({ id: 1.5, text: DOCS[0] }) + '\n');
  const bad = cli(dir, ['dedup', 'badid.jsonl', '--id-field', 'id']);
  assert.is(bad.code, 1);
  assert.match(bad.stderr, /badid\.jsonl:41: field 'id' is a number with a fraction/);
  const skip = cli(dir, ['dedup', 'badid.jsonl', '--id-field', 'id', '--on-bad-line', 'skip', '--clusters', 'c2']);
  assert.is(skip.code, 0, skip.stderr);
  assert.equal(JSON.parse(fs.readFileSync(path.join(dir, 'c2'), 'utf8').trim().split('\n')[40]), { id: null, kept: 40, kept_id: null });
  assert.is(cli(dir, ['dedup', 'd.jsonl', '--removed-ids', 'x']).code, 2);
});

test('dedup --kept compresses by name; --kept-dir writes one file per input, same name and compression', () => {
  const half = DOCS.length / 2;
  const lines = DOCS.map(line);
  const a = lines.slice(0, half).join('\n') + '\n', b = lines.slice(half).join('\n') + '\n';
  write('in/a.jsonl.gz', zlib.gzipSync(a));
  write('in/b.jsonl.zst', zstdRawFrame(Buffer.from(b)));
  write('in/c.jsonl', a);  // all duplicates of a's documents... except that a comes first
  const r = cli(dir, ['dedup', 'in/a.jsonl.gz', 'in/b.jsonl.zst', 'in/c.jsonl', '--kept-dir', 'out', '--kept', 'k.gz']);
  assert.is(r.code, 2, 'not both');
  const ok = cli(dir, ['dedup', 'in/a.jsonl.gz', 'in/b.jsonl.zst', 'in/c.jsonl', '--kept-dir', 'out', '--flags', 'kf']);
  assert.is(ok.code, 0, ok.stderr);
  assert.equal(fs.readdirSync(path.join(dir, 'out')).sort(), ['a.jsonl.gz', 'b.jsonl.zst', 'c.jsonl']);
  const flags = fs.readFileSync(path.join(dir, 'kf'), 'utf8').trim().split('\n');
  const all = [...lines, ...lines.slice(0, half)];
  const keptOf = (from: number, n: number) => all.slice(from, from + n).filter((_, i) => flags[from + i] === '1').map((l) => l + '\n').join('');
  const outA = fs.readFileSync(path.join(dir, 'out', 'a.jsonl.gz'));
  assert.is(outA[0], 0x1f);
  assert.is(zlib.gunzipSync(outA).toString(), keptOf(0, half));
  const outB = fs.readFileSync(path.join(dir, 'out', 'b.jsonl.zst'));
  assert.equal([...outB.subarray(0, 4)], [0x28, 0xb5, 0x2f, 0xfd]);
  assert.is(fs.readFileSync(path.join(dir, 'out', 'c.jsonl'), 'utf8'), '', 'c repeats a: nothing kept');
  // the zstd output reads back (through the reader) as the kept lines
  const back = cli(dir, ['dedup', '--fast', 'out/b.jsonl.zst']);
  assert.is(JSON.parse(back.stdout.toString()).documents, keptOf(half, half).split('\n').length - 1);
  // --kept with a compressed name
  for (const name of ['k.jsonl.gz', 'k.jsonl.zst', 'k.jsonl']) {
    const k = cli(dir, ['dedup', 'in/a.jsonl.gz', 'in/b.jsonl.zst', '--kept', name]);
    assert.is(k.code, 0, k.stderr);
    const data = fs.readFileSync(path.join(dir, name));
    const text = name.endsWith('.gz') ? zlib.gunzipSync(data).toString() : name.endsWith('.zst')
      ? (assert.equal([...data.subarray(0, 4)], [0x28, 0xb5, 0x2f, 0xfd]), cli(dir, ['shingles', '--unit', 'word', '-n', '1', '--hash', 'murmur3_32', name]).stdout.toString())
      : data.toString();
    if (!name.endsWith('.zst')) assert.is(text, keptOf(0, DOCS.length));
    else assert.is(text.trim().split('\n').length, flags.slice(0, DOCS.length).filter((f) => f === '1').length);
  }
  // refusals: two inputs of one name; an output that is an input (device + inode)
  write('in2/a.jsonl.gz', zlib.gzipSync(a));
  const same = cli(dir, ['dedup', 'in/a.jsonl.gz', 'in2/a.jsonl.gz', '--kept-dir', 'out']);
  assert.is(same.code, 2);
  assert.match(same.stderr, /same name 'a\.jsonl\.gz'/);
  const over = cli(dir, ['dedup', 'in/a.jsonl.gz', 'in/c.jsonl', '--kept-dir', 'in']);
  assert.is(over.code, 1);
  assert.match(over.stderr, /--kept-dir 'in\/a\.jsonl\.gz' is the input/);
  assert.is(zlib.gunzipSync(fs.readFileSync(path.join(dir, 'in', 'a.jsonl.gz'))).toString(), a, 'the input is untouched');
});

test('dedup over Parquet: ids, --kept FILE.jsonl writes the kept rows as JSON objects, --kept-dir NAME.parquet as Parquet', async () => {
  write('p/t.parquet', await parquetBytes([
    { name: 'text', data: DOCS, type: 'STRING' }, { name: 'key', data: DOCS.map((_, i) => `k${i}`), type: 'STRING' },
    { name: 'n', data: DOCS.map((_, i) => BigInt(i)), type: 'INT64' },
  ], { codec: 'ZSTD', rowGroupSize: 7 }));
  const r = cli(dir, ['dedup', 'p/t.parquet', '--id-field', 'key', '--removed-ids', 'pr', '--kept-dir', 'pout', '--flags', 'pf']);
  assert.is(r.code, 0, r.stderr);
  const j = cli(dir, ['dedup', 'p/t.parquet', '--kept', 'pkept.jsonl']);
  assert.is(j.code, 0, j.stderr);
  const flags = fs.readFileSync(path.join(dir, 'pf'), 'utf8').trim().split('\n');
  assert.equal(flags, DOCS.map((_, i) => (i < 20 && i % 2 ? '0' : '1')));
  assert.equal(fs.readFileSync(path.join(dir, 'pr'), 'utf8').trim().split('\n'), DOCS.map((_, i) => i).filter((i) => i < 20 && i % 2).map((i) => `"k${i}"`));
  const kept = fs.readFileSync(path.join(dir, 'pkept.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
  assert.equal(kept, DOCS.map((t, i) => ({ text: t, key: `k${i}`, n: i })).filter((_, i) => flags[i] === '1'));
  const hp = await import('hyparquet');
  const rows = await hp.parquetReadObjects({ file: await hp.asyncBufferFromFile(path.join(dir, 'pout', 't.parquet')) });
  assert.equal(rows, DOCS.map((t, i) => ({ text: t, key: `k${i}`, n: BigInt(i) })).filter((_, i) => flags[i] === '1'));
});

test.after(() => fs.rmSync(dir, { recursive: true, force: true }));
test.run();
