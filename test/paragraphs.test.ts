import { test } from 'uvu';
import * as assert from 'uvu/assert';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as zlib from 'node:zlib';
import { spawnSync } from 'node:child_process';
import { ParagraphFilter, NeardupError, dedupVertical } from '../lib/index';
import { refDocument } from './reference/onion';
import { loadSpam, toVertical } from './support/vertical';
import { parquetBytes } from './support/formats';

async function rejects(p: Promise<unknown>, check: (e: unknown) => boolean, msg?: string): Promise<void> {
  try {
    await p;
  } catch (e) {
    assert.ok(check(e), `${msg ?? ''} unexpected error: ${(e as Error).message}`);
    return;
  }
  assert.unreachable(`${msg ?? ''} did not reject`);
}

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'neardup-par-'));
const CLI = path.join(__dirname, '..', 'dist', 'cli', 'main.js');

function words(seed: number, n: number, vocab = 1e9): string[] {
  let s = seed >>> 0;
  return Array.from({ length: n }, () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return 'x' + (s % vocab).toString(36);
  });
}

test('pushDocuments agrees with the reference (words as tokens)', async () => {
  for (const opts of [{}, { keepUniqueShort: false }, { smoothing: false, withinDocument: false }, { n: 3, threshold: 0.25 }]) {
    const f = new ParagraphFilter(opts);
    const seen = new Set<string>();
    const docs: string[][] = [];
    for (let d = 0; d < 200; d++) {
      const np = 1 + (d % 5);
      docs.push(Array.from({ length: np }, (_, p) => words(d % 37 * 7 + p + (d % 3), 3 + ((d * 7 + p) % 25), 30).join(d % 2 ? ' ' : '\n ')));
    }
    const r = await f.pushDocuments(docs);
    f.close();
    docs.forEach((d, i) => {
      const want = refDocument(d.map((p) => p.split(/\s+/).filter(Boolean)), seen, { keepUniqueShort: true, ...opts });
      assert.equal(r.duplicate[i], want.dup, `doc ${i}`);
      assert.is(r.documentRemoved[i], want.removed);
    });
    assert.ok(r.duplicate.flat().some(Boolean) && !r.duplicate.flat().every(Boolean));
  }
});

test('safe default keeps a unique short document; Onion mode drops it', async () => {
  const safe = new ParagraphFilter();
  const onion = new ParagraphFilter({ keepUniqueShort: false });
  const doc = [['a short unique note']];
  assert.equal((await safe.pushDocuments(doc)).duplicate, [[false]]);
  assert.equal((await onion.pushDocuments(doc)).duplicate, [[true]]);
  safe.close();
  onion.close();
});

test('approximate seen-set: measured false-positive rate within the 1 % bound', async () => {
  const f = new ParagraphFilter({ seen: 'approx', n: 4, smoothing: false });
  // 300k distinct n-grams in the set (spans several Bloom stages), then 20000 probes of fresh 4-grams.
  await f.pushDocuments([[words(1, 300000).join(' ')]]);
  const probes = Array.from({ length: 20000 }, (_, i) => [words(1000 + i, 4).join(' ')]);
  const r = await f.pushDocuments(probes);
  const fp = r.duplicate.filter((d) => d[0]).length / probes.length;
  const st = f.stats();
  f.close();
  assert.ok(st.seenStages! >= 2, `stages ${st.seenStages}`);
  assert.ok(st.fpBound! <= 0.01);
  assert.ok(fp <= 0.01, `false-positive rate ${fp}`);
});

test('approx agrees with exact on >= 99 % of SpamAssassin paragraphs (vertical, subset)', async () => {
  const docs = loadSpam(1500);
  // Twice, so that repeats occur.
  const vert = toVertical(docs) + toVertical(docs.slice(0, 500), 1);
  const flags = async (seen: 'exact' | 'approx') => {
    const f = new ParagraphFilter({ seen, keepUniqueShort: false, expectedBytes: Buffer.byteLength(vert) });
    const r = await f.pushVertical(vert, true);
    const st = f.stats();
    f.close();
    return { flags: r.flags, st };
  };
  const e = await flags('exact');
  const a = await flags('approx');
  // Per paragraph: the flag of each <p> line.
  const lines = vert.split('\n');
  let total = 0, agree = 0;
  lines.forEach((l, i) => {
    if (l === '<p>') {
      total++;
      if (e.flags[i] === a.flags[i]) agree++;
    }
  });
  assert.ok(total > 10000);
  assert.ok(agree / total >= 0.99, `agreement ${agree}/${total}`);
  assert.ok(e.st.duplicateParagraphs > 1000);
  // Sized from the input rate (expectedBytes): about 1/8 of the exact table here.
  assert.ok(a.st.seenBytes * 6 < e.st.seenBytes, `approx ${a.st.seenBytes} vs exact ${e.st.seenBytes}`);
  assert.ok(a.st.fpBound! <= 0.01);
});

