// The Python package (python/) and docs/python.md, through the built CLI (dist/cli/main.js) as a user's Python
// calls it: subprocess from Python, stderr not a terminal.
// - docs/python.md's recipe, run as written (its one ```python block), with numpy and with numpy made
//   unimportable; its results compared with the library's (dedup(), minhashSync(), simhashFingerprintsSync()).
// - every function of the package (test/support/python_api.py) compared with the CLI's own outputs of the
//   same commands, made here; the functions returning numbers a second time without numpy.
// - how the package finds the CLI ($NEARDUP_BIN, its npm package, PATH, the error), and `pip install` offline.
// Skipped, saying so, without python3.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawn, spawnSync, type SpawnSyncReturns } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { dedup, minhashSync, simhashFingerprintsSync, SimhashIndex } from '../lib/index';
import { rng } from './reference/random';

const root = path.join(__dirname, '..');
const MAIN = path.join(root, 'dist', 'cli', 'main.js');
const CANDIDATES = process.env.NEARDUP_PYTHON ? [process.env.NEARDUP_PYTHON] : ['python3', '/usr/bin/python3'];

function probe(code: string): string | null {
  for (const py of CANDIDATES) {
    const r = spawnSync(py, ['-c', code], { encoding: 'utf8' });
    if (r.status === 0) return py;
  }
  return null;
}
// Any python3 for the package; the first one with numpy for the numpy runs (may be Debian's python3-numpy).
const PYTHON = probe('import sys; assert sys.version_info >= (3, 8)');
const PYTHON_NUMPY = probe('import numpy');

let scratch = '';
let blocker = ''; // a folder whose numpy/__init__.py raises ImportError: first on PYTHONPATH, numpy is not importable

function setup(): string {
  if (!scratch) {
    scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'neardup-python-'));
    blocker = path.join(scratch, 'no-numpy');
    fs.mkdirSync(path.join(blocker, 'numpy'), { recursive: true });
    fs.writeFileSync(path.join(blocker, 'numpy', '__init__.py'), "raise ImportError('numpy is blocked by test/python.test.ts')\n");
  }
  return scratch;
}

function skip(why: string): boolean {
  if (PYTHON) return false;
  console.log(`  SKIPPED: no python3 (>= 3.8) found (${CANDIDATES.join(', ')}): ${why}`);
  return true;
}

function mkdir(name: string): string {
  const d = path.join(setup(), name);
  fs.mkdirSync(d, { recursive: true });
  return d;
}

/** Runs python with the package on PYTHONPATH (numpy blocked unless withNumpy), node on PATH, and a TMPDIR
 * of its own, which must be empty afterwards (the package leaves no temporary file). */
function python(py: string, args: string[], cwd: string, opts: { withNumpy: boolean; env?: Record<string, string>; pythonPath?: string }) {
  const tmp = fs.mkdtempSync(path.join(setup(), 'tmpdir-'));
  const pp = [opts.withNumpy ? '' : blocker, opts.pythonPath ?? path.join(root, 'python')].filter(Boolean).join(path.delimiter);
  const env: Record<string, string | undefined> = {
    ...process.env, PYTHONPATH: pp, PYTHONDONTWRITEBYTECODE: '1', TMPDIR: tmp,
    PATH: `${path.dirname(process.execPath)}${path.delimiter}${process.env.PATH}`, NEARDUP_BIN: undefined, ...opts.env,
  };
  const r = spawnSync(py, args, { cwd, encoding: 'utf8', maxBuffer: 1 << 28, timeout: 120_000, env: env as NodeJS.ProcessEnv });
  const left = fs.readdirSync(tmp);
  assert.equal(left, [], `temporary files left behind in TMPDIR: ${left}`);
  fs.rmdirSync(tmp);
  return r;
}

function ok(r: SpawnSyncReturns<string>, what: string): string {
  assert.is(r.status, 0, `${what} failed (${r.status}):\n${r.stderr}`);
  return r.stdout;
}

const lines = (s: string) => s.split('\n').filter((l) => l !== '');
const jsonl = (s: string) => lines(s).map((l) => JSON.parse(l));

function corpus(count = 300): { ids: string[]; texts: string[] } {
  const r = rng(42);
  const vocab = Array.from({ length: 800 }, (_, i) => `w${i.toString(36)}`);
  const texts: string[] = [];
  for (let i = 0; i < count; i++) {
    if (i > 10 && r() < 0.3) {
      const src = texts[Math.floor(r() * texts.length)].split(' ');
      texts.push(src.map((w) => (r() < 0.02 ? vocab[Math.floor(r() * vocab.length)] : w)).join(' '));
    } else {
      texts.push(Array.from({ length: 60 + Math.floor(r() * 60) }, () => vocab[Math.floor(r() * vocab.length)]).join(' '));
    }
  }
  return { ids: texts.map((_, i) => `doc-${(i * 7919) % 1000}`), texts };
}

