// The one commit point of passage and dupi indexes (lib/io/index-commit.ts, docs/FORMAT.md section 11): writers
// killed exactly before and after it (NEARDUP_TEST_KILL_AT, HACKING.md "Test hooks") and at random moments
// leave the old state or the complete new one, and a rerun gives the reference; two writers at once (one is
// refused, naming the folder); spill files of a killed or interrupted writer do not outlive it; NUL bytes in paths.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { PassageIndex } from '../lib/postings/passages';
import { PostingIndex } from '../lib/postings/postings';
import { DupiIndex } from '../lib/postings/dupi';
import { TSX_FLAGS } from './support/tsx';
import { rng, int, pick } from './reference/random';

const test = suite('commit');
const MAIN = path.join(__dirname, '..', 'lib', 'cli', 'main.ts');
let dir = '';

function run(args: string[], env: Record<string, string> = {}) {
  const r = spawnSync(process.execPath, [...TSX_FLAGS, MAIN, ...args], { cwd: dir, env: { ...process.env, ...env }, maxBuffer: 1 << 26 });
  return { code: r.status, signal: r.signal, stdout: r.stdout.toString(), stderr: r.stderr.toString() };
}
function ok(args: string[]) {
  const r = run(args);
  assert.is(r.code, 0, `neardup ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
}

const VOCAB = ['alpha', 'beta', 'gamma', 'delta', 'epsilon', 'zeta', 'eta', 'theta', 'iota', 'kappa', 'lambda', 'mu', 'Straße', '東京'];
function jsonl(seed: number, n: number, prefix: string): string {
  const r = rng(seed);
  const out: string[][] = [];
  for (let d = 0; d < n; d++) {
    const w = Array.from({ length: int(r, 5, 60) }, () => pick(r, VOCAB));
    if (d > 0 && r() < 0.7) {
      const src = out[int(r, 0, d - 1)];
      w.splice(int(r, 0, w.length), 0, ...src.slice(0, int(r, 10, 30)));
    }
    out.push(w);
  }
  return out.map((w, k) => JSON.stringify({ id: `${prefix}${k}`, text: w.join(' ') })).join('\n') + '\n';
}

/** Everything a passage index answers: extract, pairs, query (in this process). */
async function answers(d: string): Promise<string> {
  const p = await PassageIndex.open(d);
  try {
    const ex = [];
    for await (const x of p.extract({ sigma: 0 })) ex.push(x);
    const q = await p.query([Buffer.from(VOCAB.join(' ') + ' ' + VOCAB.join(' '))]);
    return JSON.stringify({ size: p.size, ex, pairs: await p.pairs(), q });
  } finally {
    p.close();
  }
}

const leftovers = (d: string) => [...fs.readdirSync(d), ...fs.readdirSync(path.join(d, 'postings'))]
  .filter((f) => f.endsWith('.next') || f.startsWith('neardup-') || f.includes('neardup-tmp'));

let OLD = '', NEW = '';

test.before(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'neardup-commit-'));
  fs.writeFileSync(path.join(dir, 'a.jsonl'), jsonl(1, 80, 'a'));
  fs.writeFileSync(path.join(dir, 'b.jsonl'), jsonl(2, 400, 'b'));
  fs.writeFileSync(path.join(dir, 'c.jsonl'), jsonl(3, 60, 'c'));
  fs.writeFileSync(path.join(dir, 'empty.jsonl'), '');
  fs.writeFileSync(path.join(dir, 'big.jsonl'), jsonl(5, 1500, 'g'));
  ok(['passages', 'index', '-o', 'base', 'a.jsonl']);
  OLD = await answers(path.join(dir, 'base'));
  fs.cpSync(path.join(dir, 'base'), path.join(dir, 'ref'), { recursive: true });
  ok(['passages', 'index', '-o', 'ref', 'b.jsonl']);
  NEW = await answers(path.join(dir, 'ref'));
  assert.ok(NEW !== OLD && JSON.parse(NEW).ex.length > 10);
});
test.after(() => fs.rmSync(dir, { recursive: true, force: true }));

/** A copy of the base index, named. */
function fresh(name: string): string {
  const d = path.join(dir, name);
  fs.rmSync(d, { recursive: true, force: true });
  fs.cpSync(path.join(dir, 'base'), d, { recursive: true });
  return d;
}

/** After a kill: the old state or the new one; the old one is rerun to the reference. Returns which it was. */
async function oldOrNew(d: string, rerun: string[], what: string): Promise<'old' | 'new'> {
  const got = await answers(d);
  assert.ok(got === OLD || got === NEW, `${what}: neither the old nor the new state`);
  if (got === OLD) ok(rerun);
  else ok(['passages', 'index', '-o', path.basename(d), 'empty.jsonl']);  // a writer: finishes the interrupted rename
  assert.is(await answers(d), NEW, `${what}: the reference after the rerun`);
  assert.equal(leftovers(d), [], `${what}: nothing left behind`);
  assert.ok(fs.readFileSync(path.join(d, 'passages.json')).equals(fs.readFileSync(path.join(dir, 'ref', 'passages.json'))), `${what}: passages.json`);
  return got === OLD ? 'old' : 'new';
}

test('passages index onto an index, killed just before and just after the commit point: the old or the new state, then the reference', async () => {
  for (const [point, want] of [['passages-staged', 'old'], ['passages-committed', 'new']] as const) {
    const d = fresh(`kill-${point}`);
    const args = ['passages', 'index', '-o', path.basename(d), 'b.jsonl'];
    const r = run(args, { NEARDUP_TEST_KILL_AT: point });
    assert.is(r.signal, 'SIGKILL', `${point}: killed there (${r.stderr})`);
    assert.ok(fs.existsSync(path.join(d, 'passages.json.next')), `${point}: killed between its two renames`);
    assert.is(await oldOrNew(d, args, point), want, point);
  }
});

test('passages index --shards finish, killed at the commit point: the old or the new state, then the reference', async () => {
  for (const [point, want] of [['passages-parts-staged', 'old'], ['passages-parts-committed', 'new']] as const) {
    const d = fresh(`kill-sh-${point}`);
    const args = ['passages', 'index', '-o', path.basename(d), '--work', `w-${point}`, '--shards', '2', 'b.jsonl'];
    const r = run(args, { NEARDUP_TEST_KILL_AT: point });
    assert.is(r.signal, 'SIGKILL', `${point}: killed there (${r.stderr})`);
    assert.is(await oldOrNew(d, args, `--shards ${point}`), want, point);
  }
});

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

test('passages stage finish rerun after a kill behind its commit point (before the parts are removed): adds nothing twice', async () => {
  const single = tree(path.join(dir, 'ref'));
  for (const point of ['passages-parts-committed', 'passages-finish-cleanup']) {
    for (const ranges of ['0', '2']) {
      const what = `${point}, --key-ranges ${ranges}`;
      const d = fresh(`rerun-${point}-${ranges}`);
      const work = `wr-${point}-${ranges}`;
      const r = run(['passages', 'index', '-o', path.basename(d), '--work', work, '--shards', '2', '--key-ranges', ranges, 'b.jsonl'], { NEARDUP_TEST_KILL_AT: point });
      assert.is(r.signal, 'SIGKILL', `${what}: killed there (${r.stderr})`);
      assert.ok(fs.existsSync(path.join(dir, work, 'part-0')), `${what}: the parts are still there`);
      const out = JSON.parse(ok(['passages', 'stage', 'finish', '--work', work]));
      assert.is(out.documents, 400, `${what}: the rerun reports the committed batch`);
      assert.is(await answers(d), NEW, `${what}: the answers of a single run`);
      const got = tree(d);
      assert.equal([...got.keys()].sort(), [...single.keys()].sort(), `${what}: the files of a single run`);
      for (const [k, v] of single) assert.ok(v.equals(got.get(k)!), `${what}: ${k} is a single run's`);
      assert.equal(fs.readdirSync(path.join(dir, work)), ['passages-plan.json'], `${what}: parts, ranges and marker removed`);
      // once the parts are gone, a finish of that plan is refused and changes nothing
      const again = run(['passages', 'stage', 'finish', '--work', work]);
      assert.is(again.code, 1, `${what}: a second rerun is refused`);
      assert.match(again.stderr, /part-0' is missing/);
      assert.is(await answers(d), NEW, `${what}: a second rerun`);
    }
  }
});