for (const seen of ['exact', 'approx'] as const) {
  test(`save/load round trip (${seen}): a second corpus is deduplicated against the first`, async () => {
    const file = path.join(tmp, `seen-${seen}.bin`);
    const docs = [[words(5, 50).join(' '), words(6, 50).join(' ')], [words(7, 40).join(' ')]];
    const a = new ParagraphFilter({ seen });
    await a.pushDocuments(docs);
    await a.saveSeen(file);
    const sa = a.stats();
    a.close();
    const b = new ParagraphFilter({ seen: seen === 'exact' ? 'approx' : 'exact' });
    const info = await b.loadSeen(file);
    assert.is(info.kind, seen);
    assert.is(info.size, sa.seenSize);
    const r = await b.pushDocuments([...docs, [words(8, 30).join(' ')]]);
    assert.equal(r.duplicate, [[true, true], [true], [false]]);
    b.close();
    const c = new ParagraphFilter({ n: 5 });
    await rejects(c.loadSeen(file), (e: unknown) => e instanceof NeardupError && /7-grams but this filter uses n = 5/.test(e.message));
    c.close();
  });
}

test('corrupt and truncated seen-set files give clear errors', async () => {
  const file = path.join(tmp, 'good.bin');
  const a = new ParagraphFilter({ seen: 'approx' });
  await a.pushDocuments([[words(9, 100).join(' ')]]);
  await a.saveSeen(file);
  a.close();
  const good = fs.readFileSync(file);
  const cases: [string, Buffer, RegExp, string][] = [
    ['truncated', good.subarray(0, good.length - 10), /truncated/, 'ERR_NEARDUP_CORRUPT'],
    ['payload bit flip', Buffer.from(good.map((x, i) => (i === good.length - 5 ? x ^ 1 : x))), /payload checksum/, 'ERR_NEARDUP_CORRUPT'],
    ['header bit flip', Buffer.from(good.map((x, i) => (i === 41 ? x ^ 1 : x))), /header checksum/, 'ERR_NEARDUP_CORRUPT'],
    ['not neardup', Buffer.from('hello world, this is not a seen-set file at all. '.repeat(3)), /not a neardup file/, 'ERR_NEARDUP_CORRUPT'],
    ['empty', Buffer.alloc(0), /shorter than the 64-byte header/, 'ERR_NEARDUP_CORRUPT'],
  ];
  for (const [name, bytes, re, code] of cases) {
    const p = path.join(tmp, `bad-${name.replace(/ /g, '-')}.bin`);
    fs.writeFileSync(p, bytes);
    const f = new ParagraphFilter();
    await rejects(f.loadSeen(p), (e: unknown) => e instanceof NeardupError && e.code === code && re.test(e.message), name);
    f.close();
  }
  const f = new ParagraphFilter();
  await rejects(f.loadSeen(path.join(tmp, 'missing.bin')), (e: unknown) => e instanceof NeardupError && e.code === 'ERR_NEARDUP_IO');
  f.close();
});

test('close() while work is pending is safe; later calls throw ERR_NEARDUP_CLOSED', async () => {
  const f = new ParagraphFilter();
  const big = toVertical(loadSpam(300));
  const p1 = f.pushVertical(big, false).then(() => 'ok', (e: NeardupError) => e.code);
  const p2 = f.pushVertical(big, true).then(() => 'ok', (e: NeardupError) => e.code);
  // One microtask turn: the first call reaches the native filter (running or queued on the pool), the
  // second waits behind it in the wrapper's queue.
  await Promise.resolve();
  f.close();
  const [r1, r2] = await Promise.all([p1, p2]);
  assert.ok(r1 === 'ok' || r1 === 'ERR_NEARDUP_CANCELLED', `call handed to native before close(): ${r1}`);
  assert.is(r2, 'ERR_NEARDUP_CLOSED', 'call still queued in the wrapper');
  assert.throws(() => f.stats(), (e: unknown) => (e as NeardupError).code === 'ERR_NEARDUP_CLOSED');
});

test('results do not depend on the thread count', async () => {
  const { setThreads } = await import('../lib/index');
  const vert = toVertical(loadSpam(400));
  setThreads(1);
  const one = await dedupVertical(vert, { seen: 'approx' });
  setThreads(0);
  const many = await dedupVertical(vert, { seen: 'approx' });
  assert.ok(Buffer.from(one).equals(Buffer.from(many)));
});

test('CLI paragraphs: JSONL with counts, save and load the seen-set', () => {
  const inp = path.join(tmp, 'in.jsonl');
  const para = (s: number) => words(s, 30).join(' ');
  fs.writeFileSync(inp, [
    { id: 1, text: `${para(1)}\n\n${para(2)}` },
    { id: 2, text: `${para(3)}\n\n${para(1)}\n\n${para(4)}` },
    { id: 3, text: 'short and unique' },
  ].map((o) => JSON.stringify(o)).join('\n') + '\n');
  const seen = path.join(tmp, 'cli-seen.bin');
  const r = spawnSync(process.execPath, [CLI, 'paragraphs', '--save-seen', seen, inp]);
  assert.is(r.status, 0, r.stderr.toString());
  const out = r.stdout.toString().trim().split('\n').map((l) => JSON.parse(l));
  assert.equal(out[1], { id: 2, text: `${para(3)}\n\n${para(4)}`, paragraphs: 3, duplicate_paragraphs: 1 });
  assert.equal(out[2].text, 'short and unique');
  const r2 = spawnSync(process.execPath, [CLI, 'paragraphs', '--load-seen', seen, '--drop-empty', inp]);
  assert.is(r2.status, 0, r2.stderr.toString());
  assert.equal(r2.stdout.toString().trim().split('\n').map((l) => JSON.parse(l).id), [3]);
  const r3 = spawnSync(process.execPath, [CLI, 'paragraphs', '--drop-short-unique', inp]);
  assert.equal(JSON.parse(r3.stdout.toString().trim().split('\n')[2]).text, '');
});

