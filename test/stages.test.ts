// dedup as sharded stages (docs/scale.md): for every N the composition of the stages writes the same flags,
// clusters, pairs and kept lines as one `neardup dedup` run (itself checked against brute force in
// dedup.test.ts), stage inputs that are missing or corrupt fail naming the shard and the file.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { spawn, spawnSync, type SpawnSyncReturns } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as zlib from 'node:zlib';
import { minhashSync } from '../lib/index';
import { native } from '../lib/native/addon';

const test = suite('stages');
const root = path.join(__dirname, '..');
const MAIN = path.join(root, 'dist', 'cli', 'main.js');
let dir = '';
const INPUTS = ['a.jsonl', 'big.jsonl', 'empty.jsonl', 'b.jsonl.gz', 'c.jsonl'];

function cli(args: string[]): SpawnSyncReturns<string> {
  return spawnSync(process.execPath, [MAIN, ...args], { cwd: dir, encoding: 'utf8', maxBuffer: 1 << 28, timeout: 120_000, killSignal: 'SIGKILL' });
}
function ok(args: string[]): string {
  const r = cli(args);
  assert.is(r.status, 0, `neardup ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
}
const read = (f: string) => fs.readFileSync(path.join(dir, f));

test.before(() => {
  assert.ok(fs.existsSync(MAIN), `${MAIN} is missing: run npx tsc -p . first`);
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'neardup-stages-'));
  const lines = zlib.gunzipSync(fs.readFileSync(path.join(root, 'test', 'fixtures', 'corpora', 'spamassassin.jsonl.gz'))).toString('utf8').split('\n').slice(0, 1000);
  // three inputs (one gzip), a file of copies (a band bucket of over 100 lines), an empty file, a bad line
  fs.writeFileSync(path.join(dir, 'a.jsonl'), lines.slice(0, 400).join('\n') + '\n');
  const copies = Array.from({ length: 130 }, (_, i) => JSON.stringify({ text: `${lines[3 + (i % 2)].slice(9, 900)} copy` }));
  fs.writeFileSync(path.join(dir, 'big.jsonl'), [...copies.slice(0, 60), '{"text": broken', ...copies.slice(60)].join('\n') + '\n');
  fs.writeFileSync(path.join(dir, 'empty.jsonl'), '');
  fs.writeFileSync(path.join(dir, 'b.jsonl.gz'), zlib.gzipSync(lines.slice(400, 700).join('\n') + '\n'));
  fs.writeFileSync(path.join(dir, 'c.jsonl'), [...lines.slice(700, 1000), ...lines.slice(100, 160)].join('\n') + '\n');
});
test.after(() => { if (!process.env.KEEP) fs.rmSync(dir, { recursive: true, force: true }); });

const OUTS = ['flags', 'clusters', 'pairs', 'kept'] as const;
const COUNTS = ['documents', 'bad_lines', 'kept', 'duplicates', 'clusters', 'candidate_pairs', 'reported_pairs', 'input_bytes', 'b', 'r', 'verify', 'clustering'];

for (const [name, opts, ns] of [
  ['verified (default)', [], [1, 2, 3]], ['--fast', ['--fast'], [1, 2, 3]], ['components', ['--clustering', 'components'], [2]],
  ['verify estimate', ['--verify', 'estimate'], [3]], ['--fast components', ['--fast', '--clustering', 'components'], [2]],
] as [string, string[], number[]][]) {
  test(`${name}: dedup --work --shards N (N = ${ns.join(', ')}) equals dedup`, () => {
    const base = ['dedup', ...INPUTS, '--on-bad-line', 'skip', ...opts];
    const ref = JSON.parse(ok([...base, ...OUTS.flatMap((o) => [`--${o}`, `ref.${o}`])]));
    assert.ok(ref.duplicates > 100, `the fixture has duplicates: ${ref.duplicates}`);
    for (const n of ns) {
      fs.rmSync(path.join(dir, 'w'), { recursive: true, force: true });
      const m = n === 2 ? 3 : n;
      const got = JSON.parse(ok([...base, ...OUTS.flatMap((o) => [`--${o}`, `s.${o}`]), '--work', 'w', '--shards', String(n), '--band-shards', String(m)]));
      for (const o of OUTS) assert.ok(read(`ref.${o}`).equals(read(`s.${o}`)), `${name} N=${n}: --${o} differs`);
      for (const k of COUNTS) assert.equal(got[k], ref[k], `${name} N=${n}: summary ${k}`);
      assert.is(got.stages.length, 3 * n + m + 2);
      assert.equal(got.stages.filter((x: { stage: string }) => x.stage === 'verify').length, n);
      assert.equal(fs.readdirSync(path.join(dir, 'w')).filter((f) => f.includes('neardup-tmp')), [], 'no temporary files left');
    }
  });
}

test('--on-bad-line empty with texts read in place: bad lines are empty documents in every output, as in dedup', () => {
  // plain inputs (texts read in place from their lines by verify and filter) with bad lines of every kind
  // between duplicates: broken JSON, a wrong type, a missing field, invalid UTF-8 in the text
  const lines = fs.readFileSync(path.join(dir, 'a.jsonl'), 'utf8').split('\n').slice(0, 40);
  const bad = ['{"text": broken', '{"text": 5}', '{"body": "no text field"}', Buffer.from([0x7b, 0x22, 0x74, 0x65, 0x78, 0x74, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d]).toString('latin1')];
  const mixed = lines.flatMap((l, i) => (i % 8 === 3 ? [l, bad[((i / 8) | 0) % bad.length], l] : [l]));
  fs.writeFileSync(path.join(dir, 'bad.jsonl'), Buffer.from(mixed.join('\n') + '\n', 'latin1'));
  const inputs = ['a.jsonl', 'bad.jsonl', 'big.jsonl', 'c.jsonl'];
  const ref = JSON.parse(ok(['dedup', ...inputs, '--on-bad-line', 'empty', ...OUTS.flatMap((o) => [`--${o}`, `ref-e.${o}`])]));
  assert.ok(ref.bad_lines >= 5, `bad lines: ${ref.bad_lines}`);
  assert.ok(ref.duplicates > 100, `duplicates: ${ref.duplicates}`);
  for (const n of [1, 2, 3]) {
    fs.rmSync(path.join(dir, 'we'), { recursive: true, force: true });
    const got = JSON.parse(ok(['dedup', ...inputs, '--on-bad-line', 'empty', ...OUTS.flatMap((o) => [`--${o}`, `s-e.${o}`]),
      '--work', 'we', '--shards', String(n)]));
    for (const o of OUTS) assert.ok(read(`ref-e.${o}`).equals(read(`s-e.${o}`)), `N=${n}: --${o} differs`);
    for (const k of COUNTS) assert.equal(got[k], ref[k], `N=${n}: summary ${k}`);
    // the plain inputs were not copied: their texts were read in place
    assert.equal(fs.readdirSync(path.join(dir, 'we')).filter((f) => f.endsWith('.texts')), []);
  }
});

test('separate stage processes, --kept-dir and --kept x.gz: the same files as dedup; reruns are idempotent', () => {
  const opts = ['--on-bad-line', 'skip', '--pairs', 'p.s'];
  fs.rmSync(path.join(dir, 'kd'), { recursive: true, force: true });
  ok(['dedup', ...INPUTS, '--on-bad-line', 'skip', '--pairs', 'p.ref', '--kept-dir', 'kref']);
  ok(['dedup-stage', 'plan', '--work', 'w3', '--shards', '3', '--band-shards', '2', ...opts, '--kept-dir', 'kd', ...INPUTS]);
  for (let i = 0; i < 3; i++) ok(['dedup-stage', 'signatures', '--work', 'w3', '--shard', `${i}/3`]);
  for (let k = 0; k < 2; k++) ok(['dedup-stage', 'buckets', '--work', 'w3', '--shard', `${k}/2`]);
  for (let i = 2; i >= 0; i--) ok(['dedup-stage', 'verify', '--work', 'w3', '--shard', `${i}/3`]);
  ok(['dedup-stage', 'clusters', '--work', 'w3']);
  for (let i = 2; i >= 0; i--) ok(['dedup-stage', 'filter', '--work', 'w3', '--shard', `${i}/3`]);
  ok(['dedup-stage', 'kept', '--work', 'w3']);
  assert.ok(read('p.ref').equals(read('p.s')));
  assert.equal(fs.readdirSync(path.join(dir, 'kd')).sort(), fs.readdirSync(path.join(dir, 'kref')).sort());
  for (const f of fs.readdirSync(path.join(dir, 'kref'))) assert.ok(read(`kd/${f}`).equals(read(`kref/${f}`)), `--kept-dir ${f}`);
  // a rerun of a stage rewrites the same bytes
  const before = ['w3/bkt-1.pairs', 'w3/bkt-1.cand-0', 'w3/vfy-1.pairs'].map(read);
  ok(['dedup-stage', 'buckets', '--work', 'w3', '--shard', '1/2']);
  ok(['dedup-stage', 'verify', '--work', 'w3', '--shard', '1/3']);
  assert.ok(before[0].equals(read('w3/bkt-1.pairs')) && before[1].equals(read('w3/bkt-1.cand-0')) && before[2].equals(read('w3/vfy-1.pairs')));
  // --kept x.gz: parts joined and compressed as dedup does
  ok(['dedup', ...INPUTS, '--on-bad-line', 'skip', '--kept', 'ref.gz']);
  ok(['dedup', ...INPUTS, '--on-bad-line', 'skip', '--kept', 's.gz', '--work', 'w4', '--shards', '2']);
  assert.ok(zlib.gunzipSync(read('ref.gz')).equals(zlib.gunzipSync(read('s.gz'))));
});

test('--fast: a band bucket of over 100 lines keeps doubri\'s rule across band shards', () => {
  // Lines "w u_i" share band 0 (w has the smallest first value), 1 band of 1 value each; "u_0 v", earlier,
  // shares band 1 with "w u_0", which is dropped: the bucket's holder is then "w u_1", and every later line
  // of the bucket is dropped for it, which its first-and-predecessor pairs alone would not give.
  const words = Array.from({ length: 4000 }, (_, k) => `w${k}`);
  const sig = minhashSync(words, { profile: 'datasketch', numPerm: 2, unit: 'word', n: 1, lowercase: true }).signatures as Uint32Array;
  const h0 = (k: number) => sig[2 * k], h1 = (k: number) => sig[2 * k + 1];
  const idx = words.map((_, k) => k);
  const high = idx.filter((k) => h1(k) > 0xf0000000);
  const w = high.reduce((a, k) => (h0(k) < h0(a) ? k : a));
  const seen = new Set<number>();
  const us = idx.filter((k) => k !== w && h0(k) > h0(w) && h1(k) < h1(w) && !seen.has(h1(k)) && seen.add(h1(k))).slice(0, 152);
  const u0 = us[0];
  const v = us.slice(1).find((k) => h1(k) > h1(u0))!;
  const xs = us.filter((k) => k !== v).slice(0, 140);
  const lines = [`${words[u0]} ${words[v]}`, ...xs.map((k) => `${words[w]} ${words[k]}`)].map((t) => JSON.stringify({ text: t }));
  fs.writeFileSync(path.join(dir, 'g1.jsonl'), lines.slice(0, 50).join('\n') + '\n');
  fs.writeFileSync(path.join(dir, 'g2.jsonl'), lines.slice(50).join('\n') + '\n');
  const base = ['dedup', 'g1.jsonl', 'g2.jsonl', '--fast', '--profile', 'datasketch', '--bands', '2', '--rows', '1', '--num-perm', '2', '--unit', 'word', '-n', '1', '--clusters'];
  const ref = JSON.parse(ok([...base, 'g.ref']));
  const rep = read('g.ref').toString().split('\n').slice(0, -1).map(Number);
  assert.is(rep[1], 0, 'the bucket\'s first line is dropped for the earlier line');
  assert.ok(rep.slice(3).every((r) => r === 2), 'the rest of the bucket is dropped for its first kept line');
  assert.is(ref.duplicates, lines.length - 2);
  for (const n of [1, 2]) {
    fs.rmSync(path.join(dir, 'wg'), { recursive: true, force: true });
    ok([...base, 'g.s', '--work', 'wg', '--shards', String(n), '--band-shards', String(n)]);
    assert.ok(read('g.ref').equals(read('g.s')), `N=${n}: --clusters differs`);
  }
});

test('a missing or corrupt stage input fails naming the shard and the file; shards are checked', () => {
  ok(['dedup-stage', 'plan', '--work', 'w5', '--shards', '2', '--flags', 'f5', ...INPUTS.filter((f) => f !== 'big.jsonl')]);
  ok(['dedup-stage', 'signatures', '--work', 'w5', '--shard', '0/2']);
  let r = cli(['dedup-stage', 'buckets', '--work', 'w5', '--shard', '0/2']);
  assert.is.not(r.status, 0);
  assert.match(r.stderr, /signatures shard 1\/2: '.*sig-1\.meta' is missing/);
  ok(['dedup-stage', 'signatures', '--work', 'w5', '--shard', '1/2']);
  const keys = path.join(dir, 'w5', 'sig-1.keys-0');
  const good = fs.readFileSync(keys);
  const bad = Buffer.from(good);
  bad[bad.length - 3] ^= 1;
  fs.writeFileSync(keys, bad);
  r = cli(['dedup-stage', 'buckets', '--work', 'w5', '--shard', '0/2']);
  assert.is.not(r.status, 0);
  assert.match(r.stderr, /signatures shard 1\/2: '.*sig-1\.keys-0' is corrupt: payload checksum mismatch/);
  fs.writeFileSync(keys, good.subarray(0, 40));
  r = cli(['dedup-stage', 'buckets', '--work', 'w5', '--shard', '0/2']);
  assert.match(r.stderr, /sig-1\.keys-0' is corrupt: 40 bytes, shorter than the 64-byte header/);
  fs.writeFileSync(keys, good);
  ok(['dedup-stage', 'buckets', '--work', 'w5', '--shard', '0/2']);
  r = cli(['dedup-stage', 'verify', '--work', 'w5', '--shard', '0/2']);
  assert.match(r.stderr, /buckets shard 1\/2: '.*bkt-1\.cand-0' is missing/);
  ok(['dedup-stage', 'buckets', '--work', 'w5', '--shard', '1/2']);
  // verify reads the records of its documents block by block (each block checked), then each text in place:
  // from the line of a plain input (a.jsonl, c.jsonl), or from the texts a compressed input's shard copied
  // (b.jsonl.gz); each text is checked against its CRC. Line 120 of a.jsonl (shard 0) is copied at the end of
  // c.jsonl (shard 1): a candidate pair verify shard 0 reads.
  const w5 = (f: string) => path.join(dir, 'w5', f);
  assert.not.ok(fs.existsSync(w5('sig-0.texts')), 'plain inputs only: no texts copied');
  assert.ok(fs.existsSync(w5('sig-1.texts')), 'the gzip input\'s texts are copied');
  const locs = w5('sig-0.locs');
  const goodLocs = fs.readFileSync(locs);
  const badLocs = Buffer.from(goodLocs);
  badLocs[64 + 120 * 20 + 9] ^= 1;
  fs.writeFileSync(locs, badLocs);
  r = cli(['dedup-stage', 'verify', '--work', 'w5', '--shard', '0/2']);
  assert.is.not(r.status, 0);
  // blocks of 64 records of 20 bytes (params[1] of the header): document 120 is in block 1
  assert.is(Number(goodLocs.readBigUInt64LE(48)), 64);
  assert.match(r.stderr, /sig-0\.locs' is corrupt: block 1 \(offset 1344\) fails its checksum/);
  fs.writeFileSync(locs, goodLocs.subarray(0, goodLocs.length - 5));
  r = cli(['dedup-stage', 'verify', '--work', 'w5', '--shard', '0/2']);
  assert.match(r.stderr, /signatures shard 0\/2: '.*sig-0\.locs' is corrupt: payload of \d+ bytes, the header says \d+/);
  fs.writeFileSync(locs, goodLocs);
  // a copied text that fails its CRC (every text of the file flipped: verify shard 1 reads some of them)
  const texts = w5('sig-1.texts');
  const goodTexts = fs.readFileSync(texts);
  const flipped = Buffer.from(goodTexts);
  for (let x = 64; x < flipped.length; x++) flipped[x] ^= 1;
  fs.writeFileSync(texts, flipped);
  r = cli(['dedup-stage', 'verify', '--work', 'w5', '--shard', '1/2']);
  assert.is.not(r.status, 0);
  assert.match(r.stderr, /sig-1\.texts' is corrupt: the text of document \d+ \(offset \d+, \d+ bytes\) fails its checksum/);
  fs.writeFileSync(texts, goodTexts);
  ok(['dedup-stage', 'verify', '--work', 'w5', '--shard', '0/2']);
  r = cli(['dedup-stage', 'clusters', '--work', 'w5']);
  assert.match(r.stderr, /verify shard 1\/2: '.*vfy-1\.pairs' is missing/);
  assert.not.ok(fs.existsSync(path.join(dir, 'f5')), 'nothing written downstream of a failure');
  r = cli(['dedup-stage', 'buckets', '--work', 'w5', '--shard', '1/3']);
  assert.match(r.stderr, /the plan has 2 buckets shards/);
  r = cli(['dedup-stage', 'signatures', '--work', 'w5']);
  assert.match(r.stderr, /needs --shard I\/2/);
  // outputs of another plan are refused
  ok(['dedup-stage', 'plan', '--work', 'w5', '--shards', '2', '--threshold', '0.7', '--flags', 'f5', ...INPUTS.filter((f) => f !== 'big.jsonl')]);
  r = cli(['dedup-stage', 'buckets', '--work', 'w5', '--shard', '0/2']);
  assert.match(r.stderr, /sig-0\.meta' was written for another plan/);
});

test('an input changed after the signatures stage fails verify and filter, naming the input (and the line)', () => {
  // plain inputs are read again by verify (their lines) and filter: size and modification time are checked, and
  // each line verify reads must still hold the text that was signed (its CRC)
  const a = path.join(dir, 'x-a.jsonl'), c = path.join(dir, 'x-c.jsonl');
  const goodA = read('a.jsonl');
  fs.writeFileSync(a, goodA);
  fs.copyFileSync(path.join(dir, 'c.jsonl'), c);
  const when = new Date('2020-01-02T03:04:05Z');
  fs.utimesSync(a, when, when);
  ok(['dedup', 'x-a.jsonl', 'x-c.jsonl', '--flags', 'x.ref']);
  ok(['dedup-stage', 'plan', '--work', 'w6', '--shards', '2', '--flags', 'x.s', 'x-a.jsonl', 'x-c.jsonl']);
  for (const st of ['signatures', 'buckets']) for (let i = 0; i < 2; i++) ok(['dedup-stage', st, '--work', 'w6', '--shard', `${i}/2`]);
  // the same size and time, another text on line 120 (document 120, paired with its copy at the end of c.jsonl)
  const lines = goodA.toString('utf8').split('\n');
  const off120 = Buffer.byteLength(lines.slice(0, 120).join('\n') + '\n');
  const line = Buffer.from(lines[120]);
  let at = line.indexOf('"text":"') + 8;
  assert.ok(at > 8, 'the line has a text field');
  while (!(line[at] >= 0x61 && line[at] <= 0x7a)) at++;  // a letter of the text
  const changed = Buffer.from(goodA);
  changed[off120 + at] = changed[off120 + at] === 0x78 ? 0x79 : 0x78;
  fs.writeFileSync(a, changed);
  fs.utimesSync(a, when, when);
  let r = cli(['dedup-stage', 'verify', '--work', 'w6', '--shard', '0/2']);
  assert.is.not(r.status, 0);
  assert.match(r.stderr, new RegExp(`'${a.replace(/[.]/g, '\\.')}' has changed since the signatures stage: the line at offset ${off120} \\(document 120\\) no longer holds the text that was signed`));
  // another size; then only another time
  fs.appendFileSync(a, '{"text": "one more line"}\n');
  r = cli(['dedup-stage', 'verify', '--work', 'w6', '--shard', '0/2']);
  assert.match(r.stderr, /verify shard 0\/2: the input '.*x-a\.jsonl' has changed since the signatures stage \(\d+ bytes, was \d+\); rerun the stages from signatures/);
  fs.writeFileSync(a, goodA);
  r = cli(['dedup-stage', 'verify', '--work', 'w6', '--shard', '0/2']);
  assert.match(r.stderr, /the input '.*x-a\.jsonl' has changed since the signatures stage \(modified\)/);
  fs.utimesSync(a, when, when);
  for (let i = 0; i < 2; i++) ok(['dedup-stage', 'verify', '--work', 'w6', '--shard', `${i}/2`]);
  ok(['dedup-stage', 'clusters', '--work', 'w6']);
  assert.ok(read('x.ref').equals(read('x.s')));
  // filter reads every input again
  fs.appendFileSync(c, '{"text": "late"}\n');
  r = cli(['dedup-stage', 'filter', '--work', 'w6', '--shard', '1/2']);
  assert.match(r.stderr, /filter shard 1\/2: the input '.*x-c\.jsonl' has changed since the signatures stage/);
});

// ---- every output option, through `dedup --work` (the local stages) and the stage commands, against one run ----

/** The files a dedup run wrote: each output option's file, --kept-dir's files by name. */
function outputsOf(prefix: string, set: 'ids' | 'plain'): Map<string, Buffer> {
  const m = new Map<string, Buffer>();
  const names = set === 'ids' ? ['flags', 'clusters', 'pairs', 'removed', 'kept'] : ['clusters', 'pairs'];
  for (const n of names) m.set(n, read(`${prefix}.${n}`));
  if (set === 'plain') for (const f of fs.readdirSync(path.join(dir, `${prefix}.kd`))) m.set(`kept-dir/${f}`, read(`${prefix}.kd/${f}`));
  return m;
}
/** Every output option: with ids (--id-field: --clusters, --pairs and --removed-ids name them) and without (--kept-dir). */
function outputArgs(prefix: string, set: 'ids' | 'plain'): string[] {
  return set === 'ids'
    ? ['--id-field', 'id', '--flags', `${prefix}.flags`, '--clusters', `${prefix}.clusters`, '--pairs', `${prefix}.pairs`, '--removed-ids', `${prefix}.removed`, '--kept', `${prefix}.kept`]
    : ['--clusters', `${prefix}.clusters`, '--pairs', `${prefix}.pairs`, '--kept-dir', `${prefix}.kd`];
}
/** Runs every stage task of a planned work folder as its own process (shards in reverse order). */
function stageCommands(work: string, n: number, m: number): void {
  for (let i = n - 1; i >= 0; i--) ok(['dedup-stage', 'signatures', '--work', work, '--shard', `${i}/${n}`]);
  for (let k = m - 1; k >= 0; k--) ok(['dedup-stage', 'buckets', '--work', work, '--shard', `${k}/${m}`]);
  for (let i = n - 1; i >= 0; i--) ok(['dedup-stage', 'verify', '--work', work, '--shard', `${i}/${n}`]);
  ok(['dedup-stage', 'clusters', '--work', work]);
  for (let i = n - 1; i >= 0; i--) ok(['dedup-stage', 'filter', '--work', work, '--shard', `${i}/${n}`]);
  ok(['dedup-stage', 'kept', '--work', work]);
}
/**
 * ids.jsonl: string ids, integer ids (copies of earlier texts: duplicates), lines without an id and a broken line
 * (--on-bad-line empty: empty documents, id null); c.jsonl ends with copies of a.jsonl's lines 100-159. 2 inputs
 * over 3 shards: shard 0 has none.
 */
const ID_INPUTS = ['ids.jsonl', 'c.jsonl'];
function writeIdsInput(): void {
  if (fs.existsSync(path.join(dir, 'ids.jsonl'))) return;
  const lines = read('a.jsonl').toString('utf8').split('\n').slice(0, 300);
  const texts = lines.map((l) => (JSON.parse(l) as { text: string }).text);
  const ints = texts.slice(100, 160).map((t, k) => JSON.stringify({ id: 7000000000 + k * 13, text: t }));
  const none = texts.slice(200, 230).map((t) => JSON.stringify({ text: `${t} ` }));
  fs.writeFileSync(path.join(dir, 'ids.jsonl'), [...lines.slice(0, 250), ...ints, ...none, '{"id": 5, "text": broken', ...lines.slice(250)].join('\n') + '\n');
}

for (const [mode, variants] of [
  ['dedup --work', [[], ['--fast'], ['--verify', 'estimate'], ['--fast', '--clustering', 'components']]],
  ['the stage commands', [[]]],
] as [string, string[][]][]) {
  test(`every output option through ${mode} (--shards 3, one shard without files) equals dedup's bytes`, () => {
    writeIdsInput();
    for (const opts of variants) {
      for (const set of ['plain', 'ids'] as const) {
        const what = `${mode} ${opts.join(' ') || '(verified)'} ${set}`;
        const base = [...ID_INPUTS, '--on-bad-line', 'empty', ...opts];
        const key = `o-ref${opts.join('')}-${set}`;
        fs.rmSync(path.join(dir, 'o-s.kd'), { recursive: true, force: true });
        fs.rmSync(path.join(dir, 'wo'), { recursive: true, force: true });
        // the single run's outputs, once for both modes
        if (!fs.existsSync(path.join(dir, `${key}.json`))) fs.writeFileSync(path.join(dir, `${key}.json`), ok(['dedup', ...base, ...outputArgs(key, set)]));
        const ref = JSON.parse(read(`${key}.json`).toString());
        assert.ok(ref.duplicates > 100 && ref.reported_pairs !== 0, `${what}: the fixture has duplicates`);
        if (mode === 'dedup --work') {
          const got = JSON.parse(ok(['dedup', ...base, ...outputArgs('o-s', set), '--work', 'wo', '--shards', '3', '--band-shards', '2']));
          for (const k of COUNTS) assert.equal(got[k], ref[k], `${what}: summary ${k}`);
        } else {
          ok(['dedup-stage', 'plan', '--work', 'wo', '--shards', '3', '--band-shards', '2', ...base, ...outputArgs('o-s', set)]);
          stageCommands('wo', 3, 2);
        }
        const want = outputsOf(key, set), got = outputsOf('o-s', set);
        assert.equal([...got.keys()].sort(), [...want.keys()].sort(), `${what}: the same files`);
        for (const [k, v] of want) assert.ok(v.equals(got.get(k)!), `${what}: ${k} differs`);
        if (set === 'ids') {
          const ids = want.get('removed')!.toString().split('\n');
          // lines without an id are bad lines, empty documents under --on-bad-line empty: never near-duplicates
          assert.ok(ids.some((x) => /^\d+$/.test(x)) && ids.some((x) => x.startsWith('"')) && !ids.includes('null'), `${what}: string and integer ids removed, no empty document`);
        }
      }
    }
  });
}