test('passages index killed at random moments (4 kills): the old or the new state, then the reference', async () => {
  const r = rng(99);
  const t0 = Date.now();
  ok(['passages', 'index', '-o', path.basename(fresh('timed')), '--memory', '1M', 'b.jsonl']);
  const span = Date.now() - t0;
  for (let k = 0; k < 4; k++) {
    const d = fresh(`random-${k}`);
    const args = ['passages', 'index', '-o', path.basename(d), '--memory', '1M', 'b.jsonl'];
    const child = spawn(process.execPath, [...TSX_FLAGS, MAIN, ...args], { cwd: dir, stdio: 'ignore' });
    const timer = setTimeout(() => child.kill('SIGKILL'), Math.floor(span * (0.3 + 0.8 * r())));
    await new Promise((res) => child.on('exit', res));
    clearTimeout(timer);
    await oldOrNew(d, args, `kill ${k}`);
  }
});

test('dupi index -a killed just before and just after the commit point: the old or the new state, then the reference', async () => {
  const corpus = path.join(dir, 'corpus');
  fs.mkdirSync(path.join(corpus, 'one'), { recursive: true });
  fs.mkdirSync(path.join(corpus, 'two'));
  const texts = jsonl(4, 120, 'x').trim().split('\n').map((l) => JSON.parse(l).text as string);
  texts.forEach((t, i) => fs.writeFileSync(path.join(corpus, i < 60 ? 'one' : 'two', `f${String(i).padStart(3, '0')}`), t));
  // extract's order and lists, the statistics of inspect (in this process)
  const answer = async (root: string) => {
    const ix = await DupiIndex.open(path.join(dir, root));
    try {
      const order = await ix.extractOrder(0);
      const stats = { ...(await ix.stats()), Root: '' };
      return JSON.stringify({ order, lists: await ix.lookup(order), docs: ix.docs, stats });
    } finally {
      ix.close();
    }
  };
  ok(['dupi', '-r', 'dref', 'index', 'corpus/one']);
  const old = await answer('dref');
  ok(['dupi', '-r', 'dref', 'index', '-a', 'corpus/two']);
  const want = await answer('dref');
  assert.ok(want !== old && want.length > 100);
  for (const point of ['dupi-staged', 'dupi-committed']) {
    const root = `d-${point}`;
    ok(['dupi', '-r', root, 'index', 'corpus/one']);
    const r = run(['dupi', '-r', root, 'index', '-a', 'corpus/two'], { NEARDUP_TEST_KILL_AT: point });
    assert.is(r.signal, 'SIGKILL', `${point}: killed there (${r.stderr})`);
    const got = await answer(root);
    assert.is(got, point === 'dupi-staged' ? old : want, point);
    if (got === old) ok(['dupi', '-r', root, 'index', '-a', 'corpus/two']);
    else ok(['dupi', '-r', root, 'index', '-a']);  // a writer, adding nothing: finishes the rename
    assert.is(await answer(root), want, `${point}: the reference`);
    assert.equal(fs.readFileSync(path.join(dir, root, 'docs.json'), 'utf8'), fs.readFileSync(path.join(dir, 'dref', 'docs.json'), 'utf8'), `${point}: docs.json`);
    assert.equal(leftovers(path.join(dir, root)), [], point);
  }
});