const writeCorpus = (file: string, ids: string[], texts: string[]) =>
  fs.writeFileSync(file, texts.map((t, i) => JSON.stringify({ id: ids[i], text: t })).join('\n') + '\n');

test('the CLI is built (dist/cli/main.js, npx tsc -p tsconfig.json)', () => {
  assert.ok(fs.existsSync(MAIN), 'build the TypeScript first: npx tsc -p tsconfig.json');
});

function recipe(): string {
  const md = fs.readFileSync(path.join(root, 'docs', 'python.md'), 'utf8');
  const blocks = [...md.matchAll(/```python\n([\s\S]*?)```/g)].map((m) => m[1]);
  assert.is(blocks.length, 1, 'docs/python.md has one python block');
  return blocks[0];
}

for (const withNumpy of [true, false]) {
  test(`docs/python.md: the recipe runs as written and agrees with the library (${withNumpy ? 'numpy' : 'without numpy'})`, async () => {
    if (skip("docs/python.md's recipe")) return;
    const py = withNumpy ? PYTHON_NUMPY : PYTHON!;
    if (!py) {
      console.log('  SKIPPED: no python3 with numpy (install python3-numpy); the recipe ran without numpy');
      return;
    }
    const dir = mkdir(`recipe-${withNumpy ? 'numpy' : 'plain'}`);
    const { ids, texts } = corpus();
    writeCorpus(path.join(dir, 'corpus.jsonl'), ids, texts);
    const epilogue = `
import json as _json
print(_json.dumps({
  "numpy": neardup.HAVE_NUMPY,
  "summary": summary, "kept_ids": kept_ids, "duplicate_of": duplicate_of,
  "pairs": [[a, b, e] for a, b, e in pairs], "shape": [len(sigs), len(sigs[0])],
  "sigs": [int(v) for row in sigs for v in row], "options": options, "j01": estimated_jaccard(0, 1),
  "fingerprints": [str(int(x)) for x in fingerprints], "h01": hamming(0, 1),
}))
`;
    fs.writeFileSync(path.join(dir, 'recipe.py'), recipe() + epilogue);
    const out = JSON.parse(ok(python(py, ['recipe.py'], dir, { withNumpy }), 'python3 recipe.py'));
    assert.is(out.numpy, withNumpy);

    const want = await dedup(texts, { threshold: 0.8, verify: 'exact', pairs: true });
    assert.ok(want.duplicates > 20, `${want.duplicates} duplicates in the corpus`);
    assert.is(out.summary.documents, texts.length);
    assert.is(out.summary.duplicates, want.duplicates);
    assert.equal(out.kept_ids, ids.filter((_, i) => want.duplicate[i] === 0));
    const dupOf: Record<string, string> = {};
    for (let i = 0; i < texts.length; i++) if (want.duplicate[i]) dupOf[ids[i]] = ids[want.representative[i]];
    assert.equal(out.duplicate_of, dupOf);
    const key = (a: string, b: string) => `${a} ${b}`;
    const gotPairs = new Map<string, number>(out.pairs.map((p: [string, string, number]) => [key(p[0], p[1]), p[2]]));
    assert.is(gotPairs.size, want.pairA.length);
    for (let i = 0; i < want.pairA.length; i++) {
      const e = gotPairs.get(key(ids[want.pairA[i]], ids[want.pairB[i]]));
      assert.ok(e !== undefined && Math.abs(e - want.pairExact[i]) < 1e-5, `pair ${want.pairA[i]} ${want.pairB[i]}`);
    }

    const sigs = minhashSync(texts, { numPerm: 128 });
    assert.equal(out.shape, [texts.length, 128]);
    assert.equal(out.sigs, Array.from(sigs.signatures));
    assert.is(out.options.numPerm, 128);
    let eq = 0;
    for (let j = 0; j < 128; j++) if (sigs.signatures[j] === sigs.signatures[128 + j]) eq++;
    assert.is(out.j01, eq / 128);

    const fps = simhashFingerprintsSync(texts, { profile: 'default', unit: 'word', n: 3, split: 'nonword', lowercase: true });
    assert.equal(out.fingerprints, Array.from(fps, String));
    let x = fps[0] ^ fps[1], bits = 0;
    while (x) { x &= x - 1n; bits++; }
    assert.is(out.h01, bits);
  });
}