test('standard input in a staged run: spooled to the work folder, the outputs of dedup reading it', () => {
  const input = read('c.jsonl');
  const args = ['-', '--id-field', 'id', '--pairs'];
  const run = (extra: string[]) => spawnSync(process.execPath, [MAIN, 'dedup', ...args, ...extra], { cwd: dir, input, encoding: 'utf8', timeout: 120_000 });
  const ref = run(['in.ref.p', '--removed-ids', 'in.ref.r']);
  assert.is(ref.status, 0, ref.stderr);
  fs.rmSync(path.join(dir, 'win'), { recursive: true, force: true });
  const got = run(['in.s.p', '--removed-ids', 'in.s.r', '--work', 'win', '--shards', '2']);
  assert.is(got.status, 0, got.stderr);
  assert.ok(read('in.ref.p').equals(read('in.s.p')) && read('in.ref.r').equals(read('in.s.r')), '--pairs and --removed-ids of stdin');
  assert.ok(read('in.ref.r').length > 0, 'stdin has duplicates');
  for (const k of ['documents', 'duplicates', 'reported_pairs']) assert.equal(JSON.parse(got.stdout)[k], JSON.parse(ref.stdout)[k], k);
  assert.ok(read('win/stdin.input').equals(input), 'the spooled input');
});

