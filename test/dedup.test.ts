// dedup: planted near-duplicates with exact Jaccard by brute force (recall vs the S-curve, verify exact never
// reports a pair below the threshold), spill mode == in-memory mode, the CLI outputs.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { dedup, shingleHashesSync, collisionProbability, minhashSync, recallParam } from '../lib/index';
import { cli } from './cli-helper';

function corpus(seed: number): { texts: string[] } {
  let s = seed >>> 0;
  const rnd = () => { s = (Math.imul(s, 1664525) + 1013904223) >>> 0; return s / 2 ** 32; };
  const vocab = Array.from({ length: 3000 }, (_, i) => `w${i.toString(36)}${'xyz'[i % 3]}`);
  const texts: string[] = [];
  for (let i = 0; i < 260; i++) {
    if (i > 20 && rnd() < 0.45) {
      // a near-copy of an earlier text: replace a fraction of its words
      const src = texts[Math.floor(rnd() * texts.length)].split(' ');
      const rate = [0, 0.01, 0.03, 0.06, 0.1, 0.2][Math.floor(rnd() * 6)];
      texts.push(src.map((w) => (rnd() < rate ? vocab[Math.floor(rnd() * vocab.length)] : w)).join(' '));
    } else {
      texts.push(Array.from({ length: 150 + Math.floor(rnd() * 100) }, () => vocab[Math.floor(rnd() * vocab.length)]).join(' '));
    }
  }
  return { texts };
}

function jaccardMatrix(texts: string[]): (a: number, b: number) => number {
  const r = shingleHashesSync(texts, { hash: 'fast64', dedupe: true });
  const sets = texts.map((_, i) => Array.from(r.hashes.subarray(r.offsets[i], r.offsets[i + 1]) as BigUint64Array).sort((x, y) => (x < y ? -1 : x > y ? 1 : 0)));
  return (a, b) => {
    const x = sets[a], y = sets[b];
    let i = 0, j = 0, inter = 0;
    while (i < x.length && j < y.length) {
      if (x[i] < y[j]) i++; else if (y[j] < x[i]) j++; else { inter++; i++; j++; }
    }
    return x.length + y.length === 0 ? 1 : inter / (x.length + y.length - inter);
  };
}

const { texts } = corpus(12345);
const J = jaccardMatrix(texts);
const truth: [number, number, number][] = [];
for (let a = 0; a < texts.length; a++) for (let b = a + 1; b < texts.length; b++) { const j = J(a, b); if (j > 0.3) truth.push([a, b, j]); }

test('recall of candidate pairs at J >= t agrees with the S-curve 1-(1-s^r)^b', async () => {
  const t = 0.8;
  const res = await dedup(texts, { threshold: t, pairs: true, verify: 'none', banding: 'datasketch' });
  const found = new Set(Array.from(res.pairA, (a, i) => `${a},${res.pairB[i]}`));
  const pos = truth.filter(([, , j]) => j >= t);
  assert.ok(pos.length >= 30, `planted pairs above t: ${pos.length}`);
  const expected = pos.reduce((acc, [, , j]) => acc + collisionProbability(j, res.b, res.r), 0);
  const variance = pos.reduce((acc, [, , j]) => { const p = collisionProbability(j, res.b, res.r); return acc + p * (1 - p); }, 0);
  const hits = pos.filter(([a, b]) => found.has(`${a},${b}`)).length;
  assert.ok(Math.abs(hits - expected) <= 4 * Math.sqrt(variance) + 1, `hits ${hits} vs expected ${expected.toFixed(1)} (sd ${Math.sqrt(variance).toFixed(2)})`);
  // pairs well below t are rarely candidates either
  const low = truth.filter(([, , j]) => j < 0.5);
  const lowExpected = low.reduce((acc, [, , j]) => acc + collisionProbability(j, res.b, res.r), 0);
  const lowHits = low.filter(([a, b]) => found.has(`${a},${b}`)).length;
  assert.ok(lowHits <= lowExpected + 4 * Math.sqrt(lowExpected) + 1, `low pairs ${lowHits} vs ${lowExpected.toFixed(2)}`);
});

