// `neardup passages index --shards N` (the posting-list build as independent parts, docs/scale.md): for N = 1
// to 5 (more shards than files too) the index folder equals a single run's file for file, also when adding to
// an index that holds documents, with ids from a field, bad lines skipped, a gzip input, an empty file and a
// small --memory (the parts spill). The stage commands run in any order (Slurm / Kubernetes: one task per
// index), a part can be rerun, and finish refuses a missing part or one of another plan without touching the
// index. PostingIndex.appendIndexes refuses what would not give an append's ids. BullMQ workers: queue.test.ts.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as zlib from 'node:zlib';
import { cli } from './cli-helper';
import { PostingIndex } from '../lib/postings/postings';
import { rng, int, pick } from './reference/random';

const test = suite('passages-shards');
let dir = '';
const INPUTS = ['a.jsonl', 'b.jsonl.gz', 'empty.jsonl', 'c.jsonl', 'd.jsonl'];

const VOCAB = ['alpha', 'beta', 'gamma', 'delta', 'epsilon', 'zeta', 'eta', 'theta', 'iota', 'kappa', 'lambda', 'mu', 'Straße', '東京', 'x_1', '42'];

/** Documents with passages copied from earlier ones, so the lists hold documents of several files. */
function docs(seed: number, n: number, first: number): string[] {
  const r = rng(seed);
  const out: string[][] = [];
  for (let d = 0; d < n; d++) {
    const w = Array.from({ length: int(r, 0, 80) }, () => pick(r, VOCAB));
    if (d > 0 && r() < 0.6) {
      const src = out[int(r, 0, d - 1)];
      const a = int(r, 0, Math.max(0, src.length - 1));
      w.splice(int(r, 0, w.length), 0, ...src.slice(a, a + int(r, 10, 40)));
    }
    out.push(w);
  }
  return out.map((w, k) => JSON.stringify({ id: `doc-${first + k}`, text: w.join(' ') }));
}

/** Every file under d (relative path -> bytes). */
function tree(d: string): Map<string, Buffer> {
  const m = new Map<string, Buffer>();
  const walk = (rel: string) => {
    for (const e of fs.readdirSync(path.join(d, rel), { withFileTypes: true })) {
      const p = path.join(rel, e.name);
      if (e.isDirectory()) walk(p);
      else m.set(p, fs.readFileSync(path.join(d, p)));
    }
  };
  walk('');
  return m;
}

function assertSameTree(a: string, b: string, what: string) {
  const ta = tree(a), tb = tree(b);
  assert.equal([...tb.keys()].sort(), [...ta.keys()].sort(), `${what}: the same files`);
  for (const [k, v] of ta) assert.ok(v.equals(tb.get(k)!), `${what}: ${k} differs`);
}

function ok(args: string[]): string {
  const r = cli(dir, args);
  assert.is(r.code, 0, `neardup ${args.join(' ')}: ${r.stderr}`);
  return r.stdout.toString();
}

test.before(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'neardup-pshards-'));
  const all = docs(7, 260, 0);
  const lines = (a: number, b: number) => all.slice(a, b).join('\n') + '\n';
  fs.writeFileSync(path.join(dir, 'a.jsonl'), lines(0, 90));
  fs.writeFileSync(path.join(dir, 'b.jsonl.gz'), zlib.gzipSync(lines(90, 150)));
  fs.writeFileSync(path.join(dir, 'empty.jsonl'), '');
  // bad lines (skipped) between documents
  fs.writeFileSync(path.join(dir, 'c.jsonl'), lines(150, 200) + '{"id": "broken", "text": \n' + '{"id": 5, "text": 7}\n' + lines(200, 230));
  fs.writeFileSync(path.join(dir, 'd.jsonl'), lines(230, 260));
  fs.writeFileSync(path.join(dir, 'e.jsonl'), docs(8, 40, 1000).join('\n') + '\n');
});
test.after(() => fs.rmSync(dir, { recursive: true, force: true }));