test('CLI paragraphs: bad JSONL lines (skip|empty) are copied through once, also with --drop-all', () => {
  const inp = path.join(tmp, 'bad.jsonl');
  const para = words(11, 30).join(' ');
  fs.writeFileSync(inp, [JSON.stringify({ id: 1, text: para }), 'not json', JSON.stringify({ id: 3, text: para })].join('\n') + '\n');
  for (const mode of ['skip', 'empty']) {
    for (const extra of [[], ['--drop-all'], ['--drop-empty']]) {
      const r = spawnSync(process.execPath, [CLI, 'paragraphs', '--on-bad-line', mode, '--no-smoothing', ...extra, inp]);
      const what = `${mode} ${extra.join(' ')}`;
      assert.is(r.status, 0, `${what}: ${r.stderr.toString()}`);
      const lines = r.stdout.toString().split('\n');
      assert.is(lines.pop(), '');
      const dropAll = extra[0] === '--drop-all';
      const want = [
        JSON.stringify({ id: 1, text: dropAll ? '' : para, paragraphs: 1, duplicate_paragraphs: dropAll ? 1 : 0 }),
        ...(mode === 'empty' && extra[0] === '--drop-empty' ? [] : ['not json']),
        ...(extra[0] === '--drop-empty' ? [] : [JSON.stringify({ id: 3, text: '', paragraphs: 1, duplicate_paragraphs: 1 })]),
      ];
      assert.equal(lines, want, what);
    }
  }
});

test('CLI paragraphs: a Parquet input gives the output of the same rows as JSONL (every column, text replaced), also with --drop-all and a null text', async () => {
  const para = (k: number) => words(100 + k, 25).join(' ');
  const rows = Array.from({ length: 40 }, (_, i) => ({ id: `r${i}`, n: i * 3, text: i === 17 ? null : `${para(i % 7)}\n\n${para(50 + i)}\n\n${para((i * 3) % 11)}` }));
  // JSONL with the same members in the same order: what paragraphs writes for each row
  fs.writeFileSync(path.join(tmp, 'pq.jsonl'), rows.map((r) => JSON.stringify(r)).join('\n') + '\n');
  fs.writeFileSync(path.join(tmp, 'pq.parquet'), await parquetBytes([
    { name: 'id', data: rows.map((r) => r.id), type: 'STRING' }, { name: 'n', data: rows.map((r) => r.n), type: 'INT32' },
    { name: 'text', data: rows.map((r) => r.text), type: 'STRING', nullable: true },
  ], { rowGroupSize: 7 }));
  for (const extra of [[], ['--drop-all']]) {
    const run = (f: string) => spawnSync(process.execPath, [CLI, 'paragraphs', '--on-bad-line', 'skip', ...extra, path.join(tmp, f)]);
    const j = run('pq.jsonl'), q = run('pq.parquet');
    assert.is(q.status, 0, q.stderr.toString());
    assert.is(j.status, 0, j.stderr.toString());
    assert.match(j.stdout.toString(), /"duplicate_paragraphs":[1-9]/, 'the corpus has repeated paragraphs');
    assert.is(q.stdout.toString(), j.stdout.toString(), `Parquet vs JSONL ${extra.join(' ')}`);
  }
});

test('CLI paragraphs: plain text from standard input (plain or gzip)', () => {
  const p = (s: number) => words(s, 25).join(' ');
  const text = `${p(1)}\n\n${p(2)}\n\n${p(1)}\n`;
  for (const input of [Buffer.from(text), zlib.gzipSync(text)]) {
    const r = spawnSync(process.execPath, [CLI, 'paragraphs', '--format', 'text', '--no-smoothing'], { input });
    assert.is(r.status, 0, r.stderr.toString());
    assert.is(r.stdout.toString(), `${p(1)}\n\n${p(2)}\n`);
  }
});

test('CLI paragraphs: plain text with a document separator', () => {
  const inp = path.join(tmp, 'in.txt');
  const p = (s: number) => words(s, 25).join(' ');
  fs.writeFileSync(inp, `${p(1)}\n\n${p(2)}\n---\n${p(3)}\n   \n${p(2)}\n---\n`);
  const r = spawnSync(process.execPath, [CLI, 'paragraphs', '--format', 'text', '--doc-separator=---', inp]);
  assert.is(r.status, 0, r.stderr.toString());
  assert.is(r.stdout.toString(), `${p(1)}\n\n${p(2)}\n---\n${p(3)}\n---\n`);
});

test.run();