test('verify exact: every reported pair is >= threshold with its brute-force Jaccard', async () => {
  const res = await dedup(texts, { threshold: 0.6, verify: 'exact', pairs: true });
  assert.ok(res.pairA.length > 0);
  for (let i = 0; i < res.pairA.length; i++) {
    const j = J(res.pairA[i], res.pairB[i]);
    assert.ok(Math.abs(res.pairExact[i] - j) < 1e-6, 'exact Jaccard matches brute force');
    assert.ok(j >= 0.6, 'no pair below t');
  }
});

test('quality target: fast profile, 128 values, t = 0.8, default (recall) banding + verify exact: recall >= 0.97, precision 1.0', async () => {
  const t = 0.8;
  const res = await dedup(texts, { threshold: t, verify: 'exact', pairs: true });
  assert.equal([res.numPerm, res.b, res.r], [128, 16, 6], 'banding picked for recall when verifying');
  assert.ok(collisionProbability(t, res.b, res.r) >= 0.99);
  for (let i = 0; i < res.pairA.length; i++) assert.ok(J(res.pairA[i], res.pairB[i]) >= t, 'precision 1.0: no pair below t');
  const pos = truth.filter(([, , j]) => j >= t);
  assert.ok(pos.length >= 80, `planted pairs above t: ${pos.length}`);
  const found = new Set(Array.from(res.pairA, (a, i) => `${a},${res.pairB[i]}`));
  const recall = pos.filter(([a, b]) => found.has(`${a},${b}`)).length / pos.length;
  assert.ok(recall >= 0.97, `recall ${recall}`);
  // doubri's rule: each dropped line's representative is an earlier kept line it is >= t with
  for (let i = 0; i < texts.length; i++) {
    const rep = res.representative[i];
    assert.ok(rep <= i);
    if (rep !== i) assert.ok(res.representative[rep] === rep && J(rep, i) >= t, `line ${i} dropped for ${rep}`);
  }
  // datasketch's balanced (b, r) = (9, 13) misses pairs near t (the reason for the recall banding)
  const ds = await dedup(texts, { threshold: t, verify: 'exact', pairs: true, banding: 'datasketch' });
  assert.equal([ds.b, ds.r], [9, 13]);
  const dsFound = new Set(Array.from(ds.pairA, (a, i) => `${a},${ds.pairB[i]}`));
  assert.ok(pos.filter(([a, b]) => dsFound.has(`${a},${b}`)).length / pos.length < 0.95);
  // the defaults are this verified run; without verification, the default stays datasketch's choice
  const def = await dedup(texts, { threshold: t, pairs: true });
  assert.equal([def.b, def.r, def.settings.verify, def.settings.clustering], [16, 6, 'exact', 'kept']);
  assert.equal(Array.from(def.pairA), Array.from(res.pairA));
  const nv = await dedup(texts, { threshold: t, verify: 'none' });
  assert.equal([nv.b, nv.r], [9, 13]);
});

test('recallParam: P(t) >= minRecall within numPerm values and the smallest false-positive area (brute force)', () => {
  const area = (b: number, r: number, t: number) => {
    const m = 2000;
    let s = 0;
    for (let i = 0; i <= m; i++) s += (i === 0 || i === m ? 1 : i % 2 ? 4 : 2) * collisionProbability((t * i) / m, b, r);
    return (s * t) / m / 3;
  };
  for (const [t, k] of [[0.8, 128], [0.9, 128], [0.5, 64], [0.7, 200], [0.8, 800]] as const) {
    const p = recallParam(t, k);
    assert.ok(p.b * p.r <= k);
    assert.ok(collisionProbability(t, p.b, p.r) >= 0.99, `${t}/${k}`);
    const a = area(p.b, p.r, t);
    for (let r = 1; r <= k; r++) for (let b = 1; b * r <= k; b++) {
      if (collisionProbability(t, b, r) >= 0.99) assert.ok(area(b, r, t) >= a - 1e-6, `${t}/${k}: (${b}, ${r}) beats (${p.b}, ${p.r})`);
    }
  }
  // unreachable target: the best collision probability at t
  assert.equal(recallParam(0.5, 1), { b: 1, r: 1 });
  assert.equal(recallParam(0.3, 4), { b: 4, r: 1 });
});

