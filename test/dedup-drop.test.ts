// dedup --removed (the dropped lines themselves) and --drop-all (every member of a cluster of two or more):
// checked against what a plain run's --clusters says, computed here independently (the lines each cluster
// holds, which lines have no near-duplicate), on JSONL, gzip and Parquet inputs with a bad line; in a staged
// run (--work) the same bytes as the single run.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as zlib from 'node:zlib';
import { noisyCorpus } from './support/noisy-corpus';
import { parquetBytes } from './support/formats';

const MAIN = path.join(__dirname, '..', 'dist', 'cli', 'main.js');
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'neardup-drop-'));
const run = (args: string[]) => spawnSync(process.execPath, [MAIN, ...args], { cwd: dir, encoding: 'utf8', maxBuffer: 1 << 28, timeout: 120_000 });
function ok(args: string[]): Record<string, unknown> {
  const r = run(args);
  assert.is(r.status, 0, `neardup ${args.join(' ')}: ${r.stderr}`);
  return JSON.parse(r.stdout) as Record<string, unknown>;
}
const read = (f: string) => fs.readFileSync(path.join(dir, f));
const lines = (f: string) => read(f).toString('utf8').split('\n').filter((l) => l.length > 0);

// 300 documents with planted near-copies over three inputs (plain with a bad line, gzip, Parquet)
const texts = noisyCorpus({ seed: 71, n: 300, copies: 0.5 });
const docLine = (i: number) => JSON.stringify({ id: `d${i}`, text: texts[i] });
const BAD = 57;  // line 57 of the corpus (in a.jsonl) is broken JSON
const INPUTS = ['a.jsonl', 'b.jsonl.gz', 'c.parquet'];
const BASE = ['dedup', ...INPUTS, '--id-field', 'id', '--on-bad-line', 'skip'];

test.before(async () => {
  assert.ok(fs.existsSync(MAIN), `${MAIN} is missing: run npx tsc -p . first`);
  const a = Array.from({ length: 120 }, (_, i) => (i === BAD ? '{"id": "d57", "text": broken' : docLine(i)));
  fs.writeFileSync(path.join(dir, 'a.jsonl'), a.join('\n') + '\n');
  fs.writeFileSync(path.join(dir, 'b.jsonl.gz'), zlib.gzipSync(Array.from({ length: 100 }, (_, i) => docLine(120 + i)).join('\n') + '\n'));
  const ids = Array.from({ length: 80 }, (_, i) => `d${220 + i}`);
  fs.writeFileSync(path.join(dir, 'c.parquet'), await parquetBytes([
    { name: 'id', data: ids, type: 'STRING' }, { name: 'text', data: texts.slice(220), type: 'STRING' },
  ], { rowGroupSize: 30 }));
});
test.after(() => fs.rmSync(dir, { recursive: true, force: true }));

/** Every corpus line as --kept/--removed write it: JSONL lines as they are, Parquet rows as JSON objects. */
function corpusLine(i: number): string {
  return i < 220 ? docLine(i) : JSON.stringify({ id: `d${i}`, text: texts[i] });
}

/** From a plain run's --clusters (JSONL with ids): per line its kept line's number, and each cluster's size. */
function truth() {
  ok([...BASE, '--clusters', 't.clusters']);
  const kept = lines('t.clusters').map((l) => (JSON.parse(l) as { kept: number }).kept);
  const size = new Map<number, number>();
  for (const k of kept) size.set(k, (size.get(k) ?? 0) + 1);
  return { kept, size };
}

test('--removed holds the dropped lines and --kept the others, once each, in corpus order; bad lines in neither', () => {
  const { kept } = truth();
  const s = ok([...BASE, '--kept', 'k.jsonl', '--removed', 'r.jsonl.gz', '--flags', 'f', '--removed-ids', 'ri']);
  const dropped = kept.map((k, i) => k !== i);
  assert.ok(dropped.filter(Boolean).length > 40, 'the corpus has near-copies');
  assert.ok(dropped.some((d, i) => d && i >= 220), 'some dropped lines are Parquet rows');
  const good = (i: number) => i !== BAD;
  assert.equal(lines('k.jsonl'), kept.flatMap((_, i) => (good(i) && !dropped[i] ? [corpusLine(i)] : [])), '--kept');
  const removed = zlib.gunzipSync(read('r.jsonl.gz')).toString('utf8').split('\n').filter((l) => l.length > 0);
  assert.equal(removed, kept.flatMap((_, i) => (good(i) && dropped[i] ? [corpusLine(i)] : [])), '--removed (gzip by its name)');
  assert.equal(lines('f'), dropped.map((d) => (d ? '0' : '1')), '--flags');
  assert.equal(lines('ri').map((l) => JSON.parse(l)), dropped.flatMap((d, i) => (d ? [`d${i}`] : [])), '--removed-ids');
  assert.equal([s.drop_all, s.dropped, s.kept, s.duplicates], [false, removed.length, 300 - removed.length, removed.length]);
});