// The CLI's own outputs of the commands python_api.py runs through the package, and the files it reads.
interface Truth {
  ids: string[]; texts: string[];
  dedupSummary: Record<string, unknown>; flagsId: boolean[]; clustersId: { id: string; kept: number; kept_id: string }[];
  pairs: Record<string, unknown>[]; removed: string[]; flags: boolean[]; clusters: number[]; kept: string;
  minhash: number[][]; minhashDs: number[][]; fingerprints: string[]; findAll: string[][]; findAllIds: string[][];
  fFlags: boolean[]; fSelf: boolean[]; onion: Record<string, string[]>; simh: { ids: bigint[]; fps: bigint[] };
  seenSize: number; seenApprox: number; wClusters: number[]; wDuplicates: number;
  query: unknown[]; pairsP: unknown[]; extract: unknown[]; top: unknown[]; topIds: unknown[]; similarQuery: unknown[]; topUpdated: unknown[];
}
let truth: Truth | null = null;

/** The CLI, asynchronously: makeTruth runs independent commands two at a time (this suite's share of the cores). */
let running = 0;
const queue: (() => void)[] = [];
async function cliAsync(args: string[], cwd: string, input?: string, stderr = false): Promise<string> {
  if (running >= 2) await new Promise<void>((resolve) => queue.push(resolve));
  running++;
  try {
    return await new Promise<string>((resolve, reject) => {
      const child = spawn(process.execPath, [MAIN, ...args], { cwd, stdio: ['pipe', 'pipe', 'pipe'] });
      const out: Buffer[] = [], err: Buffer[] = [];
      child.stdout.on('data', (d: Buffer) => out.push(d));
      child.stderr.on('data', (d: Buffer) => err.push(d));
      child.on('error', reject);
      child.on('close', (code) => {
        if (code !== 0) reject(new Error(`neardup ${args.join(' ')} failed (${code}):\n${Buffer.concat(err)}`));
        else resolve(Buffer.concat(stderr ? err : out).toString('utf8'));
      });
      child.stdin.end(input ?? '');
    });
  } finally {
    running--;
    queue.shift()?.();
  }
}