test('spill mode (tiny --memory) gives the same clusters and pairs as the in-memory run', async () => {
  for (const verify of ['none', 'estimate', 'exact'] as const) {
    const a = await dedup(texts, { threshold: 0.7, verify, pairs: true });
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'neardup-spill-'));
    try {
      const b = await dedup(texts, { threshold: 0.7, verify, pairs: true, memory: 4096, tmp: dir });
      assert.ok(b.runs > 10, `spilled ${b.runs} runs`);
      assert.equal(Array.from(b.representative), Array.from(a.representative));
      assert.equal(Array.from(b.pairA), Array.from(a.pairA));
      assert.equal(Array.from(b.pairB), Array.from(a.pairB));
      assert.equal(Array.from(b.pairEstimate), Array.from(a.pairEstimate));
      assert.equal(fs.readdirSync(dir), [], 'temporary files removed');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }
});

// Exact verification builds shingle sets only for the documents of candidate pairs, in blocks of the memory
// budget: the verified pairs must be exactly the candidate pairs whose brute-force Jaccard (shingleHashes, a
// separate code path) is >= t, with that Jaccard as float32, and the kept documents doubri's rule over them,
// whatever the budget (tiny budgets put partners in different blocks).
test('verify exact == candidates filtered by brute-force Jaccard, for every memory budget', async () => {
  let s = 99;
  const rnd = () => { s = (Math.imul(s, 1664525) + 1013904223) >>> 0; return s / 2 ** 32; };
  const words = ['Alpha', 'beta', 'GAMMA', 'délta', 'ε', 'zeta', 'eta', 'théta', 'iota', 'kappa', '日本', 'mu', 'nu', 'xi', 'o'];
  for (const [opts, t] of [[{}, 0.8], [{ lowercase: false }, 0.6], [{ unit: 'word', n: 2 }, 0.5], [{ n: 3, foldWhitespace: true }, 0.7]] as const) {
    const texts: (string | Uint8Array | null)[] = [];
    for (let i = 0; i < 400; i++) {
      const r = rnd();
      if (r < 0.03) texts.push(null);
      else if (r < 0.06) texts.push(['', 'ab', 'abcd'][i % 3]);
      else if (r < 0.08) texts.push(Buffer.from([0x61, 0xff, 0x62, 0xc3, 0x28, 0x63, 0x64, 0x65, 0x66]));  // invalid UTF-8
      else if (i > 10 && r < 0.6) {
        const src = texts[Math.floor(rnd() * i)];
        const w = (typeof src === 'string' && src.length > 20 ? src : 'beta gamma delta epsilon zeta eta').split(' ');
        texts.push(w.map((x) => (rnd() < 0.08 ? words[Math.floor(rnd() * words.length)] : rnd() < 0.05 ? x.toUpperCase() : x)).join(rnd() < 0.1 ? '  ' : ' '));
      } else texts.push(Array.from({ length: 20 + Math.floor(rnd() * 60) }, () => words[Math.floor(rnd() * words.length)] + (rnd() < 0.3 ? String(Math.floor(rnd() * 9)) : '')).join(' '));
    }
    const base = { ...opts, threshold: t, b: 24, r: 3, pairs: true };
    const cand = await dedup(texts, { ...base, verify: 'estimate', threshold: 0 });
    // dedup's word rule (the fast profile's: split 'unicode', cjk 'bigrams'), not shingleHashes' default
    const sh = shingleHashesSync(texts.map((x) => x ?? ''), { split: 'unicode', cjk: 'bigrams', ...opts, lowercase: 'lowercase' in opts ? opts.lowercase : true, hash: 'fast64', dedupe: true });
    const sets = texts.map((_, i) => new Set(Array.from(sh.hashes.subarray(sh.offsets[i], sh.offsets[i + 1]) as BigUint64Array)));
    const jac = (a: number, b: number) => {
      const x = sets[a], y = sets[b];
      if (x.size + y.size === 0) return 1;
      let inter = 0;
      for (const v of x) if (y.has(v)) inter++;
      return inter / (x.size + y.size - inter);
    };
    const want: [number, number, number][] = [];
    for (let i = 0; i < cand.pairA.length; i++) {
      const j = jac(cand.pairA[i], cand.pairB[i]);
      if (j >= t) want.push([cand.pairA[i], cand.pairB[i], Math.fround(j)]);
    }
    assert.ok(want.length >= 20 && want.length < cand.pairA.length, `${JSON.stringify(opts)}: ${want.length} of ${cand.pairA.length} candidates kept`);
    const rep = Array.from(texts, (_, i) => i);
    for (const [a, b] of [...want].sort((x, y) => x[1] - y[1] || x[0] - y[0])) if (rep[b] === b && rep[a] === a) rep[b] = a;
    for (const memory of [0, 4096, 64 << 10, 1 << 20]) {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'neardup-verify-'));
      try {
        const got = await dedup(texts, { ...base, verify: 'exact', memory, tmp: dir });
        const pairs = Array.from(got.pairA, (a, i) => [a, got.pairB[i], got.pairExact[i]]);
        assert.equal(pairs, want, `${JSON.stringify(opts)} memory ${memory}`);
        assert.equal(Array.from(got.representative), rep);
        assert.is(got.candidatePairs, cand.pairA.length);
        assert.equal(fs.readdirSync(dir), [], 'temporary files removed');
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
      }
    }
  }
});

