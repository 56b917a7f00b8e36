// Writers that must not lose data: two `dedup --index-out` runs on one index at once (the writer lock), two
// LshIndex objects or processes saving one file (a save over a file changed since it was loaded is refused),
// an index without what dedup needs or with out-of-range counts in its metadata (refused, naming the file),
// SIGKILL at the commit point of `dedup --index I --index-out I` and at random moments (the old index or the
// complete new one, and a rerun gives the reference outputs byte for byte), `similar build` into a folder of
// the user's (refused, nothing removed), and outputs inside a staged run's work folder (refused).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ChunkIndex, DedupSession, LshIndex, SimhashIndex, minhashSync, type NeardupError } from '../lib/index';
import { lockIndexFile, fileLockPath } from '../lib/io/locks';

const root = path.join(__dirname, '..');
const MAIN = path.join(root, 'dist', 'cli', 'main.js');  // the built CLI: no tsx start-up per run
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'neardup-writers-'));
let nDir = 0;
const newDir = () => {
  const d = path.join(tmp, `d${nDir++}`);
  fs.mkdirSync(d);
  return d;
};

function run(args: string[], env: Record<string, string> = {}, cwd = tmp) {
  const r = spawnSync(process.execPath, [MAIN, ...args], { cwd, env: { ...process.env, ...env }, encoding: 'utf8' });
  return { code: r.status, signal: r.signal, stdout: r.stdout, stderr: r.stderr };
}