const OPTS = ['--id-field', 'id', '--on-bad-line', 'skip', '--window', '6'];

test('--shards 1..5 (more shards than files too): the index of a single run, file for file', () => {
  ok(['passages', 'index', '-o', 'single', ...OPTS, ...INPUTS]);
  for (const n of [1, 2, 3, 5, 7]) {
    ok(['passages', 'index', '-o', `sh${n}`, ...OPTS, '--work', `w${n}`, '--shards', String(n), '--memory', '1M', ...INPUTS]);
    assertSameTree(path.join(dir, 'single'), path.join(dir, `sh${n}`), `--shards ${n}`);
    // the parts are gone, the plan stays
    assert.equal(fs.readdirSync(path.join(dir, `w${n}`)), ['passages-plan.json']);
  }
  // a local run: no key ranges by default (finish merges the lists)
  assert.is(JSON.parse(fs.readFileSync(path.join(dir, 'w3', 'passages-plan.json'), 'utf8')).keyRanges, undefined);
  // the lists merged by key ranges (as many, fewer or more than the parts), or by finish itself (--key-ranges 0)
  for (const k of [0, 1, 2, 4]) {
    ok(['passages', 'index', '-o', `kr${k}`, ...OPTS, '--work', `w-kr${k}`, '--shards', '2', '--key-ranges', String(k), ...INPUTS]);
    assertSameTree(path.join(dir, 'single'), path.join(dir, `kr${k}`), `--key-ranges ${k}`);
    assert.equal(fs.readdirSync(path.join(dir, `w-kr${k}`)), ['passages-plan.json']);
  }
  // and its outputs: extract and pairs read the same index
  const a = ok(['passages', 'extract', 'single']), b = ok(['passages', 'extract', 'sh3']);
  assert.ok(a.length > 100, 'passages found');
  assert.is(b, a);
});

test('added to an index that holds documents: the same as adding in one run (ids "FILE:LINE" as given)', () => {
  ok(['passages', 'index', '-o', 'one', 'e.jsonl']);
  ok(['passages', 'index', '-o', 'one', '--on-bad-line', 'skip', ...INPUTS]);
  ok(['passages', 'index', '-o', 'two', 'e.jsonl']);
  ok(['passages', 'index', '-o', 'two', '--on-bad-line', 'skip', '--work', 'w-two', '--shards', '3', ...INPUTS]);
  assertSameTree(path.join(dir, 'one'), path.join(dir, 'two'), 'added');
  // the bad lines (c.jsonl lines 51 and 52) are skipped; the documents after them keep their line numbers
  const listed = fs.readFileSync(path.join(dir, 'two', 'docs-2.jsonl'), 'utf8');
  assert.match(listed, /"id":"c\.jsonl:53"/);
  assert.not.match(listed, /"id":"c\.jsonl:5[12]"/);
  // --no-merge keeps the new segment apart, as a single run does
  ok(['passages', 'index', '-o', 'nm1', 'e.jsonl']);
  ok(['passages', 'index', '-o', 'nm1', '--no-merge', 'a.jsonl', 'd.jsonl']);
  ok(['passages', 'index', '-o', 'nm2', 'e.jsonl']);
  ok(['passages', 'index', '-o', 'nm2', '--no-merge', '--work', 'w-nm', '--shards', '2', 'a.jsonl', 'd.jsonl']);
  assertSameTree(path.join(dir, 'nm1'), path.join(dir, 'nm2'), '--no-merge');
  assert.is(fs.readdirSync(path.join(dir, 'nm2', 'postings')).filter((f) => f.endsWith('.pst')).length, 2);
});

