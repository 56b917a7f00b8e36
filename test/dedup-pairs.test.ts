// dedup --pairs, --clustering components and --verify estimate in bounded memory (issue 26): candidate pairs
// beyond the pair buffer are spilled to sorted runs in --tmp and merged; the outputs are the bytes of the
// in-memory run, the pairs and clusters those of brute force, and no spill file outlives the run (success or
// signal).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { shingleHashesSync } from '../lib/index';
import { cli } from './cli-helper';
import { TSX_FLAGS } from './support/tsx';

const MAIN = path.join(__dirname, '..', 'lib', 'cli', 'main.ts');

function sets(texts: string[]): Int32Array[] {
  const r = shingleHashesSync(texts, { hash: 'fast64', dedupe: true });
  const ids = new Map<bigint, number>();
  return texts.map((_, i) => {
    const h = r.hashes.subarray(r.offsets[i], r.offsets[i + 1]) as BigUint64Array;
    return Int32Array.from(h, (x) => { let v = ids.get(x); if (v === undefined) ids.set(x, v = ids.size); return v; }).sort();
  });
}

function jaccard(x: Int32Array, y: Int32Array): number {
  if (x.length === 0 || y.length === 0) return 0;
  let i = 0, j = 0, inter = 0;
  while (i < x.length && j < y.length) {
    if (x[i] < y[j]) i++; else if (y[j] < x[i]) j++; else { inter++; i++; j++; }
  }
  return inter / (x.length + y.length - inter);
}

// doubri's keep rule over pairs, by b then a (the order the engine does not use when it streams)
function keepRule(n: number, pairs: [number, number][]): number[] {
  const rep = Array.from({ length: n }, (_, i) => i);
  for (const [a, b] of [...pairs].sort((x, y) => x[1] - y[1] || x[0] - y[0])) if (rep[b] === b && rep[a] === a) rep[b] = a;
  return rep;
}

function components(n: number, pairs: [number, number][]): number[] {
  const p = Array.from({ length: n }, (_, i) => i);
  const find = (x: number): number => { while (p[x] !== x) x = p[x] = p[p[x]]; return x; };
  for (const [a, b] of pairs) { const x = find(a), y = find(b); if (x !== y) p[Math.max(x, y)] = Math.min(x, y); }
  return p.map((_, i) => find(i));
}

// two families of near-copies (every band bucket of a family holds hundreds of documents) among unrelated texts
function families(n: number, seed = 11): string[] {
  let s = seed;
  const rnd = () => { s = (Math.imul(s, 1664525) + 1013904223) >>> 0; return s / 2 ** 32; };
  const vocab = Array.from({ length: 2000 }, (_, i) => `v${i.toString(36)}`);
  const words = (k: number) => Array.from({ length: k }, () => vocab[Math.floor(rnd() * vocab.length)]);
  const base = [words(32), words(28)];
  const texts: string[] = [];
  for (let i = 0; i < n; i++) {
    const r = rnd();
    if (r < 0.85) {
      const rate = [0, 0, 0.01, 0.03, 0.05, 0.08, 0.12, 0.18, 0.25][Math.floor(rnd() * 9)];
      texts.push(base[r < 0.6 ? 0 : 1].map((w) => (rnd() < rate ? vocab[Math.floor(rnd() * vocab.length)] : w)).join(' '));
    } else {
      texts.push(words(30).join(' '));
    }
  }
  return texts;
}

function withPairBuffer<T>(n: number | undefined, fn: () => T): T {
  const old = process.env.NEARDUP_TEST_PAIR_BUFFER;
  if (n === undefined) delete process.env.NEARDUP_TEST_PAIR_BUFFER; else process.env.NEARDUP_TEST_PAIR_BUFFER = String(n);
  try { return fn(); } finally {
    if (old === undefined) delete process.env.NEARDUP_TEST_PAIR_BUFFER; else process.env.NEARDUP_TEST_PAIR_BUFFER = old;
  }
}

const readPairs = (file: string): [number, number][] =>
  fs.readFileSync(file, 'utf8').trim().split('\n').map((l) => { const p = JSON.parse(l); return [p.a, p.b] as [number, number]; });