test('--drop-all: every line of a cluster of two or more is dropped, its kept line too; --clusters unchanged', () => {
  const { kept, size } = truth();
  const s = ok([...BASE, '--drop-all', '--kept', 'dk', '--removed', 'dr', '--flags', 'df', '--removed-ids', 'dri', '--clusters', 'dc']);
  const dropped = kept.map((k) => size.get(k)! > 1);
  const many = [...size.values()].filter((n) => n > 1).length;
  assert.ok(many > 10, `clusters of two or more: ${many}`);
  assert.ok(dropped.some((d, i) => d && kept[i] === i), 'kept lines of clusters are dropped');
  assert.equal(lines('dk'), kept.flatMap((_, i) => (i !== BAD && !dropped[i] ? [corpusLine(i)] : [])), '--kept: lines with no near-duplicate');
  assert.equal(lines('dr'), kept.flatMap((_, i) => (i !== BAD && dropped[i] ? [corpusLine(i)] : [])), '--removed: every member of a cluster');
  assert.equal(lines('df'), dropped.map((d) => (d ? '0' : '1')), '--flags');
  assert.equal(lines('dri').map((l) => JSON.parse(l)), dropped.flatMap((d, i) => (d ? [`d${i}`] : [])), '--removed-ids');
  assert.ok(read('dc').equals(read('t.clusters')), '--clusters: the line each one matched, as without --drop-all');
  const n = dropped.filter(Boolean).length;
  assert.equal([s.drop_all, s.dropped, s.kept], [true, n, 300 - n]);
  assert.is(s.duplicates, kept.filter((k, i) => k !== i).length, 'duplicates: those dropped for another line');
});

test('a staged run (--work, 2 shards) writes the single run\'s --kept, --removed, --flags and --removed-ids, with and without --drop-all', () => {
  for (const extra of [[], ['--drop-all']]) {
    const outs = (p: string) => ['--kept', `${p}.k`, '--removed', `${p}.r.zst`, '--flags', `${p}.f`, '--removed-ids', `${p}.ri`];
    const ref = ok([...BASE, ...extra, ...outs('one')]);
    fs.rmSync(path.join(dir, 'w'), { recursive: true, force: true });
    const got = ok([...BASE, ...extra, ...outs('st'), '--work', 'w', '--shards', '2']);
    for (const x of ['k', 'r.zst', 'f', 'ri']) assert.ok(read(`one.${x}`).equals(read(`st.${x}`)), `${extra.join(' ') || 'plain'}: ${x} differs`);
    for (const k of ['kept', 'dropped', 'drop_all', 'duplicates']) assert.equal(got[k], ref[k], `summary ${k}`);
    assert.ok(fs.readdirSync(path.join(dir, 'w')).some((f) => /^removed-1\.part$/.test(f)), 'the filter shards\' parts of --removed');
  }
});

test('--annotate: every line written carries its cluster (as --clusters), the cluster\'s size and the kept line\'s id; staged the same bytes', () => {
  const { kept, size } = truth();
  ok([...BASE, '--annotate', '--kept', 'ak', '--removed', 'ar']);
  const got = [...lines('ak'), ...lines('ar')].map((l) => JSON.parse(l) as Record<string, unknown>);
  assert.is(got.length, 299);
  const byId = new Map(got.map((o) => [o.id as string, o]));
  for (let i = 0; i < 300; i++) {
    if (i === BAD) continue;
    const o = byId.get(`d${i}`)!;
    const { neardup_cluster: c, neardup_cluster_size: n, neardup_kept_id: k, ...rest } = o;
    assert.equal([c, n, k], [kept[i], size.get(kept[i]), `d${kept[i]}`], `line ${i}`);
    assert.equal(rest, JSON.parse(corpusLine(i)), `line ${i}: its own members unchanged`);
  }
  assert.ok(got.some((o) => (o.neardup_cluster_size as number) > 2), 'clusters of three or more');
  // without ids: no kept_id; a staged run writes the same bytes
  const plain = ['dedup', ...INPUTS, '--on-bad-line', 'skip', '--annotate', '--kept'];
  ok([...plain, 'an.one']);
  assert.not.match(lines('an.one')[0], /neardup_kept_id/);
  fs.rmSync(path.join(dir, 'wa'), { recursive: true, force: true });
  ok([...plain, 'an.st', '--work', 'wa', '--shards', '2']);
  assert.ok(read('an.one').equals(read('an.st')), 'staged --annotate');
  const none = run(['dedup', 'a.jsonl', '--annotate', '--flags', 'x3']);
  assert.is(none.status, 2);
  assert.match(none.stderr, /--annotate adds members to the documents --kept, --kept-dir and --removed write/);
});

test('refused before any work: --removed of standard input, --drop-all with an index', () => {
  const stdin = run(['dedup', '-', '--removed', 'x1']);
  assert.is(stdin.status, 2);
  assert.match(stdin.stderr, /--removed needs file inputs \(they are read twice\), not stdin/);
  const ix = run(['dedup', 'a.jsonl', '--drop-all', '--index-out', 'x2', '--on-bad-line', 'skip']);
  assert.is(ix.status, 2);
  assert.match(ix.stderr, /--drop-all is not possible with --index or --index-out/);
  for (const f of ['x1', 'x2', 'x3']) assert.not.ok(fs.existsSync(path.join(dir, f)), f);
});

test.run();