test('stage commands: plan, the parts in any order (one rerun), finish; a missing part or another plan\'s is refused', () => {
  const planned = JSON.parse(ok(['passages', 'stage', 'plan', '-o', 'st', '--work', 'w-st', '--shards', '3', ...OPTS, ...INPUTS])) as { key_ranges: number };
  assert.is(planned.key_ranges, 3, 'the stage commands: a key range per part by default');
  // finish before the parts: refused, no index written
  let r = cli(dir, ['passages', 'stage', 'finish', '--work', 'w-st']);
  assert.is(r.code, 1, r.stderr);
  assert.match(r.stderr, /passages part 0\/3: '.*part-0' is missing: run that part first/);
  assert.not.ok(fs.existsSync(path.join(dir, 'st')));
  const reports = [2, 0, 1, 0].map((i) => JSON.parse(ok(['passages', 'stage', 'part', '--work', 'w-st', '--shard', `${i}/3`])) as { shard: string; documents: number });
  assert.equal(reports.map((x) => x.shard), ['2/3', '0/3', '1/3', '0/3']);
  assert.is(reports[0].documents + reports[1].documents + reports[2].documents, 260);
  // a part of another plan (the plan written again) is refused
  fs.renameSync(path.join(dir, 'w-st', 'part-1'), path.join(dir, 'part-1-old'));
  ok(['passages', 'stage', 'plan', '-o', 'st', '--work', 'w-st', '--shards', '3', ...OPTS, ...INPUTS]);
  fs.renameSync(path.join(dir, 'part-1-old'), path.join(dir, 'w-st', 'part-1'));
  r = cli(dir, ['passages', 'stage', 'finish', '--work', 'w-st']);
  assert.is(r.code, 1);
  assert.match(r.stderr, /passages part 0\/3: '.*part-0' was written for another plan/);
  assert.not.ok(fs.existsSync(path.join(dir, 'st')));
  for (const i of [0, 1, 2]) ok(['passages', 'stage', 'part', '--work', 'w-st', '--shard', `${i}/3`]);
  // the parts without their key ranges: refused, naming the range to run
  r = cli(dir, ['passages', 'stage', 'finish', '--work', 'w-st']);
  assert.is(r.code, 1);
  assert.match(r.stderr, /key range 0\/3: '.*lists-0\.json' is missing: run 'passages stage lists --shard 0\/3' first/);
  assert.not.ok(fs.existsSync(path.join(dir, 'st')));
  const lists = [1, 2, 0, 1].map((k) => JSON.parse(ok(['passages', 'stage', 'lists', '--work', 'w-st', '--shard', `${k}/3`])) as { shard: string; keys: number; posts: number });
  assert.equal(lists.map((x) => x.shard), ['1/3', '2/3', '0/3', '1/3']);
  assert.ok(lists.every((x) => x.keys > 0 && x.posts >= x.keys), 'every range holds keys');
  // a range file that fails its checksum: refused, naming it; nothing written into the index
  const pst = path.join(dir, 'w-st', 'lists-2.pst'), good = fs.readFileSync(pst);
  const bad = Buffer.from(good);
  bad[100] ^= 0x04;
  fs.writeFileSync(pst, bad);
  r = cli(dir, ['passages', 'stage', 'finish', '--work', 'w-st']);
  assert.is(r.code, 1);
  assert.match(r.stderr, /passages finish: '.*lists-2\.pst'.*checksum mismatch \(run the lists stage of that key range again\)/);
  assert.equal(fs.readdirSync(path.join(dir, 'st')).sort(), ['LOCK', 'passages.json', 'postings'], 'no batch added (LOCK: the writer lock)');
  assert.equal(JSON.parse(fs.readFileSync(path.join(dir, 'st', 'passages.json'), 'utf8')).batches, []);
  fs.writeFileSync(pst, good);
  // a range's record of another plan, or one range missing from the posts: refused
  // (edited as a file written before the records carried a crc: the checks below the checksum)
  const meta = path.join(dir, 'w-st', 'lists-1.json'), rec = fs.readFileSync(meta, 'utf8'), old = rec.replace(/,"crc":\d+/, '');
  assert.is.not(old, rec, 'lists-R.json carries a crc');
  fs.writeFileSync(meta, old.replace(/"plan":"\w+"/, '"plan":"0000"'));
  r = cli(dir, ['passages', 'stage', 'finish', '--work', 'w-st']);
  assert.is(r.code, 1);
  assert.match(r.stderr, /key range 1\/3: '.*lists-1\.json' was written for another plan/);
  fs.writeFileSync(meta, old.replace(/"posts":\d+/, '"posts":1'));
  r = cli(dir, ['passages', 'stage', 'finish', '--work', 'w-st']);
  assert.is(r.code, 1);
  assert.match(r.stderr, /the key ranges hold \d+ posts, the parts \d+: run the lists stage again/);
  fs.writeFileSync(meta, rec);
  const fin = JSON.parse(ok(['passages', 'stage', 'finish', '--work', 'w-st'])) as { documents: number };
  assert.is(fin.documents, 260);
  assertSameTree(path.join(dir, 'single'), path.join(dir, 'st'), 'stage commands');
  // usage errors
  r = cli(dir, ['passages', 'stage', 'part', '--work', 'w-st', '--shard', '1/2']);
  assert.is(r.code, 2);
  assert.match(r.stderr, /the plan has 3 shards/);
  r = cli(dir, ['passages', 'stage', 'lists', '--work', 'w-st', '--shard', '1/2']);
  assert.is(r.code, 2);
  assert.match(r.stderr, /the plan has 3 key ranges/);
  r = cli(dir, ['passages', 'stage', 'lists', '--work', 'w-kr0', '--shard', '0/1']);
  assert.is(r.code, 2);
  assert.match(r.stderr, /the plan has no key ranges/);
  r = cli(dir, ['passages', 'index', '-o', 'x', '--shards', '2', 'a.jsonl']);
  assert.is(r.code, 2);
  assert.match(r.stderr, /--shards N and --work DIR go together/);
  r = cli(dir, ['passages', 'index', '-o', 'x', '--work', 'w-x', '--shards', '2']);
  assert.is(r.code, 1);
  assert.match(r.stderr, /needs input files/);
  // no spill folder is left in the work folders
  for (const w of fs.readdirSync(dir).filter((f) => f.startsWith('w'))) {
    const st = fs.statSync(path.join(dir, w));
    if (st.isDirectory()) assert.equal(fs.readdirSync(path.join(dir, w)).filter((f) => f.startsWith('neardup-spill')), [], w);
  }
});

