// dedup against yesterday's index (issue 10): a run over new documents against the index of earlier runs, and
// the index it writes, equal one run over all documents: old, then +B, then +C gives the flags, representatives
// and pairs of one run over A+B+C (with exact verification, with --fast and with estimates; random corpora with
// planted noisy near-copies), and its final index holds exactly the documents that one run keeps. Also: the keep
// rule when a new document matches both indexed and new ones, string and integer keys, duplicate keys, settings
// taken from the index or refused when they differ, and the CLI's --index / --index-out.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import {
  dedup, DedupSession, INDEX_REPRESENTATIVE, LshIndex, minhashSync, type DedupOptions, type DedupResult, type NeardupError,
} from '../lib/index';
import { makeRng, noisyCorpus } from './support/noisy-corpus';
import { charShingles } from './reference/jaccard-join';
import { cli } from './cli-helper';

const tmpRoot = fs.mkdtempSync(path.join(os.tmpdir(), 'neardup-dedup-index-'));
let nFile = 0;
const tmpFile = (name: string) => path.join(tmpRoot, `${nFile++}-${name}`);

/** Pairs of a result as "a,b" (global numbers), with their estimate and exact values. */
function pairMap(r: DedupResult, offset = 0, indexKey?: (k: bigint | string) => number): Map<string, [number, number]> {
  const m = new Map<string, [number, number]>();
  for (let i = 0; i < r.pairA.length; i++) m.set(`${offset + r.pairA[i]},${offset + r.pairB[i]}`, [r.pairEstimate[i], r.pairExact[i] ?? 0]);
  if (r.indexPairs) {
    const ip = r.indexPairs;
    for (let i = 0; i < ip.docs.length; i++) m.set(`${indexKey!(ip.keys[i])},${offset + ip.docs[i]}`, [ip.estimate[i], ip.exact[i] ?? 0]);
  }
  return m;
}

/** The representative of each document as a global number (an indexed document's key is its number). */
function globalReps(r: DedupResult, offset: number): number[] {
  const fromIndex = new Map<number, number>();
  if (r.indexMatches) r.indexMatches.docs.forEach((d, i) => fromIndex.set(d, Number(r.indexMatches!.keys[i])));
  return Array.from(r.representative, (rep, i) => (rep === INDEX_REPRESENTATIVE ? fromIndex.get(i)! : offset + rep));
}

/** Runs the parts in turn, each against the index the previous ones wrote. */
async function incremental(parts: string[][], options: DedupOptions) {
  const results: DedupResult[] = [];
  let file: string | undefined;
  for (const part of parts) {
    const index = file ? await LshIndex.loadAsync<bigint>(file) : undefined;
    const s = new DedupSession({ ...(index ? {} : options), ...(index ? { pairs: options.pairs } : {}), index, indexOut: true });
    await s.add(part);
    results.push(await s.finish());
    const out = tmpFile('step.lsh');
    await s.saveIndex(out);
    s.close();
    index?.close();
    file = out;
  }
  return { results, file: file! };
}

function split(texts: string[], cuts: number[]): string[][] {
  const parts: string[][] = [];
  let at = 0;
  for (const c of [...cuts, texts.length]) {
    parts.push(texts.slice(at, c));
    at = c;
  }
  return parts;
}