test('--pairs with the candidates spilled to runs: the in-memory bytes, and brute force (keep rule, components, estimate, --fast)', () => {
  const texts = families(420);
  const S = sets(texts);
  const truth: [number, number][] = [];
  for (let a = 0; a < texts.length; a++) for (let b = a + 1; b < texts.length; b++) if (jaccard(S[a], S[b]) >= 0.8) truth.push([a, b]);
  assert.ok(truth.length > 10000, `pairs at J >= 0.8: ${truth.length}`);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'neardup-pairs-'));
  try {
    fs.writeFileSync(path.join(dir, 'd.jsonl'), texts.map((t, i) => JSON.stringify({ id: `k${i}`, text: t })).join('\n') + '\n');
    const tmp = path.join(dir, 'tmp');
    fs.mkdirSync(tmp);
    // 64 bands of 2 values: every pair at J >= 0.8 is a candidate (misses all bands with probability 0.36^64)
    for (const mode of [[], ['--clustering', 'components'], ['--verify', 'estimate'], ['--fast'], ['--id-field', 'id']]) {
      const out: Record<string, { summary: Record<string, unknown>; files: string[] }> = {};
      for (const [name, buffer] of [['memory', undefined], ['spilled', 2000]] as const) {
        const r = withPairBuffer(buffer, () => cli(dir, ['dedup', 'd.jsonl', '--bands', '64', '--rows', '2', ...mode, '--tmp', tmp,
          '--pairs', `${name}.pairs`, '--flags', `${name}.flags`, '--clusters', `${name}.clusters`]));
        assert.is(r.code, 0, r.stderr);
        assert.equal(fs.readdirSync(tmp), [], `${mode} ${name}: no spill file left`);
        out[name] = { summary: JSON.parse(r.stdout.toString()), files: ['pairs', 'flags', 'clusters'].map((f) => fs.readFileSync(path.join(dir, `${name}.${f}`), 'utf8')) };
      }
      const { memory: m, spilled: s } = out;
      assert.is(m.summary.pair_runs, 0, `${mode}: in memory`);
      assert.ok((s.summary.pair_runs as number) > 32, `${mode}: spilled to more runs than one merge takes (${s.summary.pair_runs})`);
      assert.ok((s.summary.spilled_bytes as number) > (m.summary.spilled_bytes as number), `${mode}: the runs are counted`);
      for (const k of ['candidate_pairs', 'reported_pairs', 'kept', 'duplicates', 'clusters']) assert.is(s.summary[k], m.summary[k], `${mode}: ${k}`);
      assert.ok(s.files[0] === m.files[0], `${mode}: the same pairs bytes`);
      assert.ok(s.files[1] === m.files[1] && s.files[2] === m.files[2], `${mode}: the same flags and clusters`);
      const pairs = readPairs(path.join(dir, 'spilled.pairs'));
      assert.is(pairs.length, s.summary.reported_pairs);
      const sorted = [...pairs].sort((x, y) => x[0] - y[0] || x[1] - y[1]);
      assert.equal(pairs, sorted, `${mode}: pairs in (a, b) order`);
      const reps = mode[0] === '--id-field' ? s.files[2].trim().split('\n').map((l) => JSON.parse(l).kept) : s.files[2].trim().split('\n').map(Number);
      if (mode.length === 0 || mode[0] === '--id-field' || mode[1] === 'components') {
        assert.equal(pairs, truth, `${mode}: the pairs are brute force's`);
        assert.equal(reps, mode[1] === 'components' ? components(texts.length, truth) : keepRule(texts.length, truth), `${mode}: clusters`);
      } else {
        // estimate / none: the clusters follow from the reported pairs (the keep rule over them in b order)
        if (mode[0] === '--verify') assert.equal(reps, keepRule(texts.length, pairs), `${mode}: keep rule over the reported pairs`);
        assert.is(s.summary.candidate_pairs, mode[0] === '--fast' ? pairs.length : s.summary.candidate_pairs);
      }
      if (mode[0] === '--id-field') {
        const first = JSON.parse(s.files[0].split('\n')[0]);
        assert.is(first.a_id, `k${first.a}`);
        assert.is(first.b_id, `k${first.b}`);
      }
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

function spillFiles(tmp: string, prefix: string): number {
  return fs.readdirSync(tmp).filter((f) => f.startsWith('neardup-spill-')).reduce((s, d) => {
    try { return s + fs.readdirSync(path.join(tmp, d)).filter((f) => f.startsWith(prefix)).length; } catch { return s; }
  }, 0);
}

function waitFor(cond: () => boolean, ms: number): Promise<boolean> {
  const t0 = Date.now();
  return new Promise((res) => {
    const tick = () => {
      if (cond()) return res(true);
      if (Date.now() - t0 > ms) return res(false);
      setTimeout(tick, 10);
    };
    tick();
  });
}

for (const [signal, status] of [['SIGINT', 130], ['SIGTERM', 143]] as const) {
  test(`${signal} while dedup --pairs spills candidate pairs: exit ${status}, no spill file and no output left`, async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'neardup-pairs-'));
    try {
      const tmp = path.join(dir, 'tmp');
      fs.mkdirSync(tmp);
      fs.writeFileSync(path.join(dir, 'd.jsonl'), families(3000, 5).map((t) => JSON.stringify({ text: t })).join('\n') + '\n');
      const child = spawn(process.execPath, [...TSX_FLAGS, MAIN, 'dedup', 'd.jsonl', '--tmp', tmp, '--pairs', 'p.jsonl', '--flags', 'f.txt'],
        { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, NEARDUP_TEST_PAIR_BUFFER: '2000' } });
      let stderr = '';
      child.stderr.on('data', (d) => { stderr += d; });
      const closed = new Promise<number | null>((res) => child.on('close', (c) => res(c)));
      const spilling = await waitFor(() => spillFiles(tmp, 'neardup-pairs-') > 0, 60000);
      assert.ok(spilling, 'the run spilled candidate pairs');
      child.kill(signal);
      const code = await closed;
      assert.is(code, status, stderr);
      assert.equal(fs.readdirSync(tmp), [], 'the spill folder is gone');
      assert.equal(fs.readdirSync(dir).sort(), ['d.jsonl', 'tmp']);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
}

test.run();