async function makeTruth(dir: string): Promise<Truth> {
  if (truth) return truth;
  const { ids, texts } = corpus(120);
  writeCorpus(path.join(dir, 'corpus.jsonl'), ids, texts);
  fs.writeFileSync(path.join(dir, 'bad.jsonl'), '{"text": "one"}\n{"text": "two"}\n{"text": three}\n');
  writeCorpus(path.join(dir, 'q.jsonl'), ids.slice(0, 20), texts.slice(0, 20));
  writeCorpus(path.join(dir, 'q10.jsonl'), ids.slice(0, 10), texts.slice(0, 10));
  fs.writeFileSync(path.join(dir, 'c.vert'), texts.map((t) => `<doc>\n<p>\n${t.split(' ').join('\n')}\n</p>\n</doc>\n`).join(''));
  const run = (...args: string[]) => cliAsync(args, dir);
  const read = (f: string) => fs.readFileSync(path.join(dir, f), 'utf8');
  const bool = (s: string) => lines(s).map((l) => l === '1');
  const mh = ['--num-perm', '16', '--lowercase'];
  const seen = async (args: string[]) =>
    JSON.parse(lines(await cliAsync(['paragraphs', 'corpus.jsonl', '--stats', ...args], dir, undefined, true)).filter((l) => l.startsWith('{')).pop()!).seen_size as number;
  // Each chain runs its commands in order; the chains run side by side.
  const [dedupSummary, , wSummary, minhash, , minhashDs, , fFlags, selfStats, simhash, onionDone, seenSize, seenApprox, passages, similar] = await Promise.all([
    run('dedup', 'corpus.jsonl', '--threshold', '0.8', '--id-field', 'id', '--verify', 'exact', '--flags', 'cli-flags-id.txt',
      '--clusters', 'cli-clusters.jsonl', '--pairs', 'cli-pairs.jsonl', '--removed-ids', 'cli-removed.jsonl').then(JSON.parse),
    run('dedup', 'corpus.jsonl', '--flags', 'cli-flags.txt', '--clusters', 'cli-clusters.txt', '--kept', 'cli-kept.jsonl', '--index-out', 'cli.lsh'),
    run('dedup', 'corpus.jsonl', '--work', 'W', '--clusters', 'cli-clusters-w.txt').then(JSON.parse),
    run('minhash', 'corpus.jsonl', ...mh).then(jsonl),
    run('minhash', 'corpus.jsonl', ...mh, '-o', 'cli.mhsg'),
    run('minhash', 'corpus.jsonl', '--profile', 'datasketch', '--num-perm', '16').then(jsonl),
    run('minhash', 'corpus.jsonl', '--profile', 'datasketch', '--num-perm', '16', '-o', 'cli-ds.mhsg'),
    (async () => {
      await run('minhash', 'corpus.jsonl', ...mh, '--format', 'doubri', '-o', 'cli.hash');
      const f = await run('doubri', 'init', 'cli.hash');
      fs.writeFileSync(path.join(dir, 'cli.hash.f'), f);
      return [...f].map((c) => c === '1');
    })(),
    (async () => {
      await cliAsync(['doubri', 'minhash', 'cli-self.hash'], dir, read('corpus.jsonl'));
      fs.writeFileSync(path.join(dir, 'cli-self.hash.f'), await run('doubri', 'init', 'cli-self.hash'));
      return JSON.parse(await cliAsync(['doubri', 'self', 'IDX'], dir, 'cli-self.hash\n'));
    })(),
    (async () => {
      const fingerprints = lines(await run('simhash', 'fingerprint', 'corpus.jsonl'));
      const [findAll, findAllIds] = await Promise.all([
        cliAsync(['simhash', 'find-all', '--distance', '3'], dir, fingerprints.join('\n') + '\n'),
        cliAsync(['simhash', 'find-all', '--distance', '3', '--ids'], dir, fingerprints.map((f, i) => `${100 + i} ${f}`).join('\n') + '\n'),
      ]);
      return { fingerprints, findAll: lines(findAll).map((l) => l.split(' ')), findAllIds: lines(findAllIds).map((l) => l.split(' ')) };
    })(),
    // Onion's hash files, from vertical text of the corpus
    run('onion', 'hashgen', '-q', '-n', '3', '-o', 'H.', '-c', '2', 'c.vert').then(() => run('onion', 'hashdup', '-q', '-o', 'D', 'H.0', 'H.1')),
    seen(['-n', '3', '--save-seen', 'cli.psen']),
    seen(['-n', '3', '--seen', 'approx', '--save-seen', 'cli-approx.psen']),
    (async () => {
      await run('passages', 'index', '-o', 'cli-P', '--id-field', 'id', 'corpus.jsonl');
      const [query, pairsP, extract] = await Promise.all([
        run('passages', 'query', 'cli-P', '--id-field', 'id', 'q.jsonl'), run('passages', 'pairs', 'cli-P'),
        run('passages', 'extract', 'cli-P', '--limit', '5')]);
      return { query: jsonl(query), pairsP: jsonl(pairsP), extract: jsonl(extract) };
    })(),
    (async () => {
      await run('similar', 'build', 'corpus.jsonl', '--index', 'cli-S');
      const [top, topIds, similarQuery] = await Promise.all([
        run('similar', 'top', '--index', 'cli-S'), run('similar', 'top', '--index', 'cli-S', '--id', ids[1], '--id', ids[2]),
        run('similar', 'query', 'q10.jsonl', '--index', 'cli-S')]);
      await run('similar', 'build', 'corpus.jsonl', '--index', 'cli-S2');
      await cliAsync(['similar', 'update', '--index', 'cli-S2'], dir, JSON.stringify({ id: ids[1], text: null }) + '\n');
      const topUpdated = await run('similar', 'top', '--index', 'cli-S2');
      return { top: jsonl(top), topIds: jsonl(topIds), similarQuery: jsonl(similarQuery), topUpdated: jsonl(topUpdated) };
    })(),
  ]);
  void onionDone;
  // read here with Buffer (8-byte little-endian values)
  const onion: Record<string, string[]> = {};
  for (const f of ['H.0', 'H.1', 'D']) {
    const b = fs.readFileSync(path.join(dir, f));
    onion[f] = Array.from({ length: b.length / 8 }, (_, i) => b.readBigUInt64LE(8 * i).toString());
  }
  // A SimHash index is written by the library only (SimhashIndex.save).
  const fps = simhash.fingerprints.map(BigInt), sids = fps.map((_, i) => 1000n + BigInt(i) * 3n);
  const ix = new SimhashIndex({ blocks: 6, distance: 3 });
  ix.insert(sids, fps);
  ix.saveSync(path.join(dir, 'lib.simh'));
  ix.close();
  truth = {
    ids, texts, dedupSummary, flagsId: bool(read('cli-flags-id.txt')), clustersId: jsonl(read('cli-clusters.jsonl')),
    pairs: jsonl(read('cli-pairs.jsonl')), removed: jsonl(read('cli-removed.jsonl')), flags: bool(read('cli-flags.txt')),
    clusters: lines(read('cli-clusters.txt')).map(Number), kept: read('cli-kept.jsonl'), minhash, minhashDs, ...simhash,
    fFlags, fSelf: [...read('cli-self.hash.f')].map((c) => c === '1'), onion, simh: { ids: sids, fps }, seenSize, seenApprox,
    wClusters: lines(read('cli-clusters-w.txt')).map(Number), wDuplicates: wSummary.duplicates as number, ...passages, ...similar,
  };
  assert.ok(selfStats.num_drops > 5 && truth.fSelf.filter((f) => !f).length === selfStats.num_drops, 'doubri self dropped records');
  assert.ok(dedupSummary.duplicates as number > 10, 'the corpus has duplicates');
  return truth;
}