test('two writers: the second is refused naming the folder (passages index, dupi index -a, shards finish); two at once lose no run', async () => {
  const d = fresh('two');
  const held = await PassageIndex.open(d, {}, true);  // this process writes d
  try {
    let r = run(['passages', 'index', '-o', 'two', 'b.jsonl']);
    assert.is(r.code, 1, r.stderr);
    assert.match(r.stderr, /^neardup passages: '.*two' is being written by another process \(it holds .*LOCK\).*\n$/);
    r = run(['passages', 'index', '-o', 'two', '--work', 'w-two', '--shards', '2', 'b.jsonl']);
    assert.is(r.code, 1, r.stderr);
    assert.match(r.stderr, /'.*two' is being written by another process/);
    // readers are not writers
    assert.ok(run(['passages', 'extract', 'two']).stdout.length > 0);
  } finally {
    held.close();
  }
  assert.is(await answers(d), OLD, 'the refused writers changed nothing');
  ok(['dupi', '-r', 'dtwo', 'index', 'corpus/one']);
  const dupi = await DupiIndex.open(path.join(dir, 'dtwo'), { writer: true });
  try {
    const r = run(['dupi', '-r', 'dtwo', 'index', '-a', 'corpus/two']);
    assert.is(r.code, 1, r.stderr);
    assert.match(r.stderr, /'dtwo' is being written by another process/);
  } finally {
    dupi.close();
  }
  // two at once, three times: each run is either refused or in the index, which stays whole
  const size = (f: string) => fs.readFileSync(path.join(dir, f), 'utf8').trim().split('\n').length;
  for (let k = 0; k < 3; k++) {
    const t = fresh(`at-once-${k}`);
    const runs = ['b.jsonl', 'c.jsonl'].map((f) => new Promise<{ f: string; code: number | null; err: string }>((res) => {
      const child = spawn(process.execPath, [...TSX_FLAGS, MAIN, 'passages', 'index', '-o', path.basename(t), f], { cwd: dir });
      let err = '';
      child.stderr.on('data', (b) => { err += b; });
      child.on('exit', (code) => res({ f, code, err }));
    }));
    const done = await Promise.all(runs);
    let want = 80;
    for (const x of done) {
      if (x.code === 0) want += size(x.f);
      else assert.match(x.err, /is being written by another process/, x.err);
    }
    assert.ok(done.some((x) => x.code === 0));
    const p = await PassageIndex.open(t);
    assert.is(p.size, want, `round ${k}`);
    for await (const _ of p.extract()) { /* readable */ }
    p.close();
  }
});