function runAsync(args: string[], cwd = tmp): Promise<{ code: number | null; stderr: string; stdout: string }> {
  return new Promise((resolve) => {
    const p = spawn(process.execPath, [MAIN, ...args], { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '', stderr = '';
    p.stdout.on('data', (d) => { stdout += d; });
    p.stderr.on('data', (d) => { stderr += d; });
    p.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

/** n JSONL documents of random words (seeded), with some near-copies of earlier ones. */
function corpus(file: string, seed: number, n: number): string[] {
  let x = seed >>> 0;
  const r = () => ((x = (Math.imul(x, 1664525) + 1013904223) >>> 0) / 2 ** 32);
  const texts: string[] = [];
  for (let i = 0; i < n; i++) {
    if (i > 10 && r() < 0.2) texts.push(texts[Math.floor(r() * i)] + ' tail');
    else texts.push(Array.from({ length: 30 }, () => `w${Math.floor(r() * 3000)}`).join(' '));
  }
  fs.writeFileSync(file, texts.map((t) => JSON.stringify({ text: t })).join('\n') + '\n');
  return texts;
}

const documentsOf = (file: string): number => {
  const ix = LshIndex.load<bigint>(file);
  try {
    return (JSON.parse(ix.metadata) as { documents: number }).documents;
  } finally {
    ix.close();
  }
};

const A = path.join(tmp, 'a.jsonl'), B = path.join(tmp, 'b.jsonl'), C = path.join(tmp, 'c.jsonl');
corpus(A, 1, 1500);
corpus(B, 2, 1500);
corpus(C, 3, 1500);
const BASE = path.join(tmp, 'base.lsh');
{
  const r = run(['dedup', A, '--index-out', BASE]);
  if (r.code !== 0) throw new Error(r.stderr);
}

// ---- 1. two writers of one index ----

test('dedup --index-out: a run while another holds the index is refused at once, naming the index', () => {
  const d = newDir();
  const I = path.join(d, 'I.lsh');
  fs.copyFileSync(BASE, I);
  const before = fs.readFileSync(I);
  const held = lockIndexFile(I)!;  // what a running `dedup --index-out I` (or LshIndex.save) holds
  try {
    const r = run(['dedup', B, '--index', I, '--index-out', I, '--flags', path.join(d, 'f')]);
    assert.is(r.code, 1, r.stderr);
    assert.match(r.stderr, `the index '${I}' is being written by another process`);
    assert.match(r.stderr, fileLockPath(I));
    assert.not.match(r.stderr, /at .*\.js:\d+/);  // no stack trace
    assert.not.ok(fs.existsSync(path.join(d, 'f')), 'nothing written');
  } finally {
    held.release();
  }
  assert.ok(fs.readFileSync(I).equals(before), 'the index is untouched');
  assert.is(run(['dedup', B, '--index', I, '--index-out', I]).code, 0, 'free again once released');
});

test('dedup --index I --index-out I twice at once: no run is lost', async () => {
  for (let round = 0; round < 3; round++) {
    const d = newDir();
    const I = path.join(d, 'I.lsh');
    fs.copyFileSync(BASE, I);
    const rs = await Promise.all([B, C].map((f) => runAsync(['dedup', f, '--index', I, '--index-out', I])));
    let expected = 1500;
    for (const r of rs) {
      if (r.code === 0) expected += 1500;
      else assert.match(r.stderr, `the index '${I}' is being written by another process`);
    }
    assert.ok(rs.some((r) => r.code === 0), `round ${round}: one run succeeds`);
    assert.is(documentsOf(I), expected, `round ${round}: the index counts every run that succeeded`);
  }
});

// ---- 2. LshIndex: a save over a file another writer changed since it was loaded ----

const sigs = (texts: string[]) => minhashSync(texts, { numPerm: 64 }).signatures;

test('LshIndex.save onto the file it was loaded from refuses when another writer saved there since', async () => {
  const d = newDir();
  const P = path.join(d, 'p.lsh');
  const first = new LshIndex({ numPerm: 64, b: 8, r: 8 });
  await first.insert([1n], sigs(['one two three four five six']));
  await first.save(P);
  first.close();
  const x = LshIndex.load(P), y = LshIndex.load(P);
  await x.insert([2n], sigs(['a b c d e f g']));
  await y.insert([3n], sigs(['h i j k l m n']));
  await x.save(P);
  const e = await y.save(P).then(() => null, (err: unknown) => err as NeardupError);
  assert.ok(e, 'the second save is refused');
  assert.is(e!.code, 'ERR_NEARDUP_CONFLICT');
  assert.is(e!.file, P);
  assert.match(e!.message, `'${P}' has changed since this index was loaded from it`);
  let now = LshIndex.load(P);
  assert.ok(now.has(2n) && !now.has(3n), "x's insert is there, nothing of y's");
  now.close();
  // the same object saves again and again (each save is its new reference)
  await x.insert([4n], sigs(['o p q r s t u']));
  await x.save(P);
  // and overwrite: true replaces it on purpose
  await y.save(P, { overwrite: true });
  now = LshIndex.load(P);
  assert.ok(now.has(3n) && !now.has(2n));
  now.close();
  x.close();
  y.close();
  // another path, or a new index: replaced as before
  const fresh = new LshIndex({ numPerm: 64, b: 8, r: 8 });
  await fresh.save(P);
  fresh.close();
  assert.is(LshIndex.load(P).size, 0);
  assert.equal(fs.readdirSync(d).filter((n) => n.includes('neardup-tmp')), [], 'no temporary file left');
});

test('LshIndex: two processes load, insert and save one file: the second save is refused, nothing lost', async () => {
  const d = newDir();
  const P = path.join(d, 'p.lsh');
  const ix = new LshIndex({ numPerm: 64, b: 8, r: 8 });
  await ix.insert([1n], sigs(['one two three four five six']));
  await ix.save(P);
  ix.close();
  const mine = await LshIndex.loadAsync(P);
  await mine.insert([7n], sigs(['seven eight nine ten eleven']));
  const script = `const { LshIndex, minhashSync } = require(${JSON.stringify(path.join(root, 'dist', 'index.js'))});
    (async () => { const ix = LshIndex.load(process.argv[1]);
      await ix.insert([8n], minhashSync(['other words here and there'], { numPerm: 64 }).signatures);
      await ix.save(process.argv[1]); ix.close(); })().catch((e) => { console.error(e.code); process.exit(1); });`;
  const other = spawnSync(process.execPath, ['-e', script, P], { encoding: 'utf8' });
  assert.is(other.status, 0, other.stderr);
  const e = await mine.save(P).then(() => null, (err: unknown) => err as NeardupError);
  assert.is(e?.code, 'ERR_NEARDUP_CONFLICT');
  mine.close();
  const now = LshIndex.load(P);
  assert.ok(now.has(8n) && now.has(1n) && !now.has(7n), "the other process's insert survives");
  now.close();
  // a save while another process holds the file's lock: refused (ERR_NEARDUP_IO), the file untouched
  const held = lockIndexFile(P)!;
  try {
    const again = LshIndex.load(P);
    const busy = await again.save(P).then(() => null, (err: unknown) => err as NeardupError);
    again.close();
    assert.is(busy?.code, 'ERR_NEARDUP_IO');
    assert.match(busy!.message, 'is being written by another process');
  } finally {
    held.release();
  }
});

test('SimhashIndex.save / saveSync onto the file it was opened from refuses when another writer saved there since; overwrite replaces it', async () => {
  const d = newDir();
  const P = path.join(d, 'p.simh');
  const first = new SimhashIndex();
  first.insert([1n], [0x1234n]);
  await first.save(P);
  first.close();
  const x = SimhashIndex.open(P), y = await SimhashIndex.openAsync(P);
  x.insert([2n], [0xffffn]);
  y.insert([3n], [0xff00ff00n]);
  x.saveSync(P);
  const e = await y.save(P).then(() => null, (err: unknown) => err as NeardupError);
  assert.is(e?.code, 'ERR_NEARDUP_CONFLICT');
  assert.is(e!.file, P);
  assert.throws(() => y.saveSync(P), (err: NeardupError) => err.code === 'ERR_NEARDUP_CONFLICT');
  let now = SimhashIndex.open(P);
  assert.ok(now.has(2n) && !now.has(3n), "x's insert is there, nothing of y's");
  now.close();
  x.insert([4n], [0x0fn]);
  await x.save(P);  // its own saves are its new reference
  y.saveSync(P, { overwrite: true });
  now = SimhashIndex.open(P);
  assert.ok(now.has(3n) && !now.has(2n) && !now.has(4n));
  now.close();
  // another process holding the file's lock: refused, the file untouched
  const held = lockIndexFile(P)!;
  try {
    const busy = await x.save(P, { overwrite: true }).then(() => null, (err: unknown) => err as NeardupError);
    assert.is(busy?.code, 'ERR_NEARDUP_IO');
  } finally {
    held.release();
  }
  assert.throws(() => y.saveSync(P, { overwrite: 1 as unknown as boolean }), TypeError);
  x.close();
  y.close();
  assert.equal(fs.readdirSync(d).filter((n) => n !== 'p.simh'), [], 'no temporary or lock file left');
});

test('paragraphs --load-seen F --save-seen F: a run whose F another run saved meanwhile refuses to save (that run\'s n-grams kept)', async () => {
  const d = newDir();
  const F = path.join(d, 'seen.bin');
  fs.writeFileSync(path.join(d, 'a.txt'), 'first corpus paragraph with enough words in it to count here\n');
  fs.writeFileSync(path.join(d, 'b.txt'), 'second corpus paragraph with other words in it to count there\n');
  assert.is(run(['paragraphs', 'a.txt', '--save-seen', F], {}, d).code, 0);
  fs.writeFileSync(path.join(d, 'c.txt'), 'a third paragraph from the slow run with its own words in it\n');
  // the slow run: stops itself once it has loaded F
  const slow = spawn(process.execPath, [MAIN, 'paragraphs', 'c.txt', '--load-seen', F, '--save-seen', F],
    { cwd: d, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NEARDUP_TEST_KILL_AT: 'paragraphs-seen-loaded:SIGSTOP' } });
  let stderr = '';
  slow.stderr!.on('data', (x) => { stderr += x; });
  slow.stdout!.resume();
  const done = new Promise<number | null>((resolve) => slow.on('exit', (code) => resolve(code)));
  const state = () => { try { return fs.readFileSync(`/proc/${slow.pid}/stat`, 'utf8').replace(/^.*\) /s, '')[0]; } catch { return '?'; } };
  for (let i = 0; i < 600 && state() !== 'T'; i++) await new Promise((r) => setTimeout(r, 50));
  assert.is(state(), 'T', 'the slow run stopped after loading F');
  // meanwhile another run adds b's paragraph to F
  assert.is(run(['paragraphs', 'b.txt', '--load-seen', F, '--save-seen', F], {}, d).code, 0);
  const saved = fs.readFileSync(F);
  process.kill(slow.pid!, 'SIGCONT');
  assert.is(await done, 1, stderr);
  assert.match(stderr, `--save-seen '${F}' has changed since the seen-set was loaded from it`);
  assert.equal(fs.readFileSync(F), saved, 'F as the other run saved it');
  // b's paragraph is in F: a run against it drops it
  const r = run(['paragraphs', 'b.txt', '--load-seen', F], {}, d);
  assert.is(r.code, 0, r.stderr);
  assert.is(r.stdout.trim(), '');
  assert.equal(fs.readdirSync(d).sort(), ['a.txt', 'b.txt', 'c.txt', 'seen.bin'], 'no temporary or lock file left');
});

// ---- 3. indexes that lack what dedup needs, or whose metadata is out of range ----

/** BASE's dedup metadata with `change` applied. */
function baseMeta(change: (m: Record<string, unknown> & { settings: Record<string, unknown> }) => void = () => undefined): string {
  const ix = LshIndex.load(BASE);
  const m = JSON.parse(ix.metadata) as Record<string, unknown> & { settings: Record<string, unknown> };
  ix.close();
  change(m);
  return JSON.stringify(m);
}

test('dedup --index: an LshIndex written through the API (no signatures, no texts) is refused, naming what it lacks', async () => {
  const d = newDir();
  const meta = JSON.parse(baseMeta()) as { settings: { num_perm: number; b: number; r: number; shingle: { n: number } } };
  const texts = fs.readFileSync(A, 'utf8').trim().split('\n').slice(0, 50).map((l) => (JSON.parse(l) as { text: string }).text);
  for (const verify of ['exact', 'estimate', 'none']) {
    const P = path.join(d, `api-${verify}.lsh`);
    const s = meta.settings;
    const ix = new LshIndex({ numPerm: s.num_perm, b: s.b, r: s.r });
    await ix.insert(Array.from({ length: texts.length }, (_, i) => i), minhashSync(texts, { numPerm: s.num_perm, n: s.shingle.n }).signatures);
    ix.metadata = baseMeta((m) => { m.settings.verify = verify; });
    await ix.save(P);
    ix.close();
    const r = run(['dedup', B, '--index', P, '--flags', path.join(d, 'f')]);
    assert.is(r.code, 1, `${verify}: ${r.stderr}`);
    assert.match(r.stderr, `'${P}' lacks its entries' signatures`);
    if (verify === 'exact') assert.match(r.stderr, "and its entries' texts");
    assert.not.ok(fs.existsSync(path.join(d, 'f')));
    // the API: a coded error naming the file
    const loaded = LshIndex.load<bigint>(P);
    let err: NeardupError | undefined;
    try {
      new DedupSession({ index: loaded }).close();
    } catch (e) {
      err = e as NeardupError;
    }
    loaded.close();
    assert.is(err?.code, 'ERR_NEARDUP_INVALID_INPUT', verify);
    assert.is(err?.file, P);
  }
});

test('dedup --index: metadata with out-of-range counts is refused on load, naming the file', async () => {
  const d = newDir();
  const cases: Array<[string, (m: Record<string, unknown> & { settings: Record<string, unknown> }) => void, RegExp]> = [
    ['negative documents', (m) => { m.documents = -5; }, /documents -5 is out of range/],
    ['fewer documents than entries', (m) => { m.documents = 3; }, /documents 3 is out of range/],
    ['huge documents', (m) => { m.documents = Number.MAX_SAFE_INTEGER; }, /documents 9007199254740991 is out of range/],
    ['zero runs', (m) => { m.runs = 0; }, /runs 0 is out of range/],
    ['num_perm of another index', (m) => { m.settings.num_perm = 64; }, /settings\.num_perm 64 differs from the index's own 128/],
    ['b of another index', (m) => { m.settings.b = 1; }, /settings\.b 1 differs/],
  ];
  for (const [what, change, re] of cases) {
    // written through the API from the real index: its checksums are right, only the metadata is wrong
    const P = path.join(d, `${what.replace(/ /g, '-')}.lsh`);
    const ix = LshIndex.load(BASE);
    ix.metadata = baseMeta(change);
    await ix.save(P);
    ix.close();
    const r = run(['dedup', B, '--index', P, '--index-out', P]);
    assert.is(r.code, 1, `${what}: ${r.stderr}`);
    assert.match(r.stderr, `'${P}': its dedup metadata is damaged`, what);
    assert.match(r.stderr, re, what);
    const loaded = LshIndex.load<bigint>(P);
    let err: NeardupError | undefined;
    try {
      new DedupSession({ index: loaded }).close();
    } catch (e) {
      err = e as NeardupError;
    }
    loaded.close();
    assert.is(err?.code, 'ERR_NEARDUP_CORRUPT', what);
    assert.is(err?.file, P, what);
  }
});

// ---- 4. SIGKILL at the commit point of dedup --index I --index-out I, and at random moments ----

const OUTS = ['flags', 'clusters', 'kept'] as const;

test('SIGKILL at the index commit of dedup --index I --index-out I: the old index or the new one, reruns give the reference', async () => {
  const ref = newDir();
  const refIndex = path.join(ref, 'I.lsh');
  fs.copyFileSync(BASE, refIndex);
  const args = (d: string) => ['dedup', B, '--index', path.join(d, 'I.lsh'), '--index-out', path.join(d, 'I.lsh'), ...OUTS.flatMap((o) => [`--${o}`, path.join(d, o)])];
  const t0 = Date.now();
  const rr = run(args(ref));
  const seconds = (Date.now() - t0) / 1000;
  assert.is(rr.code, 0, rr.stderr);
  const refBytes = (d: string) => [fs.readFileSync(path.join(d, 'I.lsh')), ...OUTS.map((o) => fs.readFileSync(path.join(d, o)))];
  const want = refBytes(ref);
  const base = fs.readFileSync(BASE);
  const check = (d: string, what: string) => {
    // the index is the old one or the complete new one, and it opens and answers
    const now = fs.readFileSync(path.join(d, 'I.lsh'));
    assert.ok(now.equals(base) || now.equals(want[0]), `${what}: the index is neither the old nor the new one`);
    const ix = LshIndex.load(path.join(d, 'I.lsh'));
    assert.ok(ix.size > 0);
    ix.close();
    // every output is missing (it did not exist) or complete
    OUTS.forEach((o, k) => {
      const f = path.join(d, o);
      if (fs.existsSync(f)) assert.ok(fs.readFileSync(f).equals(want[k + 1]), `${what}: --${o} is partial`);
    });
    return now.equals(base);
  };
  const rerun = (d: string, what: string) => {
    // a killed run's temporary file is swept by the next run once it is 5 s old (io::IsStale: younger ones may
    // belong to a run that has not locked them yet): aged here rather than waited for
    const old = Date.now() / 1000 - 60;
    for (const n of fs.readdirSync(d)) if (n.includes('neardup-tmp')) fs.utimesSync(path.join(d, n), old, old);
    const r = run(args(d));
    assert.is(r.code, 0, `${what}: ${r.stderr}`);
    refBytes(d).forEach((b, k) => assert.ok(b.equals(want[k]), `${what}: ${k === 0 ? 'the index' : `--${OUTS[k - 1]}`} differs from the reference`));
    assert.equal(fs.readdirSync(d).filter((n) => n.includes('neardup-tmp')), [], `${what}: temporary files left`);
  };
  for (const point of ['dedup-index-write', 'dedup-index-renamed']) {
    const d = newDir();
    fs.copyFileSync(BASE, path.join(d, 'I.lsh'));
    const r = run(args(d), { NEARDUP_TEST_KILL_AT: point });
    assert.is(r.signal, 'SIGKILL', `${point}: ${r.stderr}`);
    const old = check(d, point);
    assert.is(old, point === 'dedup-index-write', `${point}: which index`);
    if (old) rerun(d, point);
    else refBytes(d).forEach((b, k) => assert.ok(b.equals(want[k]), `${point}: committed outputs differ`));
  }
  // random moments in the run (start-up, reading, the outputs, the index write)
  let x = 7;
  const rnd = () => ((x = (Math.imul(x, 1664525) + 1013904223) >>> 0) / 2 ** 32);
  let hit = 0;
  for (let round = 0; round < 5; round++) {
    const d = newDir();
    fs.copyFileSync(BASE, path.join(d, 'I.lsh'));
    const child = spawn(process.execPath, [MAIN, ...args(d)], { cwd: tmp, stdio: 'ignore' });
    const exited = new Promise<NodeJS.Signals | null>((res) => child.on('exit', (_c, sig) => res(sig)));
    await new Promise((res) => setTimeout(res, (0.3 + 0.7 * rnd()) * seconds * 1000));
    child.kill('SIGKILL');
    if ((await exited) === 'SIGKILL') hit++;
    if (check(d, `round ${round}`)) rerun(d, `round ${round}`);
  }
  assert.ok(hit > 0, 'no kill landed inside a run');
});

// ---- 6. similar build into the user's folder; outputs inside a work folder ----

test("similar build refuses a non-empty folder that holds no similar index, and removes none of the user's files", async () => {
  const d = newDir();
  const docs = path.join(tmp, 'sim.jsonl');
  fs.writeFileSync(docs, Array.from({ length: 30 }, (_, i) => JSON.stringify({ id: i, text: `document ${i} with words ${i % 7} and more ${i * 3}` })).join('\n') + '\n');
  // names the index uses for its own files
  const mine = { 'similar.sqlite': 'my database', 'PENDING': 'my notes', 'pairs-0.ckp': 'my pairs', 'notes.txt': 'hello' };
  for (const [n, t] of Object.entries(mine)) fs.writeFileSync(path.join(d, n), t);
  const r = run(['similar', 'build', docs, '--index', d, '--n', '3']);
  assert.is(r.code, 1, r.stderr);
  assert.match(r.stderr, `'${d}' is not empty and holds no similar index`);
  for (const [n, t] of Object.entries(mine)) assert.is(fs.readFileSync(path.join(d, n), 'utf8'), t, `${n} untouched`);
  assert.equal(fs.readdirSync(d).sort(), Object.keys(mine).sort(), 'nothing added (no LOCK either)');
  // the API refuses it too
  const e = await ChunkIndex.build(d, [{ id: 1, text: 'a b c d' }]).then(() => null, (err: unknown) => err as NeardupError);
  assert.is(e?.code, 'ERR_NEARDUP_INVALID_INPUT');
  // an interrupted build of ours is cleared and built again (SIGKILL before its commit)
  const ours = path.join(tmp, `d${nDir++}`);
  const k = run(['similar', 'build', docs, '--index', ours, '--n', '3'], { NEARDUP_TEST_KILL_AT: 'build-committed-table' });
  assert.is(k.signal, 'SIGKILL', k.stderr);
  const again = run(['similar', 'build', docs, '--index', ours, '--n', '3']);
  assert.is(again.code, 0, again.stderr);
  assert.not.ok(fs.existsSync(path.join(ours, 'BUILDING')), 'the marker goes at the commit');
  const fresh = path.join(tmp, `d${nDir++}`);
  assert.is(run(['similar', 'build', docs, '--index', fresh, '--n', '3']).code, 0);
  assert.is(run(['similar', 'top', '--index', ours]).stdout, run(['similar', 'top', '--index', fresh]).stdout);
});

test('staged runs: no output inside the work folder, whatever its name (dedup --work, dedup-stage plan, passages --work)', () => {
  const w = newDir();
  for (const [cmd, opt] of [[['dedup'], '--flags'], [['dedup'], '--clusters'], [['dedup'], '--kept'], [['dedup-stage', 'plan'], '--pairs'], [['dedup'], '--removed-ids']] as const) {
    for (const name of ['plan.json', 'mine.txt', 'sub/x']) {
      const extra = opt === '--removed-ids' ? ['--id-field', 'text'] : [];
      const r = run([...cmd, A, '--work', w, opt, path.join(w, name), ...extra]);
      assert.is(r.code, 2, `${cmd.join(' ')} ${opt} ${name}: ${r.stderr}`);
      assert.match(r.stderr, /work folder/);
    }
  }
  // --kept-dir: the work folder itself, or inside it
  for (const kd of [w, path.join(w, 'kept')]) {
    const r = run(['dedup', A, '--work', w, '--kept-dir', kd]);
    assert.is(r.code, 2, r.stderr);
  }
  assert.equal(fs.readdirSync(w), [], 'nothing written in the work folder');
  // passages: -o inside the work folder
  const r = run(['passages', 'index', A, '-o', path.join(w, 'ix'), '--work', w, '--shards', '2']);
  assert.is(r.code, 1, r.stderr);
  assert.match(r.stderr, /inside the work folder/);
  // outside it: fine
  assert.is(run(['dedup', A, '--work', w, '--flags', path.join(tmp, 'staged.flags')]).code, 0);
});

test.after(() => fs.rmSync(tmp, { recursive: true, force: true }));

test.run();