for (const withNumpy of [true, false]) {
  test(`python/: every function against the CLI's own outputs (${withNumpy ? 'numpy' : 'without numpy'})`, async () => {
    if (skip('the Python package')) return;
    const py = withNumpy ? PYTHON_NUMPY : PYTHON!;
    if (!py) {
      console.log('  SKIPPED: no python3 with numpy (install python3-numpy); the package ran without numpy');
      return;
    }
    const dir = mkdir('api');
    const t = await makeTruth(dir);
    for (const d of ['py-P', 'py-S']) fs.rmSync(path.join(dir, d), { recursive: true, force: true });
    const o = JSON.parse(ok(python(py, [path.join(root, 'test', 'support', 'python_api.py'), dir, withNumpy ? 'all' : 'arrays'], dir, { withNumpy }), 'python_api.py'));
    assert.is(o.numpy, withNumpy);
    const n = t.texts.length;

    // dedup
    const d = o.dedup;
    assert.is(d.kept_kind, withNumpy ? 'numpy.ndarray' : 'builtins.list');
    assert.is(d.kept_dtype, withNumpy ? 'bool' : null);
    assert.is(d.clusters_dtype, withNumpy ? 'int64' : null);
    assert.equal(d.kept, t.flagsId);
    assert.equal(d.clusters, t.clustersId.map((c) => c.kept));
    assert.equal(d.ids, t.ids);
    assert.equal(d.kept_ids, t.clustersId.map((c) => c.kept_id));
    assert.equal(d.pairs, t.pairs.map((p) => [p.a, p.b, p.a_id, p.b_id, p.estimate, p.exact]));
    assert.equal(d.removed_ids, t.removed);
    for (const k of ['documents', 'kept', 'duplicates', 'clusters', 'reported_pairs', 'b', 'r']) assert.is(d.summary[k], t.dedupSummary[k], k);
    const dupOf: Record<string, string> = {};
    t.clustersId.forEach((c) => { if (c.kept !== t.clustersId.indexOf(c)) dupOf[c.id] = c.kept_id; });
    assert.equal(d.duplicate_of, dupOf);
    assert.equal(o.dedup_dicts, { kept: t.flagsId, pairs: d.pairs, kept_ids: d.kept_ids });
    assert.equal(o.dedup_texts.kept, t.flags);
    assert.equal(o.dedup_texts.clusters, t.clusters);
    assert.is(o.dedup_texts.pairs, null);
    const dupLines: Record<string, number> = {};
    t.clusters.forEach((k, i) => { if (k !== i) dupLines[String(i)] = k; });
    assert.equal(o.dedup_texts.duplicate_of, dupLines);
    assert.is(o.dedup_kept_file, t.kept);

    // minhash, simhash
    assert.equal(o.minhash.values, t.minhash);
    assert.is(o.minhash.kind, withNumpy ? 'numpy.ndarray' : 'builtins.list');
    assert.is(o.minhash.dtype, withNumpy ? 'uint32' : null);
    assert.equal(o.minhash_texts, t.minhash);
    assert.equal(o.minhash_doubri, t.minhash);
    assert.equal(o.simhash.values, t.fingerprints);
    assert.is(o.simhash.dtype, withNumpy ? 'uint64' : null);
    assert.equal(o.simhash_pairs, t.findAll);
    assert.equal(o.simhash_pairs_ids, t.findAllIds);
    // string ids (quotes, spaces) come back as given; the pairs are those of the integer ids, in input order
    assert.equal(o.simhash_pairs_str, t.findAllIds.map((p) => p.map((x) => `doc "${x}"`)));

    // readers
    assert.equal(o.read_mhsg, { values: t.minhash, count: n, num_perm: 16, profile: 'fast', options: o.read_mhsg.options, format: 'neardup', dtype: withNumpy ? 'uint32' : null });
    assert.is(o.read_mhsg.options.numPerm, 16);
    assert.is(o.read_mhsg.options.lowercase, true);
    assert.equal(o.read_mhsg_ds.values, t.minhashDs);
    assert.is(o.read_mhsg_ds.profile, 'datasketch');
    assert.equal(o.read_hash, { values: t.minhash, count: n, num_perm: 16, format: 'doubri' });
    assert.is(o.read_hash_auto, 'doubri');
    assert.equal(o.read_f, { 'cli.hash.f': t.fFlags, 'cli-self.hash.f': t.fSelf });
    assert.equal(o.read_onion, t.onion);
    assert.ok(t.onion.D.length > 0 && t.onion['H.0'].length > 0);
    const simh = t.simh.ids.map((id, i) => `${id} ${t.simh.fps[i]}`).sort();
    assert.equal(o.read_simh.ids.map((id: string, i: number) => `${id} ${o.read_simh.fingerprints[i]}`).sort(), simh);
    assert.is(o.read_simh.blocks, 6);
    assert.is(o.read_simh.distance, 3);
    assert.is(o.read_simh.dtype, withNumpy ? 'uint64' : null);
    // The LSH index of dedup --index-out: the kept lines' numbers, their signatures (dedup's defaults: fast,
    // 128 values, lower-cased char 5-grams: minhashSync's defaults with lowercase) and texts (verify exact).
    const keptLines = t.flags.flatMap((k, i) => (k ? [i] : []));
    const lsh = o.read_lsh;
    assert.equal([lsh.version, lsh.profile, lsh.num_perm, lsh.bands, lsh.rows], [2, 'fast', 128, t.dedupSummary.b, t.dedupSummary.r]);
    assert.equal(lsh.keys, keptLines);
    const sigs = minhashSync(keptLines.map((i) => t.texts[i]), { numPerm: 128, lowercase: true }).signatures;
    assert.equal(lsh.signatures.flat(), Array.from(sigs));
    assert.equal(lsh.data, keptLines.map((i) => t.texts[i]));
    assert.is(lsh.metadata.format, 'neardup-dedup-index');
    assert.is(lsh.metadata.documents, n);
    // LSH index version 1 (written by earlier releases; test/fixtures/lsh-v1, as test/lsh.test.ts reads them)
    const v1 = JSON.parse(fs.readFileSync(path.join(root, 'test', 'fixtures', 'lsh-v1', 'expected.json'), 'utf8'));
    for (const [name, wide] of [['datasketch', false], ['fast64', true]] as const) {
      const e = v1[name];
      assert.equal(o.read_lsh_v1[name], { version: 1, profile: e.params.profile, value_bytes: wide ? 8 : 4, num_perm: e.params.numPerm,
        bands: e.params.b, rows: e.params.r, keys: v1.ids.filter((x: string) => x !== e.removed).map(Number) }, name);
    }
    assert.equal(o.read_lsh_v1.empty, { version: 1, profile: 'doubri', value_bytes: 4, num_perm: o.read_lsh_v1.empty.num_perm, bands: 2, rows: 4, keys: [] });
    assert.equal(o.read_psen, { ngram: 3, approximate: false, keys: t.seenSize, distinct: t.seenSize });
    assert.equal(o.read_psen_approx, { ngram: 3, approximate: true, fp_rate: 0.01, count: t.seenApprox, bits_ok: true });
    assert.equal(o.read_clrp.representatives, t.wClusters);
    assert.equal(o.read_clrp.representatives, t.clusters);
    assert.is(o.read_clrp.counts.duplicates, t.wDuplicates);
    assert.equal(o.read_flags, t.flags);
    assert.equal(o.read_clusters, t.clusters);
    const mhsgSize = fs.statSync(path.join(dir, 'cli.mhsg')).size;
    assert.equal(o.header.slice(0, 5), ['MHSG', 1, 0, [n, 16], mhsgSize - 64]);

    // errors: the file, what and where
    const e = o.errors;
    assert.match(e.magic.message, /bad-magic\.mhsg: offset 0: not a neardup file/);
    assert.match(e.header_crc.message, /bad-header_crc\.mhsg: offset 60: header checksum mismatch/);
    assert.match(e.payload.message, /bad-payload\.mhsg: offset 64: payload checksum mismatch/);
    assert.match(e.truncated.message, /offset 24: payload size \d+ in the header, but the file holds \d+ bytes/);
    assert.is(e.newer.type, 'UnsupportedVersionError');
    assert.match(e.newer.message, /offset 12: MHSG version 9 is not supported/);
    assert.match(e.flags_f.message, /bad\.f: offset 4: byte 'x' is not a flag/);
    assert.match(e.flags_txt.message, /bad-flags\.txt:3: '2' is not a flag/);
    assert.match(e.onion.message, /bad\.onion: offset 8: size 12 is not a multiple of 8/);
    assert.match(e.simh_truncated.message, /bad\.simh: offset 24: payload size/);
    assert.match(e.simh_as_lsh.message, /lib\.simh: offset 8: file kind 'SIMH', expected 'LSHI'/);
    assert.is(e.verify_false, n);
    assert.is(o.cli_error.returncode, 1);
    assert.match(o.cli_error.message, /^neardup dedup failed \(exit status 1\): .*bad\.jsonl:3/);
    assert.match(o.cli_error_stdin.message, /<stdin>:2: field 'text' is missing/);
    assert.match(o.type_error, /document 0 is of type bytes/);

    if (!withNumpy) return;
    // iteration over passages and similar results: what the CLI prints, line for line
    assert.equal(o.passages_query, t.query);
    assert.ok(t.pairsP.length > 5, 'the passage index has pairs');
    assert.equal(o.passages_pairs, t.pairsP);
    assert.equal(o.passages_pairs_own, t.pairsP);
    assert.equal(o.passages_extract, t.extract);
    assert.equal(o.similar_top, t.top);
    assert.equal(o.similar_top_own, t.top);
    assert.equal(o.similar_top_ids, t.topIds);
    assert.equal(o.similar_query, t.similarQuery);
    assert.equal(o.similar_top_updated, t.topUpdated);
    assert.ok(t.top.length > t.topUpdated.length, 'the update removed a document');
    assert.is(o.stream_error.returncode, 1);
    assert.match(o.stream_error.message, /^neardup passages pairs failed \(exit status 1\): .*no-such-index/);
  });
}