test('SIGKILL at moments through a staged run with --kept/--flags/--clusters: each output is the old file or the complete new one; the rerun gives the single run\'s bytes', async () => {
  const outs = ['flags', 'clusters', 'kept'];
  const base = ['dedup', 'a.jsonl', 'c.jsonl', 'b.jsonl.gz'];
  ok([...base, ...outs.flatMap((o) => [`--${o}`, `kref.${o}`])]);
  const args = [...base, ...outs.flatMap((o) => [`--${o}`, `k.${o}`]), '--work', 'wk', '--shards', '2', '--band-shards', '2'];
  for (const o of outs) fs.writeFileSync(path.join(dir, `k.${o}`), `old ${o}\n`);
  // kills later and later through the run, until one comes after it has ended (a run takes ~0.4 s here)
  let killed = 0;
  for (let ms = 30; ms < 4000; ms += 20) {
    const p = spawn(process.execPath, [MAIN, ...args], { cwd: dir, stdio: 'ignore' });
    const done = new Promise<string | null>((resolve) => p.once('exit', (_, signal) => resolve(signal)));
    const t = setTimeout(() => p.kill('SIGKILL'), ms);
    const signal = await done;
    clearTimeout(t);
    if (signal !== 'SIGKILL') break;
    killed++;
    for (const o of outs) {
      const got = read(`k.${o}`);
      assert.ok(got.equals(Buffer.from(`old ${o}\n`)) || got.equals(read(`kref.${o}`)), `killed after ${ms} ms: --${o} is neither the old file nor the new one`);
    }
  }
  assert.ok(killed >= 3, `only ${killed} run(s) killed before one finished`);
  // A killed run's temporary files are swept by a later run once they are 5 s old (io::kMinStaleAge: younger,
  // their writer, perhaps in another PID namespace, may not have locked them yet); the last kill may be recent.
  const temps = () => fs.readdirSync(dir).filter((f) => /^\.?k\..*(tmp|neardup)/.test(f));
  const past = Date.now() / 1000 - 10;
  for (const f of temps()) fs.utimesSync(path.join(dir, f), past, past);
  ok(args);
  for (const o of outs) assert.ok(read(`k.${o}`).equals(read(`kref.${o}`)), `the rerun: --${o} differs from the single run`);
  assert.equal(temps(), [], 'no temporary file is left beside the outputs');
});