async function checkEqualsOneRun(texts: string[], cuts: number[], options: DedupOptions, what: string) {
  const full = await dedup(texts, { ...options, pairs: true });
  const { results, file } = await incremental(split(texts, cuts), { ...options, pairs: true });
  let offset = 0;
  const fullReps = Array.from(full.representative);
  const fullPairs = pairMap(full);
  const expectedPairs = new Map<string, [number, number]>();
  const gotPairs = new Map<string, [number, number]>();
  let matched = 0;
  for (const r of results) {
    const n = r.representative.length;
    assert.equal(Array.from(r.duplicate), Array.from(full.duplicate.subarray(offset, offset + n)), `${what}: flags of part at ${offset}`);
    assert.equal(globalReps(r, offset), fullReps.slice(offset, offset + n), `${what}: representatives of part at ${offset}`);
    matched += r.indexMatches?.docs.length ?? 0;
    for (const [k, v] of pairMap(r, offset, (key) => Number(key))) gotPairs.set(k, v);
    // expected: the full run's pairs ending in this part whose first document is in it, or was kept before it
    for (const [k, v] of fullPairs) {
      const [a, b] = k.split(',').map(Number);
      if (b >= offset && b < offset + n && (a >= offset || fullReps[a] === a)) expectedPairs.set(k, v);
    }
    offset += n;
  }
  assert.ok(matched > 0, `${what}: some documents were dropped for indexed ones`);
  assert.equal([...gotPairs.keys()].sort(), [...expectedPairs.keys()].sort(), `${what}: pairs`);
  for (const [k, v] of gotPairs) assert.equal(v, expectedPairs.get(k), `${what}: estimate and exact of ${k}`);
  // the final index holds exactly the documents one run keeps, under their numbers
  const ix = await LshIndex.loadAsync<bigint>(file);
  const kept = fullReps.flatMap((r, i) => (r === i ? [BigInt(i)] : []));
  assert.equal(Array.from(ix.clusters().ids), kept, `${what}: the index's documents`);
  const meta = JSON.parse(ix.metadata);
  assert.equal([meta.documents, meta.runs, meta.keys], [texts.length, cuts.length + 1, 'number']);
  ix.close();
  return { full, results };
}

const corpusA = noisyCorpus({ seed: 21, n: 420 });

test('old, then +B, then +C equals one run over A+B+C: defaults (exact verification), random noisy corpora', async () => {
  await checkEqualsOneRun(corpusA, [150, 290], {}, 'exact');
  await checkEqualsOneRun(noisyCorpus({ seed: 5, n: 300, copies: 0.7 }), [40, 41, 200], {}, 'exact, 4 parts');
});

test('old, then +B, then +C equals one run: --fast (no verification, band buckets) and verify estimate', async () => {
  await checkEqualsOneRun(corpusA, [150, 290], { verify: 'none' }, 'fast');
  await checkEqualsOneRun(corpusA, [100, 300], { verify: 'estimate', threshold: 0.7 }, 'estimate');
  await checkEqualsOneRun(corpusA, [210], { profile: 'datasketch', unit: 'word', n: 3 }, 'datasketch words');
});

test('spilled (--memory) runs write the same index', async () => {
  const parts = split(corpusA, [200]);
  const a = await incremental(parts, {});
  const b = await incremental(parts, { memory: 1 << 16 });
  assert.equal(globalReps(b.results[1], 200), globalReps(a.results[1], 200));
  assert.ok(fs.readFileSync(a.file).equals(fs.readFileSync(b.file)), 'the same bytes');
});

test('keep rule: a new document matching an indexed one and an earlier new one is dropped for the indexed one, and never becomes a representative', async () => {
  const rnd = makeRng(9);
  const fresh = () => Math.floor(rnd() * 1e9).toString(36);
  const words = Array.from({ length: 300 }, fresh);
  const yw = words.map((w, i) => (i % 16 === 0 ? fresh() : w));
  const x = words.join(' ');
  const y = yw.join(' ');
  const z = yw.map((w, i) => (i % 16 === 8 ? fresh() : w)).join(' ');
  const v = yw.map((w, i) => (i % 16 === 4 ? fresh() : w)).join(' ');
  const other = Array.from({ length: 300 }, fresh).join(' ');
  // the relations that make the case (exact char 5-gram Jaccard of the lower-cased texts)
  const J = (a: string, b: string) => {
    const A = new Set(charShingles(a)), B = new Set(charShingles(b));
    let i = 0;
    for (const s of A) if (B.has(s)) i++;
    return i / (A.size + B.size - i);
  };
  assert.ok(J(x, y) >= 0.8 && J(z, y) >= 0.8 && J(v, y) >= 0.8, 'y matches x, z and v');
  assert.ok(J(x, z) < 0.8 && J(x, v) < 0.8 && J(z, v) < 0.8, 'nothing else matches');
  // one run over [x, other | z, y, v]: z kept; y matches x and z, dropped for x (the earlier); v matches only y,
  // which is not kept: v is kept
  const full = await dedup([x, other, z, y, v], { pairs: true });
  assert.equal(Array.from(full.representative), [0, 1, 2, 0, 4]);
  const { results } = await incremental([[x, other], [z, y, v]], { pairs: true });
  const r = results[1];
  assert.equal(globalReps(r, 2), [2, 0, 4]);
  assert.equal(Array.from(r.representative), [0, INDEX_REPRESENTATIVE, 2]);
  assert.equal([Array.from(r.indexMatches!.docs), Array.from(r.indexMatches!.keys as BigUint64Array)], [[1], [0n]]);
  assert.equal([r.duplicates, r.clusters], [1, 1]);
  // the pairs: y with x (indexed), and y with z and with v (new)
  assert.equal([...pairMap(r, 2, (k) => Number(k)).keys()].sort(), ['0,3', '2,3', '3,4']);
});