async function rejects(f: () => Promise<unknown>, re: RegExp) {
  try {
    await f();
  } catch (e) {
    assert.match((e as Error).message, re);
    return;
  }
  assert.unreachable(`expected a rejection matching ${re}`);
}

test('PostingIndex.appendIndexes: arguments checked; an index with free ids and a part with deleted documents are refused', async () => {
  const base = path.join(dir, 'pix');
  fs.mkdirSync(base);
  for (const n of ['x', 'p']) PostingIndex.create(path.join(base, n));
  const x = await PostingIndex.open(path.join(base, 'x'));
  const p = await PostingIndex.open(path.join(base, 'p'));
  try {
    await p.append([[1, 2, 3], [3, 4], [5]]);
    await rejects(() => x.appendIndexes('p' as unknown as string[]), /dirs/);
    await rejects(() => x.appendIndexes([7 as unknown as string]), /dirs\[0\]/);
    await x.appendIndexes([path.join(base, 'p'), path.join(base, 'p')]);
    assert.is(x.info().nextId, 6);
    const got = await x.lookup([3]);
    assert.equal([...got.docs], [0, 1, 3, 4]);
    await p.delete([1]);
    await rejects(() => x.appendIndexes([path.join(base, 'p')]), /deleted documents/);
    await x.delete([0]);
    await x.merge();
    await rejects(() => x.appendIndexes([path.join(base, 'x')]), /free ids/);
  } finally {
    x.close();
    p.close();
  }
});

test.run();