test('spill files do not outlive their writer: a kill (removed by the next writer), SIGINT/SIGTERM/SIGHUP, --tmp', async () => {
  const spillFiles = (d: string) => fs.readdirSync(d).filter((f) => f.startsWith('neardup-'));
  const d = fresh('spill');
  const args = ['passages', 'index', '-o', 'spill', '--memory', '1M', 'big.jsonl'];
  let r = run(args, { NEARDUP_TEST_KILL_AT: 'passages-staged' });
  assert.is(r.signal, 'SIGKILL');
  assert.ok(spillFiles(path.join(d, 'postings')).length > 0, 'the killed build had spilled');
  ok(args);
  assert.equal(leftovers(d), [], 'removed by the next writer');
  for (const [sig, code] of [['SIGINT', 130], ['SIGTERM', 143], ['SIGHUP', 129]] as const) {
    const e = fresh(`spill-${sig}`);
    r = run(['passages', 'index', '-o', path.basename(e), '--memory', '1M', 'big.jsonl'], { NEARDUP_TEST_KILL_AT: `passages-staged:${sig}` });
    assert.is(r.code, code, `${sig}: ${r.stderr}`);
    assert.equal(leftovers(e), [], sig);
    assert.equal(fs.readdirSync(e).sort(), fs.readdirSync(path.join(dir, 'base')).sort(), `${sig}: no batch file left`);
    assert.is(await answers(e), OLD, sig);
  }
  // --tmp: a folder of the run's own there, removed on a signal, swept after a kill
  const tmp = path.join(dir, 'tmp');
  fs.mkdirSync(tmp);
  const t = fresh('spill-tmp');
  r = run(['passages', 'index', '-o', 'spill-tmp', '--memory', '1M', '--tmp', 'tmp', 'big.jsonl'], { NEARDUP_TEST_KILL_AT: 'passages-staged:SIGTERM' });
  assert.is(r.code, 143, r.stderr);
  assert.equal(fs.readdirSync(tmp), []);
  r = run(['passages', 'index', '-o', 'spill-tmp', '--memory', '1M', '--tmp', 'tmp', 'big.jsonl'], { NEARDUP_TEST_KILL_AT: 'passages-staged' });
  assert.is(r.signal, 'SIGKILL');
  const left = fs.readdirSync(tmp);
  assert.is(left.length, 1, 'the killed run left its spill folder');
  assert.ok(fs.readdirSync(path.join(tmp, left[0])).some((f) => f.startsWith('neardup-pst-')), 'with its spill files');
  // a sweep leaves folders younger than a few seconds alone (io::IsStale): this one, aged
  const past = new Date(Date.now() - 60_000);
  fs.utimesSync(path.join(tmp, left[0]), past, past);
  ok(['passages', 'index', '-o', 'spill-tmp', '--memory', '1M', '--tmp', 'tmp', 'big.jsonl']);
  assert.equal(fs.readdirSync(tmp), [], 'swept by the next run');
  assert.is(JSON.parse(await answers(t)).size, 1580);
  assert.equal(leftovers(t), []);
});

