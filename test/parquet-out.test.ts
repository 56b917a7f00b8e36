// Parquet out: dedup --kept/--removed named .parquet and --kept-dir of Parquet inputs write Parquet with the
// inputs' schema and values as stored (strings, integers up to 2^63, doubles, booleans, timestamps, JSON,
// nulls), exactly the rows --flags says, read back here with hyparquet; a staged run writes the same rows;
// names asking for a format an output is not written in, JSONL inputs into a Parquet output and inputs of
// two schemas are refused before any work.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { noisyCorpus } from './support/noisy-corpus';
import { parquetBytes, type ParquetColumn } from './support/formats';

const MAIN = path.join(__dirname, '..', 'dist', 'cli', 'main.js');
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'neardup-pqout-'));
const run = (args: string[]) => spawnSync(process.execPath, [MAIN, ...args], { cwd: dir, encoding: 'utf8', maxBuffer: 1 << 28, timeout: 120_000 });
function ok(args: string[]): Record<string, unknown> {
  const r = run(args);
  assert.is(r.status, 0, `neardup ${args.join(' ')}: ${r.stderr}`);
  return JSON.parse(r.stdout) as Record<string, unknown>;
}
const lines = (f: string) => fs.readFileSync(path.join(dir, f), 'utf8').split('\n').filter((l) => l.length > 0);

const texts = noisyCorpus({ seed: 81, n: 260, copies: 0.5 });
const NULL_TEXT = 33;  // a bad row (null text) under --on-bad-line skip: in no document output
const columns = (from: number, to: number): ParquetColumn[] => {
  const idx = Array.from({ length: to - from }, (_, i) => from + i);
  return [
    { name: 'id', data: idx.map((i) => `doc-${i}`), type: 'STRING' },
    { name: 'n', data: idx.map((i) => i * 7 - 100), type: 'INT32' },
    { name: 'big', data: idx.map((i) => (1n << 62n) + BigInt(i) * 1_000_003n), type: 'INT64' },
    { name: 'score', data: idx.map((i) => (i % 5 === 0 ? null : i / 7)), type: 'DOUBLE', nullable: true },
    { name: 'flag', data: idx.map((i) => i % 3 === 0), type: 'BOOLEAN' },
    { name: 'at', data: idx.map((i) => new Date(Date.UTC(2024, 0, 1) + i * 3_600_000)), type: 'TIMESTAMP' },
    { name: 'meta', data: idx.map((i) => ({ k: i, tags: ['a', `t${i % 4}`] })), type: 'JSON' },
    { name: 'text', data: idx.map((i) => (i === NULL_TEXT ? null : texts[i])), type: 'STRING', nullable: true },
  ];
};

type Row = Record<string, unknown>;
let input: Row[] = [];

async function readParquet(file: string): Promise<{ rows: Row[]; schema: unknown[]; groups: number }> {
  const hp = await import('hyparquet');
  const buf = await hp.asyncBufferFromFile(path.join(dir, file));
  const meta = await hp.parquetMetadataAsync(buf);
  const rows = await hp.parquetReadObjects({ file: buf, metadata: meta }) as Row[];
  return { rows, schema: meta.schema.map(({ name, type, repetition_type, converted_type, logical_type, num_children }) => ({ name, type, repetition_type, converted_type, logical_type, num_children })), groups: meta.row_groups.length };
}

test.before(async () => {
  assert.ok(fs.existsSync(MAIN), `${MAIN} is missing: run npx tsc -p . first`);
  fs.writeFileSync(path.join(dir, 'a.parquet'), await parquetBytes(columns(0, 150), { rowGroupSize: 40 }));
  fs.writeFileSync(path.join(dir, 'b.parquet'), await parquetBytes(columns(150, 260), { rowGroupSize: 64 }));
  input = [...(await readParquet('a.parquet')).rows, ...(await readParquet('b.parquet')).rows];
  assert.is(input.length, 260);
  fs.writeFileSync(path.join(dir, 'c.jsonl'), texts.slice(0, 20).map((t) => JSON.stringify({ text: t })).join('\n') + '\n');
  fs.writeFileSync(path.join(dir, 'other.parquet'), await parquetBytes([{ name: 'text', data: texts.slice(0, 20), type: 'STRING' }]));
});
test.after(() => fs.rmSync(dir, { recursive: true, force: true }));

const BASE = ['dedup', 'a.parquet', 'b.parquet', '--on-bad-line', 'skip'];

test('--kept and --removed named .parquet: the input schema, and exactly the rows --flags keeps and drops, values as stored', async () => {
  ok([...BASE, '--kept', 'k.parquet', '--removed', 'r.parquet', '--flags', 'f']);
  const flags = lines('f').map((l) => l === '1');
  assert.ok(flags.filter((f) => !f).length > 40, 'near-copies were dropped');
  const good = (i: number) => i !== NULL_TEXT;
  const k = await readParquet('k.parquet'), r = await readParquet('r.parquet');
  const schemaIn = (await readParquet('a.parquet')).schema;
  assert.equal(k.schema, schemaIn, 'the kept file has the input schema');
  assert.equal(r.schema, schemaIn, 'the removed file too');
  assert.equal(k.rows, input.filter((_, i) => good(i) && flags[i]), 'kept rows');
  assert.equal(r.rows, input.filter((_, i) => good(i) && !flags[i]), 'removed rows');
  assert.is(typeof k.rows[0].big, 'bigint');
  assert.ok(k.rows[0].at instanceof Date && (k.rows[0].meta as { tags: string[] }).tags.length === 2, 'timestamps and JSON come back typed');
  assert.ok(k.groups >= 2, 'a row group per input row group');
});