test('the work folder is locked: a run while another holds it is refused; two at once never mix their outputs', async () => {
  const work = path.join(dir, 'wl');
  fs.mkdirSync(work, { recursive: true });
  ok(['dedup', 'a.jsonl', '--flags', 'l.ref-a']);
  ok(['dedup', 'c.jsonl', '--flags', 'l.ref-c']);
  // another run holds the lock (this process, as a run would)
  const fd = fs.openSync(path.join(work, 'LOCK'), 'a');
  assert.ok(native.lockTempFile(fd, path.join(work, 'LOCK')), 'advisory locks work here');
  for (const args of [['dedup', 'a.jsonl', '--flags', 'l.x', '--work', 'wl'], ['dedup-stage', 'plan', '--work', 'wl', '--flags', 'l.x', 'a.jsonl'], ['dedup-stage', 'run', '--work', 'wl']]) {
    const r = cli(args);
    assert.is(r.status, 1, `${args.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, /the work folder '.*wl' is in use by another run/);
  }
  assert.not.ok(fs.existsSync(path.join(dir, 'l.x')) || fs.existsSync(path.join(work, 'plan.json')), 'nothing written');
  fs.closeSync(fd);
  // two runs at once on one folder: each refuses or writes its own outputs and summary
  const spawnRun = (input: string, flags: string) => new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    const p = spawn(process.execPath, [MAIN, 'dedup', input, '--flags', flags, '--work', 'wl', '--shards', '2'], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '', stderr = '';
    p.stdout.on('data', (d) => { stdout += d; });
    p.stderr.on('data', (d) => { stderr += d; });
    p.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
  for (let round = 0; round < 3; round++) {
    for (const f of ['l.a', 'l.c']) fs.rmSync(path.join(dir, f), { force: true });
    const [ra, rc] = await Promise.all([spawnRun('a.jsonl', 'l.a'), spawnRun('c.jsonl', 'l.c')]);
    let succeeded = 0;
    for (const [r, f, docs] of [[ra, 'a', 400], [rc, 'c', 360]] as const) {
      if (r.code === 0) {
        succeeded++;
        assert.is(JSON.parse(r.stdout).documents, docs, `round ${round}: the run of ${f}.jsonl printed its own summary`);
        assert.ok(read(`l.${f}`).equals(read(`l.ref-${f}`)), `round ${round}: --flags of ${f}.jsonl`);
      } else {
        assert.match(r.stderr, /is in use by another run/, `round ${round}: ${r.stderr}`);
      }
    }
    assert.ok(succeeded >= 1, `round ${round}: one of the two runs succeeds`);
  }
});

test('outputs into the work folder\'s own files, inputs among them and \'-\' are refused; --index says why it is refused', () => {
  ok(['dedup-stage', 'plan', '--work', 'wp', '--flags', 'p.f', 'a.jsonl']);
  const plan = read('wp/plan.json');
  fs.symlinkSync(path.join(dir, 'wp', 'plan.json'), path.join(dir, 'plan-link'));
  for (const [args, re] of [
    [['dedup', 'a.jsonl', '--work', 'wp', '--flags', 'wp/plan.json'], /--flags 'wp\/plan\.json' is a file of the work folder/],
    [['dedup', 'a.jsonl', '--work', 'wp', '--clusters', 'plan-link'], /--clusters 'plan-link' is a file of the work folder/],
    [['dedup', 'a.jsonl', '--work', 'wp', '--pairs', './wp/../wp/sig-0.meta'], /is a file of the work folder .*sig-0\.meta/],
    [['dedup-stage', 'plan', '--work', 'wp', '--kept', 'wp/clusters.rep', 'a.jsonl'], /--kept 'wp\/clusters\.rep' is a file of the work folder/],
    [['dedup-stage', 'plan', '--work', 'wp', '--flags', 'wp', 'a.jsonl'], /--flags 'wp' is the work folder/],
    [['dedup', 'wp/plan.json', '--work', 'wp', '--flags', 'p.f'], /the input 'wp\/plan\.json' is a file of the work folder/],
    [['dedup', 'a.jsonl', '--work', 'wp', '--flags', '-'], /--flags -: a staged run .* give a file/],
    [['dedup', 'a.jsonl', '--work', 'wp', '--index', 'none.lshi'], /--index and --index-out are not supported with --work\/--redis: .* cannot share/],
  ] as [string[], RegExp][]) {
    const r = cli(args);
    assert.is(r.status, 2, `${args.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, re);
  }
  assert.ok(read('wp/plan.json').equals(plan), 'plan.json is untouched');
  // any other name in the work folder is refused too (the stages own it); outside it is fine
  const inside = cli(['dedup', 'a.jsonl', '--work', 'wp', '--flags', 'wp/flags.txt']);
  assert.is(inside.status, 2, inside.stderr);
  assert.match(inside.stderr, /--flags 'wp\/flags.txt' is inside the work folder/);
  ok(['dedup', 'a.jsonl', '--work', 'wp', '--flags', 'wp-flags.txt']);
  ok(['dedup', 'a.jsonl', '--flags', 'p.ref']);
  assert.ok(read('wp-flags.txt').equals(read('p.ref')));
});

test.run();