test('string keys (ids): dropped documents may reuse an indexed id; a kept one may not, nor two kept ones share one', async () => {
  const texts = noisyCorpus({ seed: 3, n: 120, copies: 0.6 });
  const ids = texts.map((_, i) => `https://example.org/${i}`);
  const first = new DedupSession({ indexOut: true, indexKeys: 'id' });
  await first.add(texts.slice(0, 60), ids.slice(0, 60));
  const r1 = await first.finish();
  const file = tmpFile('ids.lsh');
  await first.saveIndex(file);
  first.close();
  const ix = await LshIndex.loadAsync<string>(file);
  assert.equal(ix.params.keyType, 'string');
  assert.equal(ix.clusters().ids, ids.slice(0, 60).filter((_, i) => r1.representative[i] === i));
  // a re-crawl: the same pages again under the same ids (dropped: fine), then new pages
  const second = new DedupSession({ index: ix, indexOut: true });
  await second.add(texts.slice(0, 60), ids.slice(0, 60));
  await second.add(texts.slice(60), ids.slice(60));
  const r2 = await second.finish();
  assert.ok(Array.from(r2.duplicate.subarray(0, 60)).every((d) => d === 1), 'every re-crawled page is dropped for itself');
  const m = r2.indexMatches!;
  for (let i = 0; i < m.docs.length; i++) if (m.docs[i] < 60) assert.is(m.keys[i], ids[r1.representative[m.docs[i]]]);
  const file2 = tmpFile('ids2.lsh');
  await second.saveIndex(file2);
  second.close();
  // the same as one run over everything (ids of the documents it keeps)
  const full = await dedup(texts, {});
  const all = await LshIndex.loadAsync<string>(file2);
  assert.equal(all.clusters().ids, ids.filter((_, i) => full.representative[i] === i));
  all.close();
  // a kept document whose id is taken: refused, naming it; nothing written
  const clash = new DedupSession({ index: ix, indexOut: true });
  await clash.add(['an entirely new text about something else, long enough to have many shingles of its own'], [ids[0]]);
  await clash.finish();
  const out = tmpFile('clash.lsh');
  await clash.saveIndex(out, { describe: (d) => `new.jsonl:${d + 1}` }).then(() => assert.unreachable(), (e: NeardupError) => {
    assert.is(e.code, 'ERR_NEARDUP_DUPLICATE_KEY');
    assert.match(e.message, /new\.jsonl:1: kept, but its key "https:\/\/example\.org\/0" is already in the index/);
  });
  assert.not.ok(fs.existsSync(out));
  clash.close();
  const twice = new DedupSession({ indexOut: true, indexKeys: 'id' });
  await twice.add(['one text with its own words entirely', 'another text, unrelated to the first in every way'], ['a', 'a']);
  await twice.finish();
  await twice.saveIndex(tmpFile('twice.lsh')).then(() => assert.unreachable(), (e: NeardupError) => {
    assert.is(e.code, 'ERR_NEARDUP_DUPLICATE_KEY');
    assert.match(e.message, /document 1: kept, but its key "a" is also the key of document 0/);
  });
  twice.close();
  // the index's keys are ids: a run that writes an index needs them, one that only reads it does not
  const needs = new DedupSession({ index: ix, indexOut: true });
  await needs.add(['x']).then(() => assert.unreachable(), (e: Error) => assert.match(e.message, /ids/));
  needs.close();
  const reads = new DedupSession({ index: ix });
  await reads.add(['x']);
  reads.close();
  ix.close();
});