test('python/: the CLI is found through $NEARDUP_BIN, then its npm package, then PATH, else a clear error', () => {
  if (skip('finding the CLI')) return;
  const dir = mkdir('find');
  const show = 'import neardup, json\ntry:\n    print(json.dumps(neardup.find_cli()))\nexcept neardup.NeardupNotFound as e:\n    print(json.dumps(str(e)))\n';
  fs.writeFileSync(path.join(dir, 'show.py'), show);
  const find = (env: Record<string, string>, pythonPath?: string) =>
    JSON.parse(ok(python(PYTHON!, ['show.py'], dir, { withNumpy: false, env, pythonPath }), 'show.py'));
  // In the repository (as in node_modules/neardup/python): the package's own CLI.
  const own = find({});
  assert.is(own[1], MAIN);
  assert.is(fs.realpathSync(own[0]), fs.realpathSync(process.execPath));
  // $NEARDUP_BIN first: a script (run as it is) or a .js entry (run with node).
  const fake = path.join(dir, 'fake-neardup');
  fs.writeFileSync(fake, `#!/bin/sh\nexec '${process.execPath}' '${MAIN}' "$@"\n`, { mode: 0o755 });
  assert.equal(find({ NEARDUP_BIN: fake }), [fake]);
  assert.equal(find({ NEARDUP_BIN: MAIN }).slice(1), [MAIN]);
  assert.match(find({ NEARDUP_BIN: path.join(dir, 'nope') }), /NEARDUP_BIN=.*nope is not a file or a command on PATH/);
  // A copy outside any npm package: `neardup` on PATH, else an error naming what was tried.
  const copy = path.join(dir, 'copy');
  fs.cpSync(path.join(root, 'python', 'neardup'), path.join(copy, 'neardup'), { recursive: true });
  const bin = path.join(dir, 'bin');
  fs.mkdirSync(bin, { recursive: true });
  fs.copyFileSync(fake, path.join(bin, 'neardup'));
  fs.chmodSync(path.join(bin, 'neardup'), 0o755);
  const basePath = `${path.dirname(process.execPath)}${path.delimiter}/usr/bin${path.delimiter}/bin`;
  assert.equal(find({ PATH: `${bin}${path.delimiter}${basePath}` }, copy), [path.join(bin, 'neardup')]);
  const err = find({ PATH: basePath }, copy);
  assert.match(err, /cannot find the neardup command line; tried: \$NEARDUP_BIN \(not set\); .*find\/dist\/cli\/main\.js; .*`neardup` on PATH\. Set NEARDUP_BIN/);
  // and the PATH route runs: dedup through the `neardup` found on PATH
  writeCorpus(path.join(dir, 'c.jsonl'), ['a', 'b', 'c'], ['the quick brown fox jumps over the lazy dog', 'something else entirely, and longer', 'the quick brown fox jumps over the lazy dog']);
  fs.writeFileSync(path.join(dir, 'run.py'), "import neardup\nprint(list(map(bool, neardup.dedup('c.jsonl').kept)))\n");
  assert.is(ok(python(PYTHON!, ['run.py'], dir, { withNumpy: false, pythonPath: copy, env: { PATH: `${bin}${path.delimiter}${basePath}` } }), 'run.py').trim(), '[True, True, False]');
});