test('a NUL byte in any path of PostingIndex / PassageIndex is refused before the file system is touched', async () => {
  const victim = path.join(dir, 'victim');
  const bad = victim + '\0.x';
  const nul = (e: unknown) => e instanceof TypeError && (e as { code?: string }).code === 'ERR_INVALID_ARG_VALUE' && /null bytes/.test(e.message);
  const rejects = async (f: () => unknown, what: string) => {
    try {
      await f();
    } catch (e) {
      assert.ok(nul(e), `${what}: ${String(e)}`);
      return;
    }
    assert.unreachable(`${what}: accepted`);
  };
  await rejects(() => PostingIndex.create(bad), 'PostingIndex.create');
  await rejects(() => PostingIndex.open(bad), 'PostingIndex.open');
  await rejects(() => PostingIndex.writeKeyRange([bad], path.join(dir, 'x.pst'), { range: 0, ranges: 1 }), 'writeKeyRange partDirs');
  await rejects(() => PostingIndex.writeKeyRange([path.join(dir, 'base', 'postings')], bad, { range: 0, ranges: 1 }), 'writeKeyRange out');
  await rejects(() => PassageIndex.open(bad, {}, true), 'PassageIndex.open');
  PostingIndex.create(path.join(dir, 'pix'));
  const ix = await PostingIndex.open(path.join(dir, 'pix'));
  const p = await PassageIndex.open(fresh('nul'), {}, true);
  try {
    await rejects(() => ix.append([[1]], { tmp: bad }), 'append tmp');
    await rejects(() => ix.appender({ tmp: bad }), 'appender tmp');
    await rejects(() => ix.appendTexts(['a b c'], { tmp: bad }), 'appendTexts tmp');
    await rejects(() => ix.appendIndexes([bad]), 'appendIndexes');
    await rejects(() => ix.appendKeyRanges([bad], 1), 'appendKeyRanges');
    await rejects(() => p.add([{ id: 1, text: Buffer.from('x') }], { tmp: bad }), 'add tmp');
    await rejects(() => p.addParts([bad]), 'addParts');
    await rejects(() => p.addParts([], { keyRanges: [bad] }), 'addParts keyRanges');
    await rejects(async () => { for await (const _ of p.extract({ tmp: bad })) { /* */ } }, 'extract tmp');
    await rejects(() => p.pairs({ tmp: bad }), 'pairs tmp');
  } finally {
    ix.close();
    p.close();
  }
  assert.not.ok(fs.existsSync(victim), 'a truncated path was created');
});

test.run();