test('settings: taken from the index when left out; a run with other settings is refused, listing the differences', async () => {
  const file = tmpFile('settings.lsh');
  await dedup(corpusA.slice(0, 100), { verify: 'none', n: 4, threshold: 0.7, saveIndex: file });
  const ix = await LshIndex.loadAsync(file);
  const s = new DedupSession({ index: ix });
  assert.equal([s.settings.verify, s.settings.shingle.n, s.settings.threshold, s.b, s.r, s.settings.banding], ['none', 4, 0.7, ix.params.b, ix.params.r, 'datasketch']);
  s.close();
  assert.throws(() => new DedupSession({ index: ix, threshold: 0.8, n: 5, verify: 'none' }),
    (e: Error) => e instanceof RangeError && /threshold 0.8 here, 0.7 in the index; shingle.n 5 here, 4 in the index/.test(e.message));
  assert.throws(() => new DedupSession({ index: ix, verify: 'exact' }), /verify "exact" here, "none" in the index/);
  assert.throws(() => new DedupSession({ index: ix, banding: 'recall' }), /b \d+ here, \d+ in the index/);
  assert.throws(() => new DedupSession({ index: ix, clustering: 'components' }), /clustering "components" here/);
  assert.throws(() => new DedupSession({ index: ix, indexKeys: 'id' }), /document numbers as keys/);
  // a plain LshIndex is not a dedup index
  const plain = new LshIndex({ numPerm: 128, b: 9, r: 13 });
  assert.throws(() => new DedupSession({ index: plain as never }), (e: NeardupError) => e.code === 'ERR_NEARDUP_INVALID_INPUT');
  plain.close();
  // the index is pinned while a session reads it
  const pinned = new DedupSession({ index: ix });
  assert.throws(() => ix.remove(0n), (e: NeardupError) => e.code === 'ERR_NEARDUP_UNSUPPORTED' && /in use by a dedup session/.test(e.message));
  pinned.close();
  ix.close();
});

test('a damaged or truncated index file is refused with a clear error (API and CLI)', async () => {
  const good = tmpFile('good.lsh');
  await dedup(corpusA.slice(0, 50), { saveIndex: good });
  const bytes = fs.readFileSync(good);
  const bad = tmpFile('bad.lsh');
  fs.writeFileSync(bad, bytes.subarray(0, bytes.length - 100));
  await dedup(['x'], { index: bad }).then(() => assert.unreachable(), (e: NeardupError) => {
    assert.is(e.code, 'ERR_NEARDUP_CORRUPT');
    assert.ok(e.message.includes(bad) && /truncated/.test(e.message), e.message);
  });
  const dir = fs.mkdtempSync(path.join(tmpRoot, 'cli-'));
  fs.writeFileSync(path.join(dir, 'in.jsonl'), '{"text": "hello world"}\n');
  const r = cli(dir, ['dedup', 'in.jsonl', '--index', bad, '--flags', 'f']);
  assert.is(r.code, 1, r.stderr);
  assert.match(r.stderr, /truncated/);
  assert.ok(r.stderr.includes(bad));
  assert.not.ok(fs.existsSync(path.join(dir, 'f')));
});