test('--kept-dir with Parquet inputs: a Parquet file per input, its rows and schema', async () => {
  ok([...BASE, '--kept-dir', 'kd', '--flags', 'f2']);
  const flags = lines('f2').map((l) => l === '1');
  assert.equal(fs.readdirSync(path.join(dir, 'kd')).sort(), ['a.parquet', 'b.parquet']);
  const a = await readParquet(path.join('kd', 'a.parquet')), b = await readParquet(path.join('kd', 'b.parquet'));
  assert.equal(a.rows, input.slice(0, 150).filter((_, i) => i !== NULL_TEXT && flags[i]));
  assert.equal(b.rows, input.slice(150).filter((_, i) => flags[150 + i]));
});

test('a staged run (--work, 2 shards) writes the same Parquet rows, with --drop-all too, and --kept-dir', async () => {
  for (const extra of [[], ['--drop-all']]) {
    ok([...BASE, ...extra, '--kept', 'one.k.parquet', '--removed', 'one.r.parquet']);
    fs.rmSync(path.join(dir, 'w'), { recursive: true, force: true });
    ok([...BASE, ...extra, '--kept', 'st.k.parquet', '--removed', 'st.r.parquet', '--work', 'w', '--shards', '2']);
    for (const x of ['k', 'r']) {
      const one = await readParquet(`one.${x}.parquet`), st = await readParquet(`st.${x}.parquet`);
      assert.equal(st.rows, one.rows, `${extra.join(' ') || 'plain'}: --${x === 'k' ? 'kept' : 'removed'} rows`);
      assert.equal(st.schema, one.schema);
    }
  }
  // --kept-dir: a Parquet file per Parquet input, as the single run writes it
  ok([...BASE, '--kept-dir', 'kd1']);
  fs.rmSync(path.join(dir, 'w'), { recursive: true, force: true });
  ok([...BASE, '--kept-dir', 'kd2', '--work', 'w', '--shards', '2']);
  for (const f of ['a.parquet', 'b.parquet']) {
    const one = await readParquet(path.join('kd1', f)), st = await readParquet(path.join('kd2', f));
    assert.ok(one.rows.length > 50);
    assert.equal(st.rows, one.rows, `--kept-dir ${f}`);
  }
});

test('--annotate into Parquet: the cluster, its size and the kept row\'s id as columns (INT64, INT64, the id\'s kind); staged the same rows', async () => {
  ok([...BASE, '--annotate', '--id-field', 'id', '--kept', 'ak.parquet', '--clusters', 'ac']);
  const clusters = lines('ac').map((l) => JSON.parse(l) as { id: string; kept: number; kept_id: string });
  const size = new Map<number, number>();
  for (const c of clusters) size.set(c.kept, (size.get(c.kept) ?? 0) + 1);
  const k = await readParquet('ak.parquet');
  assert.equal(k.schema.slice(-3).map((e) => (e as { name: string; type: string }).type), ['INT64', 'INT64', 'BYTE_ARRAY']);
  assert.ok(k.rows.length > 100);
  for (const r of k.rows) {
    const c = clusters.find((x) => x.id === r.id)!;
    assert.equal([r.neardup_cluster, r.neardup_cluster_size, r.neardup_kept_id], [BigInt(c.kept), BigInt(size.get(c.kept)!), c.kept_id]);
  }
  fs.rmSync(path.join(dir, 'wa'), { recursive: true, force: true });
  ok([...BASE, '--annotate', '--id-field', 'id', '--kept', 'as.parquet', '--work', 'wa', '--shards', '2']);
  assert.equal((await readParquet('as.parquet')).rows, k.rows, 'staged');
  // integer ids give an INT64 kept_id column
  ok([...BASE, '--annotate', '--id-field', 'n', '--kept', 'an.parquet']);
  const n = await readParquet('an.parquet');
  assert.is(typeof n.rows[0].neardup_kept_id, 'bigint');
});

test('refused before any work: a Parquet output of JSONL inputs or of two schemas; names of formats not written', () => {
  const cases: [string[], number, RegExp][] = [
    [['dedup', 'c.jsonl', '--kept', 'x.parquet'], 1, /--kept 'x\.parquet': a Parquet output takes Parquet inputs, and 'c\.jsonl' is JSONL/],
    [['dedup', 'a.parquet', 'other.parquet', '--on-bad-line', 'skip', '--removed', 'x.parquet'], 1, /'other\.parquet' and 'a\.parquet' have different schemas/],
    [['dedup', 'c.jsonl', '--flags', 'x.gz'], 2, /--flags 'x\.gz': its name asks for \.gz, but --flags writes plain text lines/],
    [['dedup', 'c.jsonl', '--pairs', 'x.parquet'], 2, /--pairs 'x\.parquet': its name asks for \.parquet/],
    [['dedup', 'c.jsonl', '--kept', 'x.jsonl.xz'], 2, /--kept 'x\.jsonl\.xz': its name asks for \.xz/],
  ];
  for (const [args, code, message] of cases) {
    const r = run(args);
    assert.is(r.status, code, `${args.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, message);
  }
  assert.equal(fs.readdirSync(dir).filter((f) => f.startsWith('x')), [], 'no output was written');
});

test.run();