test('CLI: flags/clusters/kept/pairs aligned with input lines, bad lines skipped, summary on stdout', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'neardup-dedup-'));
  try {
    const lines = [texts[0], texts[1], texts[0], 'short', texts[1]].map((t) => JSON.stringify({ text: t }));
    lines.splice(3, 0, '{bad json');
    fs.writeFileSync(path.join(dir, 'in.jsonl'), lines.join('\n'));  // no final newline
    const r = cli(dir, ['dedup', 'in.jsonl', '--flags', 'f', '--clusters', 'c', '--kept', 'k', '--pairs', 'p', '--on-bad-line', 'skip']);
    assert.is(r.code, 0, r.stderr);
    const summary = JSON.parse(r.stdout.toString());
    assert.is(summary.documents, 6);
    assert.is(summary.bad_lines, 1);
    assert.is(summary.duplicates, 2);
    assert.is(fs.readFileSync(path.join(dir, 'f'), 'utf8'), '1\n1\n0\n1\n1\n0\n');
    assert.is(fs.readFileSync(path.join(dir, 'c'), 'utf8'), '0\n1\n0\n3\n4\n1\n');
    // the skipped bad line (lines[3]) is not copied to --kept: it is not a document
    assert.is(fs.readFileSync(path.join(dir, 'k'), 'utf8'), [lines[0], lines[1], lines[4]].join('\n') + '\n');
    assert.is(fs.readFileSync(path.join(dir, 'p'), 'utf8'), '{"a": 0, "b": 2, "estimate": 1, "exact": 1}\n{"a": 1, "b": 5, "estimate": 1, "exact": 1}\n');
    const fast = cli(dir, ['dedup', 'in.jsonl', '--fast', '--pairs', 'p', '--on-bad-line', 'skip']);
    assert.is(fast.code, 0, fast.stderr);
    assert.is(fs.readFileSync(path.join(dir, 'p'), 'utf8'), '{"a": 0, "b": 2, "estimate": 1}\n{"a": 1, "b": 5, "estimate": 1}\n');
    const e = cli(dir, ['dedup', 'in.jsonl', '--flags', 'f']);
    assert.is(e.code, 1);
    assert.match(e.stderr, /in\.jsonl:4/);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

const VECTORS = path.join(__dirname, 'fixtures', 'vectors');
const jsonlTexts = (file: string) => fs.readFileSync(file, 'utf8').split('\n').filter((l) => l.length > 0).map((l) => JSON.parse(l).text as string);

test('doubri-v1 profile, doubri banding (40 bands of 20 values): flags equal doubri-self on groupA', async () => {
  const texts = jsonlTexts(path.join(VECTORS, 'doubri-v1', 'groupA.jsonl'));
  const expected = fs.readFileSync(path.join(VECTORS, 'doubri-v1', 'groupA.hash.f'), 'latin1');
  const res = await dedup(texts, { profile: 'doubri-v1' });
  assert.equal([res.numPerm, res.b, res.r], [800, 40, 20]);
  const flags = Array.from(res.representative, (rep, i) => (rep === i ? '1' : '0')).join('');
  assert.ok(expected.includes('0'), 'the reference flags some duplicates');
  assert.is(flags, expected);
  // and through the CLI (one flag line per input line)
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'neardup-dedup-doubri-'));
  try {
    const r = cli(dir, ['dedup', path.join(VECTORS, 'doubri-v1', 'groupA.jsonl'), '--profile', 'doubri-v1', '--flags', 'f']);
    assert.is(r.code, 0, r.stderr);
    assert.is(fs.readFileSync(path.join(dir, 'f'), 'latin1'), expected.split('').map((c) => c + '\n').join(''));
    assert.equal([JSON.parse(r.stdout.toString()).b, JSON.parse(r.stdout.toString()).r], [40, 20]);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('doubri-v1 dedup signatures are the byte-compatible ones (groupA.hash)', () => {
  const texts = jsonlTexts(path.join(VECTORS, 'doubri-v1', 'groupA.jsonl'));
  const hash = fs.readFileSync(path.join(VECTORS, 'doubri-v1', 'groupA.hash'));
  const sig = minhashSync(texts.slice(0, 5), { profile: 'doubri-v1' });
  assert.ok(Buffer.from(sig.signatures.buffer, sig.signatures.byteOffset, sig.signatures.byteLength).equals(hash.subarray(24, 24 + 5 * 3200)));
});

test('datasketch profile: candidate pairs of text-in dedup equal datasketch MinHashLSH (word 5-grams)', async () => {
  const v = JSON.parse(fs.readFileSync(path.join(VECTORS, 'datasketch-legacy', 'vectors.json'), 'utf8')) as {
    texts: string[]; word5_shingles: string[][]; cases: { shingles: string; num_perm: number; seed: number; lsh?: { threshold: number; b: number; r: number; pairs: [number, number][] }[] }[];
  };
  let checked = 0;
  for (const c of v.cases.filter((x) => x.shingles === 'word5')) {
    for (const l of c.lsh ?? []) {
      const res = await dedup(v.texts, {
        profile: 'datasketch', numPerm: c.num_perm, seed: c.seed, threshold: l.threshold, unit: 'word', lowercase: true, pairs: true,
        verify: 'none', banding: 'datasketch',
      });
      assert.equal([res.b, res.r], [l.b, l.r]);
      assert.equal(Array.from(res.pairA, (a, i) => [a, res.pairB[i]]), l.pairs, `${c.num_perm}/${c.seed} t=${l.threshold}`);
      checked++;
    }
  }
  assert.ok(checked >= 3, `checked ${checked}`);
  // --verify exact uses the shingles given (lowercased word 5-grams), as in the vectors
  const res = await dedup(v.texts, { profile: 'datasketch', threshold: 0.5, verify: 'exact', pairs: true, unit: 'word' });
  assert.equal([res.settings.shingle.unit, res.settings.shingle.lowercase], ['word', true]);
  assert.ok(res.pairA.length >= 3);
  for (let i = 0; i < res.pairA.length; i++) {
    const x = new Set(v.word5_shingles[res.pairA[i]]), y = new Set(v.word5_shingles[res.pairB[i]]);
    const inter = [...x].filter((w) => y.has(w)).length;
    assert.ok(Math.abs(res.pairExact[i] - inter / (x.size + y.size - inter)) < 1e-6, `pair ${res.pairA[i]},${res.pairB[i]}`);
  }
});

test('CLI: --help documents every option; stdin when no FILE; --banding', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'neardup-dedup-help-'));
  try {
    const h = cli(dir, ['dedup', '--help']);
    assert.is(h.code, 0);
    const help = h.stdout.toString();
    for (const o of ['kept', 'flags', 'clusters', 'pairs', 'profile', 'num-perm', 'seed', 'threshold', 'banding', 'min-recall', 'bands',
      'rows', 'verify', 'memory', 'tmp', 'unit', 'ngram', 'split', 'lowercase', 'strip-punctuation', 'fold-whitespace', 'short', 'field',
      'on-bad-line', 'help']) assert.ok(help.includes(`--${o}`), `--${o} documented`);
    const input = [texts[0], texts[1], texts[0]].map((t) => JSON.stringify({ text: t })).join('\n') + '\n';
    const r = cli(dir, ['dedup', '--flags', 'f', '--verify', 'exact'], input);
    assert.is(r.code, 0, r.stderr);
    const sum = JSON.parse(r.stdout.toString());
    assert.equal([sum.documents, sum.duplicates, sum.b, sum.r], [3, 1, 16, 6]);
    assert.is(fs.readFileSync(path.join(dir, 'f'), 'utf8'), '1\n1\n0\n');
    const d = cli(dir, ['dedup', '-', '--verify', 'exact', '--banding', 'datasketch'], input);
    assert.equal([JSON.parse(d.stdout.toString()).b, JSON.parse(d.stdout.toString()).r], [9, 13]);
    assert.is(cli(dir, ['dedup', '-', '--banding', 'nope'], input).code, 2);
    assert.is(cli(dir, ['dedup', '-', '--bands', '16', '--rows', '6', '--min-recall', '0.9'], input).code, 2);
    // --seed: the same per-profile range as neardup minhash, checked before any input is read
    for (const [profile, seed] of [['datasketch', String(2 ** 32)], ['doubri-v1', String(2 ** 32 - 799)], ['fast', String(2n ** 64n)]]) {
      const bad = cli(dir, ['dedup', '-', '--profile', profile, '--seed', seed], input);
      assert.is(bad.code, 2, `${profile} ${seed}: ${bad.stderr}`);
      assert.match(bad.stderr, /--seed must be an integer from 0 to/);
    }
    assert.is(cli(dir, ['dedup', '-', '--profile', 'doubri-v1', '--seed', String(2 ** 32 - 800)], input).code, 0);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('cli: a Chinese near-duplicate pair is found by dedup --unit word under the default word rule, not under str.split()', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nd-dedup-zh-'));
  try {
    const a = '今天早上我们在学校门口见面，然后一起去图书馆看书。图书馆里人很多，大家都在安静地学习。' +
      '中午我们在食堂吃饭，下午又回到教室上课。老师讲了很多有意思的历史故事，同学们听得非常认真。' +
      '放学以后，我和朋友一起走路回家，路上聊了很多关于未来的计划和梦想。';
    const b = a.replace('非常认真', '十分认真');  // an edited copy: one word changed (Jaccard of its 5-grams of bigrams ~0.87)
    const c = '这是一篇完全不同的文章，讲的是城市交通和环境保护的问题，与上面的内容没有关系。';
    fs.writeFileSync(path.join(dir, 'in.jsonl'), [a, b, c].map((text) => JSON.stringify({ text })).join('\n') + '\n');
    const pairs = (args: string[]) => {
      const r = cli(dir, ['dedup', 'in.jsonl', '--unit', 'word', '--pairs', 'p', ...args]);
      assert.is(r.code, 0, r.stderr);
      const summary = JSON.parse(r.stdout.toString());
      return { shingle: summary.shingle, pairs: fs.readFileSync(path.join(dir, 'p'), 'utf8').split('\n').filter(Boolean).map((l) => { const p = JSON.parse(l); return [p.a, p.b]; }) };
    };
    const now = pairs([]);
    assert.is(now.shingle.split, 'unicode');
    assert.is(now.shingle.cjk, 'bigrams');
    assert.equal(now.pairs, [[0, 1]]);
    const old = pairs(['--split', 'whitespace']);  // the rule before: the whole text is one word
    assert.is(old.shingle.cjk, undefined);
    assert.equal(old.pairs, []);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