test('CLI: --index-out, then --index/--index-out twice: flags, clusters and pairs equal one run over all the files', () => {
  const dir = fs.mkdtempSync(path.join(tmpRoot, 'cli-'));
  const texts = noisyCorpus({ seed: 44, n: 240, copies: 0.6 });
  const parts = split(texts, [90, 170]);
  parts.forEach((p, k) => fs.writeFileSync(path.join(dir, `d${k}.jsonl`), p.map((t) => JSON.stringify({ text: t })).join('\n') + '\n'));
  const run = (args: string[]) => {
    const r = cli(dir, ['dedup', ...args, '--tmp', dir]);
    assert.is(r.code, 0, r.stderr);
    return JSON.parse(r.stdout.toString());
  };
  const full = run(['d0.jsonl', 'd1.jsonl', 'd2.jsonl', '--flags', 'f', '--clusters', 'c', '--pairs', 'p']);
  const s0 = run(['d0.jsonl', '--index-out', 'i0.lsh', '--flags', 'f0', '--clusters', 'c0', '--pairs', 'p0']);
  const s1 = run(['d1.jsonl', '--index', 'i0.lsh', '--index-out', 'i1.lsh', '--flags', 'f1', '--clusters', 'c1', '--pairs', 'p1']);
  const s2 = run(['d2.jsonl', '--index', 'i1.lsh', '--flags', 'f2', '--clusters', 'c2', '--pairs', 'p2']);
  const read = (f: string) => fs.readFileSync(path.join(dir, f), 'utf8');
  assert.is(read('f0') + read('f1') + read('f2'), read('f'));
  assert.is(read('c0') + read('c1') + read('c2'), read('c'), 'clusters: line numbers continue over the runs');
  const lines = (f: string) => read(f).split('\n').filter((l) => l.length > 0);
  const reps = lines('c').map(Number);
  const expected = lines('p').filter((l) => { const { a, b } = JSON.parse(l); return b < 90 || reps[a] === a || a >= (b < 170 ? 90 : 170); });
  assert.equal([...lines('p0'), ...lines('p1'), ...lines('p2')].sort(), expected.sort());
  assert.equal(s0.index, { read: null, written: 'i0.lsh', keys: 'number', documents_before: 0, entries_before: 0, matched: 0, entries_after: s0.kept });
  assert.equal(s1.index, { read: 'i0.lsh', written: 'i1.lsh', keys: 'number', documents_before: 90, entries_before: s0.kept, matched: s1.index.matched, entries_after: s0.kept + s1.kept });
  assert.equal([s2.index.read, s2.index.written, s2.index.documents_before, s2.index.entries_after], ['i1.lsh', null, 170, null]);
  assert.is(s0.duplicates + s1.duplicates + s2.duplicates, full.duplicates);
  assert.ok(s1.index.matched > 0 && s2.index.matched > 0);
  assert.equal([s1.verify, s1.threshold, s1.b, s1.r], [full.verify, full.threshold, full.b, full.r], 'the settings of the index');
  // the settings come from the index; other settings are refused before anything is read
  const other = cli(dir, ['dedup', 'd2.jsonl', '--index', 'i1.lsh', '--threshold', '0.9', '--flags', 'x']);
  assert.is(other.code, 2);
  assert.match(other.stderr, /threshold 0.9 here, 0.8 in the index/);
  assert.not.ok(fs.existsSync(path.join(dir, 'x')));
  const comp = cli(dir, ['dedup', 'd2.jsonl', '--index-out', 'z.lsh', '--clustering', 'components']);
  assert.is(comp.code, 2);
  // no output may replace the index but --index-out, which updates it in place (atomically, after the rest)
  const clobber = cli(dir, ['dedup', 'd2.jsonl', '--index', 'i1.lsh', '--flags', 'i1.lsh']);
  assert.is(clobber.code, 1);
  assert.match(clobber.stderr, /--flags 'i1\.lsh' is the input 'i1\.lsh'/);
  fs.copyFileSync(path.join(dir, 'i1.lsh'), path.join(dir, 'u.lsh'));
  const s3 = run(['d2.jsonl', '--index', 'u.lsh', '--index-out', 'u.lsh', '--clusters', 'c3']);
  assert.is(read('c3'), read('c2'));
  assert.equal([s3.index.entries_before, s3.index.entries_after], [s1.index.entries_after, s1.index.entries_after + s3.kept]);
  const u = LshIndex.load(path.join(dir, 'u.lsh'));
  assert.equal([u.size, JSON.parse(u.metadata).runs, JSON.parse(u.metadata).documents], [s3.index.entries_after, 3, 240]);
  u.close();
  assert.equal(fs.readdirSync(dir).filter((f) => f.includes('neardup')), [], 'no temporary files left');
});