test('python/: leaving an iterator early stops the CLI with SIGTERM (so it removes its temporary files), then ends', () => {
  if (skip('stopping the CLI')) return;
  const dir = mkdir('stop');
  // A stand-in CLI printing lines until SIGTERM, which it records (SIGKILL would leave no record).
  const fake = path.join(dir, 'endless');
  fs.writeFileSync(fake, `#!/bin/sh\ntrap 'echo "$*" > "${path.join(dir, 'terminated')}"; exit 143' TERM\nwhile :; do echo '{"a": 1}'; sleep 0.05; done\n`, { mode: 0o755 });
  fs.writeFileSync(path.join(dir, 'stop.py'), "import neardup\nit = neardup.passages_pairs('IDX', min_shared=2)\nprint(next(it))\nit.close()\nprint('closed')\n");
  const out = ok(python(PYTHON!, ['stop.py'], dir, { withNumpy: false, env: { NEARDUP_BIN: fake } }), 'stop.py');
  assert.equal(lines(out), ["{'a': 1}", 'closed']);
  assert.is(fs.readFileSync(path.join(dir, 'terminated'), 'utf8'), 'passages pairs IDX --min-shared 2\n');
});

test('python/: pip installs it offline (no index), and the installed copy finds its npm package\'s CLI', () => {
  if (skip('pip install')) return;
  const pip = spawnSync(PYTHON!, ['-m', 'pip', '--version'], { encoding: 'utf8' });
  if (pip.status !== 0) {
    console.log(`  SKIPPED: ${PYTHON} has no pip`);
    return;
  }
  const dir = mkdir('pip');
  const target = path.join(dir, 'site');
  // --no-index: nothing may be downloaded; the in-tree backend (python/_build) needs nothing installed.
  const r = spawnSync(PYTHON!, ['-m', 'pip', 'install', '--no-index', '--no-cache-dir', '--disable-pip-version-check', '--target', target, path.join(root, 'python')],
    { encoding: 'utf8', env: { ...process.env, PIP_NO_INPUT: '1', PYTHONDONTWRITEBYTECODE: '1' } });
  ok(r, 'pip install');
  assert.ok(fs.existsSync(path.join(target, 'neardup', 'formats.py')));
  assert.match(fs.readFileSync(path.join(target, 'neardup', '_origin.py'), 'utf8'), new RegExp(`NPM_PACKAGE = '${root.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}'`));
  fs.writeFileSync(path.join(dir, 'show.py'), 'import neardup, json\nprint(json.dumps([neardup.__file__, neardup.find_cli()]))\n');
  const [file, found] = JSON.parse(ok(python(PYTHON!, ['show.py'], dir, { withNumpy: false, pythonPath: target }), 'show.py'));
  assert.is(file, path.join(target, 'neardup', '__init__.py'));
  assert.equal(found.slice(1), [MAIN]);
  // The build leaves nothing in python/ (no build/, no *.egg-info).
  assert.equal(fs.readdirSync(path.join(root, 'python')).filter((f) => f !== '__pycache__').sort(), ['README.md', '_build', 'neardup', 'pyproject.toml']);
  // One version: pyproject.toml, the package and package.json.
  const version = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')).version;
  assert.match(fs.readFileSync(path.join(root, 'python', 'pyproject.toml'), 'utf8'), new RegExp(`^version = "${version}"$`, 'm'));
  assert.match(fs.readFileSync(path.join(root, 'python', 'neardup', '__init__.py'), 'utf8'), new RegExp(`^__version__ = '${version}'$`, 'm'));
});

// NEARDUP_TEST_TIMING=1: how long each test took (this suite aims at a few seconds each on a quiet machine).
if (process.env.NEARDUP_TEST_TIMING) { let t0 = Date.now(); test.after.each(() => { console.log(`  ${Date.now() - t0} ms`); t0 = Date.now(); }); }
test.after(() => {
  if (scratch) fs.rmSync(scratch, { recursive: true, force: true });
});

test.run();