test('CLI: --index written without --id-field, then a run with it (--removed-ids, --kept-dir): lines dropped for an indexed document are named by its number, their kept_id null, and stderr says why', () => {
  const dir = fs.mkdtempSync(path.join(tmpRoot, 'cli-ids-'));
  const texts = noisyCorpus({ seed: 45, n: 160, copies: 0.6 });
  const parts = split(texts, [80]);
  parts.forEach((p, k) => fs.writeFileSync(path.join(dir, `e${k}.jsonl`),
    p.map((t, i) => JSON.stringify({ id: `doc-${k}-${i}`, text: t })).join('\n') + '\n'));
  let stderr = '';
  const run = (args: string[]) => {
    const r = cli(dir, ['dedup', ...args, '--tmp', dir]);
    assert.is(r.code, 0, r.stderr);
    stderr = r.stderr.toString();
    return JSON.parse(r.stdout.toString());
  };
  const read = (f: string) => fs.readFileSync(path.join(dir, f), 'utf8');
  const lines = (f: string) => read(f).split('\n').filter((l) => l.length > 0);
  run(['e0.jsonl', 'e1.jsonl', '--clusters', 'c']);
  run(['e0.jsonl', '--index-out', 'j0.lsh']);
  const s1 = run(['e1.jsonl', '--index', 'j0.lsh', '--id-field', 'id', '--clusters', 'c1', '--removed-ids', 'r1', '--kept-dir', 'kept']);
  assert.match(stderr, /--index 'j0\.lsh' keeps line numbers \(it was written without --id-field\): ids of its documents \("kept_id", "a_id"\) are null/);
  assert.ok(s1.index.matched > 0);
  const one = lines('c').slice(80).map(Number);
  const got = lines('c1').map((l) => JSON.parse(l) as { id: string; kept: number; kept_id: string | null });
  assert.equal(got.map((g) => g.kept), one, 'kept: the numbers of one run over both files');
  got.forEach((g, i) => {
    assert.is(g.id, `doc-1-${i}`);
    assert.is(g.kept_id, g.kept < 80 ? null : `doc-1-${g.kept - 80}`);
  });
  assert.ok(got.some((g) => g.kept < 80));
  assert.equal(lines('r1').map((l) => JSON.parse(l)), got.filter((g, i) => g.kept !== 80 + i).map((g) => g.id));
  const kept = lines(path.join('kept', 'e1.jsonl')).map((l) => JSON.parse(l).id);
  assert.equal(kept, got.filter((g, i) => g.kept === 80 + i).map((g) => g.id));
});

test('CLI: an index written with --id-field keeps the ids: later runs name indexed documents by id (strings, integers above 2^53); an index of ids without --id-field is refused', () => {
  const dir = fs.mkdtempSync(path.join(tmpRoot, 'cli-idkeys-'));
  const texts = noisyCorpus({ seed: 46, n: 210, copies: 0.6 });
  const cuts = [70, 140];
  const big = (k: number, i: number) => `${(1n << 60n) + BigInt(1000 * k + i)}`;  // exact only as text
  const idText = (k: number, i: number) => (k === 1 ? big(k, i) : JSON.stringify(`doc-${k}-${i}`));
  split(texts, cuts).forEach((p, k) => fs.writeFileSync(path.join(dir, `g${k}.jsonl`),
    p.map((t, i) => `{"id": ${idText(k, i)}, "text": ${JSON.stringify(t)}}`).join('\n') + '\n'));
  const run = (args: string[]) => {
    const r = cli(dir, ['dedup', ...args, '--tmp', dir]);
    assert.is(r.code, 0, r.stderr);
    assert.not.match(r.stderr.toString(), /are null/);
    return JSON.parse(r.stdout.toString());
  };
  const read = (f: string) => fs.readFileSync(path.join(dir, f), 'utf8');
  const lines = (f: string) => read(f).split('\n').filter((l) => l.length > 0);
  // the truth: one run over the three files, by line numbers
  run(['g0.jsonl', 'g1.jsonl', 'g2.jsonl', '--clusters', 'c', '--pairs', 'p']);
  const reps = lines('c').map(Number);
  const idOfLine = (n: number) => { const k = n < cuts[0] ? 0 : n < cuts[1] ? 1 : 2; return idText(k, n - [0, ...cuts][k]); };
  const s0 = run(['g0.jsonl', '--id-field', 'id', '--index-out', 'k0.lsh']);
  assert.is(s0.index.keys, 'id');
  const meta = JSON.parse(LshIndex.load(path.join(dir, 'k0.lsh')).metadata);
  assert.equal([meta.keys, meta.id_text], ['id', 'json']);
  const s1 = run(['g1.jsonl', '--id-field', 'id', '--index', 'k0.lsh', '--index-out', 'k1.lsh', '--clusters', 'c1', '--pairs', 'p1']);
  const s2 = run(['g2.jsonl', '--id-field', 'id', '--index', 'k1.lsh', '--clusters', 'c2', '--pairs', 'p2']);
  assert.ok(s1.index.matched > 0 && s2.index.matched > 0, 'documents dropped for indexed ones');
  assert.equal([s1.index.keys, s2.index.keys], ['id', 'id']);
  let byIndex = 0;
  for (const [k, file] of [[1, 'c1'], [2, 'c2']] as const) {
    // raw lines: the big integer ids must come back as written, not rounded through a double
    lines(file).forEach((l, i) => {
      const n = cuts[k - 1] + i, rep = reps[n];
      const first = cuts[k - 1];
      const viaIndex = rep < first;
      if (viaIndex) byIndex++;
      const kept = viaIndex ? 'null' : String(rep);
      assert.is(l, `{"id": ${idText(k, i)}, "kept": ${kept}, "kept_id": ${idOfLine(rep)}}`, `${file} line ${i + 1}`);
    });
  }
  assert.ok(byIndex > 0);
  // pairs: those of one run that end in the part and start in it or at a document kept before it
  for (const [k, file] of [[1, 'p1'], [2, 'p2']] as const) {
    const first = cuts[k - 1], end = k === 1 ? cuts[1] : texts.length;
    const want = lines('p').map((l) => JSON.parse(l) as { a: number; b: number; estimate: number; exact?: number })
      .filter((q) => q.b >= first && q.b < end && (q.a >= first || reps[q.a] === q.a))
      .map((q) => `${q.a < first ? 'null' : q.a},${q.b},${idOfLine(q.a)},${idOfLine(q.b)},${q.estimate},${q.exact}`);
    const got = lines(file).map((l) => {
      const m = /^\{"a": (\w+), "b": (\d+), "a_id": ("[^"]*"|\d+), "b_id": ("[^"]*"|\d+), "estimate": ([\d.e-]+)(?:, "exact": ([\d.e-]+))?\}$/.exec(l);
      assert.ok(m, l);
      return `${m![1]},${m![2]},${m![3]},${m![4]},${Number(m![5])},${m![6] === undefined ? undefined : Number(m![6])}`;
    });
    assert.equal(got.sort(), want.sort(), `${file}: pairs`);
    assert.ok(got.some((g) => g.startsWith('null,')), `${file}: pairs with indexed documents`);
  }
  // an index of ids needs --id-field; one keyed by API ids is refused (its keys are not JSON texts)
  const noIds = cli(dir, ['dedup', 'g2.jsonl', '--index', 'k1.lsh', '--flags', 'x']);
  assert.is(noIds.code, 2);
  assert.match(noIds.stderr, /--index 'k1\.lsh': its keys are document ids \(it was written with --id-field\): give --id-field/);
  assert.not.ok(fs.existsSync(path.join(dir, 'x')));
  return (async () => {
    const s = new DedupSession({ indexOut: true, indexKeys: 'id' });
    await s.add(['one text here for the index', 'another text, not like the first'], ['a', 'b']);
    await s.finish();
    await s.saveIndex(path.join(dir, 'api.lsh'));
    s.close();
    const api = cli(dir, ['dedup', 'g2.jsonl', '--index', 'api.lsh', '--id-field', 'id', '--flags', 'x']);
    assert.is(api.code, 2);
    assert.match(api.stderr, /its keys are document ids given through the API \(DedupSession\.add\), not --id-field values/);
    assert.not.ok(fs.existsSync(path.join(dir, 'x')));
  })();
});

test.after(() => fs.rmSync(tmpRoot, { recursive: true, force: true }));

test.run();
