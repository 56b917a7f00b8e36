// Chunk similarity (lib/chunks/chunks.ts, neardup similar): the index against the reference (brute force over exact
// chunk sets, 64-bit ids), the SQLite table against the index, incremental runs against full runs on random
// edit sequences, parts and stages, the CLI's lines and errors, argument errors, corrupt files, and crashes
// (SIGKILL) in the middle of an update.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ChunkIndex, chunkIds, chunkStages, type ChunkDocument } from '../lib/index';
import { openDb } from '../lib/chunks/chunks-db';
import { native } from '../lib/native/addon';
import { refChunkIds, refSimilar, type RefEntry } from './reference/chunks';
import { rng, pick, int } from './reference/random';
import { cli } from './cli-helper';
import { TSX_FLAGS } from './support/tsx';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'neardup-similar-'));
test.after(() => fs.rmSync(tmp, { recursive: true, force: true }));
let dirs = 0;
const newDir = () => path.join(tmp, `ix${dirs++}`);

const WORDS = ['the', 'cat', 'sat', 'on', 'mat', 'dog', 'ran', 'far', 'Über', 'naïve', 'Σίσυφος', 'x_1', '42', 'a', 'b'];

function randomWords(r: () => number, n: number): string {
  const out: string[] = [];
  for (let i = 0; i < n; i++) out.push(pick(r, WORDS) + (r() < 0.1 ? pick(r, [',', '.', '!', ' --']) : ''));
  return out.join(r() < 0.2 ? '\n' : ' ');
}

function corpus(seed: number, n: number): ChunkDocument[] {
  const r = rng(seed);
  const docs: ChunkDocument[] = [];
  for (let i = 0; i < n; i++) {
    let text = randomWords(r, int(r, 0, 30));
    if (docs.length && r() < 0.3) text += ' ' + (pick(r, docs).text as string);  // a copied passage
    if (docs.length && r() < 0.1) text = pick(r, docs).text as string;          // a duplicate
    docs.push({ id: r() < 0.3 ? i * 7 : `doc-${i}`, text });
  }
  return docs;
}

/** A table keyed by the JSON text of the id, entries in order. */
function tableOf(lists: RefEntry[][] | Array<Array<{ id: unknown; other: unknown; similarity: number; reverse: number; shared: number }>>): Map<string, string> {
  const m = new Map<string, string>();
  for (const l of lists) for (const e of l) m.set(JSON.stringify(e.id), (m.get(JSON.stringify(e.id)) ?? '') + JSON.stringify(e) + '\n');
  return m;
}

async function indexTable(ix: ChunkIndex): Promise<Map<string, string>> {
  return tableOf(await ix.topOf(ix.internalIds()));
}

/** A table with each document's entries in the order of their other id (the SQL table has no order). */
function unordered(t: Map<string, string>): Map<string, string> {
  const m = new Map<string, string>();
  for (const [k, v] of t) m.set(k, v.trim().split('\n').sort().join('\n'));
  return m;
}

function sqliteUnordered(dir: string): Map<string, string> {
  const db = openDb(path.join(dir, 'similar.sqlite'), { readonly: true });
  try {
    const rows = db.prepare('SELECT doc AS id, other, similarity, reverse, shared FROM similar').all() as RefEntry[];
    const byDoc = new Map<string, string[]>();
    for (const r of rows) {
      const k = JSON.stringify(r.id);
      if (!byDoc.has(k)) byDoc.set(k, []);
      byDoc.get(k)!.push(JSON.stringify({ id: r.id, other: r.other, similarity: r.similarity, reverse: r.reverse, shared: r.shared }));
    }
    return new Map([...byDoc].map(([k, v]) => [k, v.sort().join('\n')]));
  } finally {
    db.close();
  }
}

function sameTables(got: Map<string, string>, want: Map<string, string>, what: string): void {
  for (const [k, v] of want) assert.is(got.get(k), v, `${what}: ${k}`);
  assert.is(got.size, want.size, `${what}: documents with similar documents`);
}

test('chunk ids equal the reference (shingle stream, fast64, top bits)', async () => {
  const r = rng(1);
  const texts = Array.from({ length: 40 }, () => randomWords(r, int(r, 0, 20)));
  for (const o of [{}, { n: 3, bits: 28 }, { bits: 64, seed: 7n }, { split: 'whitespace' as const, lowercase: false }, { short: 'none' as const, n: 4 }]) {
    const got = await chunkIds(texts, o);
    texts.forEach((t, i) => {
      const want = refChunkIds(t, o);
      assert.equal([...got.chunks.subarray(got.offsets[i], got.offsets[i + 1])], want, `${JSON.stringify({ ...o, seed: String((o as { seed?: bigint }).seed) })} text ${i}`);
    });
  }
});

test('a full run agrees with brute force over exact chunk sets, and the SQLite table with the index', async () => {
  for (const [seed, options] of [[2, { n: 3, bits: 64 }], [3, { n: 3, bits: 64, k: 3 }], [4, { n: 2, bits: 64, minShared: 2, k: 5 }],
    [5, { n: 3, bits: 64, minSimilarity: 0.4 }]] as const) {
    const docs = corpus(seed, 60);
    const dir = newDir();
    const ix = await ChunkIndex.build(dir, docs, options);
    const want = tableOf(refSimilar(docs, options));
    sameTables(await indexTable(ix), want, `index ${seed}`);
    sameTables(sqliteUnordered(dir), unordered(want), `sqlite ${seed}`);
    const d = docs[7];
    assert.equal(await ix.top(d.id), refSimilar(docs, options)[7], 'top(id)');
    ix.close();
  }
});

test('64-bit chunk ids by default (issue 26): a 32-bit collision makes no pair; 32-bit indexes keep their width', async () => {
  // 'w1saw' and 'w20em' share the top 32 bits of fast64 (found by a birthday search over 300,000 words), not 64.
  const [x, y] = ['w1saw', 'w20em'];
  assert.equal(refChunkIds(x, { n: 1, bits: 32 }), refChunkIds(y, { n: 1, bits: 32 }));
  assert.not.equal(refChunkIds(x, { n: 1 }), refChunkIds(y, { n: 1 }));
  assert.equal((await chunkIds([x], { n: 1 })).chunks, BigUint64Array.from(refChunkIds(x, { n: 1, bits: 64 })));
  const docs: ChunkDocument[] = [{ id: 'a', text: `${x} one two` }, { id: 'b', text: `${y} three four` }, { id: 'c', text: 'one two five' }];
  const want = tableOf(refSimilar(docs, { n: 1 }));  // brute force over the chunks' texts
  assert.ok(!want.get('"a"')!.includes('"b"'));
  const ix = await ChunkIndex.build(newDir(), docs, { n: 1 });
  assert.is(ix.options.bits, 64);
  sameTables(await indexTable(ix), want, 'default width');
  ix.close();
  // The CLI's default too.
  const dir = newDir();
  fs.writeFileSync(path.join(tmp, 'w.jsonl'), docs.map((d) => JSON.stringify(d)).join('\n') + '\n');
  const r = cli(tmp, ['similar', 'build', 'w.jsonl', '--index', dir, '--n', '1']);
  assert.is(r.code, 0, r.stderr);
  const top = cli(tmp, ['similar', 'top', '--index', dir]).stdout.toString();
  assert.ok(top.includes('"id":"a","other":"c"') && !top.includes('"other":"b"'), top);
  // An index built with 32-bit ids keeps them: reopened and updated, the collision still counts.
  const d32 = newDir();
  (await ChunkIndex.build(d32, docs, { n: 1, bits: 32 })).close();
  const again = await ChunkIndex.open(d32);
  assert.is(again.options.bits, 32);
  await again.update([{ id: 'd', text: `${y} six` }]);
  const t = await indexTable(again);
  assert.ok(t.get('"a"')!.includes('"other":"b"') && t.get('"a"')!.includes('"other":"d"'), 'the 32-bit collision');
  again.close();
  const up = cli(tmp, ['similar', 'update', 'w.jsonl', '--index', d32]);
  assert.is(up.code, 0, up.stderr);
  const reopened = await ChunkIndex.open(d32);
  assert.is(reopened.options.bits, 32);
  reopened.close();
});

test('parts, a small memory budget and staged runs give the same table', async () => {
  const docs = corpus(6, 120);
  const o = { n: 3, bits: 32, k: 4 };
  const ix1 = await ChunkIndex.build(newDir(), docs, o);
  const want = await indexTable(ix1);
  ix1.close();
  const ix3 = await ChunkIndex.build(newDir(), docs, { ...o, parts: 3 });
  sameTables(await indexTable(ix3), want, 'parts 3');
  ix3.close();
  const small = await ChunkIndex.build(newDir(), docs, { ...o, memory: 4096 });
  sameTables(await indexTable(small), want, 'memory 4096');
  small.close();
  const dir = newDir();
  await chunkStages.prepare(dir, docs, { ...o, parts: 2 });
  const pairs = [await chunkStages.part(dir, 1, { parts: 2 }), await chunkStages.part(dir, 0)];
  const staged = await chunkStages.finish(dir, pairs);
  sameTables(await indexTable(staged), want, 'staged');
  sameTables(sqliteUnordered(dir), unordered(want), 'staged sqlite');
  staged.close();
});

test('incremental runs give the table of a full run on the final documents (random edits, id reuse)', async () => {
  const r = rng(9);
  for (const options of [{ n: 3, bits: 64, k: 3 }, { n: 3, bits: 32, k: 100 }, { n: 2, bits: 64, k: 2, parts: 2, minShared: 2 }]) {
    let docs = corpus(int(r, 0, 1000), 40);
    const dir = newDir();
    const ix = await ChunkIndex.build(dir, docs, options);
    let next = 1000;
    for (let step = 0; step < 6; step++) {
      const changes: ChunkDocument[] = [];
      const byId = new Map(docs.map((d) => [JSON.stringify(d.id), d]));
      for (let c = int(r, 1, 8); c > 0; c--) {
        const kind = r();
        if (kind < 0.35 || byId.size === 0) {
          const d = { id: `new-${next++}`, text: randomWords(r, int(r, 0, 20)) + (byId.size && r() < 0.5 ? ' ' + pick(r, [...byId.values()]).text : '') };
          changes.push(d);
          byId.set(JSON.stringify(d.id), d);
        } else {
          const old = pick(r, [...byId.values()]);
          if (kind < 0.7) {
            const d = { id: old.id, text: (r() < 0.5 ? old.text + ' ' : '') + randomWords(r, int(r, 0, 15)) };
            changes.push(d);
            byId.set(JSON.stringify(d.id), d);
          } else {
            changes.push({ id: old.id, text: null });
            byId.delete(JSON.stringify(old.id));
          }
        }
      }
      const s = await ix.update(changes, { compact: step === 4 });
      assert.is(s.generation, step + 2);
      docs = [...byId.values()];
      const want = tableOf(refSimilar(docs, options));
      if (options.bits === 64) sameTables(await indexTable(ix), want, `step ${step} vs brute force`);
      const full = await ChunkIndex.build(newDir(), docs, options);
      sameTables(await indexTable(ix), await indexTable(full), `step ${step} vs full run`);
      full.close();
      sameTables(sqliteUnordered(dir), unordered(await indexTable(ix)), `step ${step}: sqlite vs index`);
      assert.is(ix.size, docs.length);
    }
    ix.close();
  }
});

test('SQLite: the similar view is queried by document id through the index', () => {
  const dir = path.join(tmp, 'ix0');
  const db = openDb(path.join(dir, 'similar.sqlite'), { readonly: true });
  try {
    const plan = (db.prepare('EXPLAIN QUERY PLAN SELECT * FROM similar WHERE doc = ?').all('doc-3') as Array<{ detail: string }>).map((x) => x.detail).join('; ');
    assert.match(plan, /documents_id/);
    assert.not.match(plan, /SCAN p\b|SCAN pairs/);
    const g = db.prepare("SELECT value FROM meta WHERE key = 'generation'").get() as { value: number };
    assert.is(g.value, 1);
    assert.is((db.pragma('journal_mode', { simple: true }) as string), 'wal');
  } finally {
    db.close();
  }
});

// ---------------------------------------------------------------------------------------------------- CLI

function jsonl(docs: ChunkDocument[]): string {
  return docs.map((d) => JSON.stringify(d)).join('\n') + '\n';
}

test('CLI: build, top, update, query lines', () => {
  const docs = corpus(11, 50);
  const dir = newDir();
  fs.writeFileSync(path.join(tmp, 'c.jsonl'), jsonl(docs));
  let r = cli(tmp, ['similar', 'build', 'c.jsonl', '--index', dir, '--n', '3', '--bits', '64', '--k', '5']);
  assert.is(r.code, 0, r.stderr);
  r = cli(tmp, ['similar', 'top', '--index', dir]);
  assert.is(r.code, 0, r.stderr);
  const lines = r.stdout.toString().trim().split('\n').map((l) => JSON.parse(l) as RefEntry);
  const want = refSimilar(docs, { n: 3, bits: 64, k: 5 }).flat();
  assert.equal(lines, want);
  assert.equal(Object.keys(lines[0]), ['id', 'other', 'similarity', 'reverse', 'shared']);
  // --id: a string id, an integer id (matched as an integer after no string matched), in the given order.
  const withInt = docs.find((d) => typeof d.id === 'number' && want.some((e) => e.id === d.id))!;
  r = cli(tmp, ['similar', 'top', '--index', dir, '--id', String(withInt.id), '--id', 'doc-1']);
  assert.is(r.code, 0, r.stderr);
  const got = r.stdout.toString().trim().split('\n').map((l) => JSON.parse(l) as RefEntry);
  assert.equal(got, [...want.filter((e) => e.id === withInt.id), ...want.filter((e) => e.id === 'doc-1')]);
  r = cli(tmp, ['similar', 'top', '--index', dir, '--id', 'nope']);
  assert.is(r.code, 1);
  assert.match(r.stderr, /no document with the id 'nope'/);
  // update: replace one, delete one, add one; then top equals a build of the final documents.
  const final = docs.filter((d) => d.id !== 'doc-2').map((d) => (d.id === 'doc-5' ? { ...d, text: docs[9].text } : d));
  final.push({ id: 'added', text: docs[4].text as string });
  fs.writeFileSync(path.join(tmp, 'u.jsonl'), jsonl([{ id: 'doc-5', text: docs[9].text }, { id: 'doc-2', text: null }, { id: 'added', text: docs[4].text }]));
  r = cli(tmp, ['similar', 'update', 'u.jsonl', '--index', dir]);
  assert.is(r.code, 0, r.stderr);
  const s = JSON.parse(r.stderr.trim().split('\n').pop()!) as Record<string, unknown>;
  assert.equal([s.command, s.generation, s.added, s.replaced, s.deleted], ['similar update', 2, 1, 1, 1]);
  r = cli(tmp, ['similar', 'top', '--index', dir]);
  const after = r.stdout.toString().trim().split('\n').map((l) => JSON.parse(l) as RefEntry);
  const wantAfter = tableOf(refSimilar(final, { n: 3, bits: 64, k: 5 }));
  sameTables(tableOf([after]), wantAfter, 'after CLI update');
  // query: the same lines for new texts; ids from the input, or FILE:LINE.
  fs.writeFileSync(path.join(tmp, 'q.jsonl'), `${JSON.stringify({ id: 'q1', text: docs[3].text })}\n${JSON.stringify({ text: docs[6].text })}\n`);
  r = cli(tmp, ['similar', 'query', 'q.jsonl', '--index', dir]);
  assert.is(r.code, 0, r.stderr);
  const q = r.stdout.toString().trim().split('\n').filter(Boolean).map((l) => JSON.parse(l) as RefEntry);
  const withQ = [...final, { id: 'q1', text: docs[3].text as string }];
  const wantQ = refSimilar(withQ, { n: 3, bits: 64, k: 5 })[withQ.length - 1];
  assert.equal(q.filter((e) => e.id === 'q1'), wantQ);
  assert.ok(q.some((e) => e.id === 'q.jsonl:2'));
});

test('CLI: input errors name the file and line; usage errors exit 2', () => {
  const dir = newDir();
  fs.writeFileSync(path.join(tmp, 'dup.jsonl'), '{"id":"a","text":"x y z"}\n{"id":"b","text":"x y"}\n{"id":"a","text":"q"}\n');
  let r = cli(tmp, ['similar', 'build', 'dup.jsonl', '--index', dir]);
  assert.is(r.code, 1);
  assert.match(r.stderr, /dup\.jsonl:3: the id "a" is given to two documents/);
  fs.writeFileSync(path.join(tmp, 'bad.jsonl'), '{"id":"a","text":"x y z"}\n{"id":1.5,"text":"x"}\n');
  r = cli(tmp, ['similar', 'build', 'bad.jsonl', '--index', newDir()]);
  assert.is(r.code, 1);
  assert.match(r.stderr, /bad\.jsonl:2: field 'id' must be a string or an integer/);
  fs.writeFileSync(path.join(tmp, 'noid.jsonl'), '{"text":"x y z"}\n');
  r = cli(tmp, ['similar', 'build', 'noid.jsonl', '--index', newDir()]);
  assert.match(r.stderr, /noid\.jsonl:1: field 'id' is missing/);
  r = cli(tmp, ['similar', 'build', 'noid.jsonl', '--index', newDir(), '--id-field', 'text', '--field', 'text']);
  assert.is(r.code, 0, r.stderr);
  const ok = newDir();
  fs.writeFileSync(path.join(tmp, 'ok.jsonl'), '{"id":"a","text":"x y z w v"}\n');
  assert.is(cli(tmp, ['similar', 'build', 'ok.jsonl', '--index', ok]).code, 0);
  r = cli(tmp, ['similar', 'build', 'ok.jsonl', '--index', ok]);
  assert.is(r.code, 1);
  assert.match(r.stderr, /already holds a chunk index/);
  fs.writeFileSync(path.join(tmp, 'del.jsonl'), '{"id":"a","text":"x"}\n{"id":"zz","text":null}\n');
  r = cli(tmp, ['similar', 'update', 'del.jsonl', '--index', ok]);
  assert.is(r.code, 1);
  assert.match(r.stderr, /del\.jsonl:2: cannot delete the id "zz": it is not in the index/);
  r = cli(tmp, ['similar', 'top']);
  assert.is(r.code, 2);
  assert.match(r.stderr, /--index DIR is required/);
  r = cli(tmp, ['similar', 'build', 'ok.jsonl', '--index', newDir(), '--bits', '40']);
  assert.is(r.code, 2);
  r = cli(tmp, ['similar', 'top', '--index', path.join(tmp, 'nothing-here')]);
  assert.is(r.code, 1);
  assert.match(r.stderr, /holds no chunk index/);
  r = cli(tmp, ['similar', 'frobnicate']);
  assert.is(r.code, 2);
});

test('CLI: staged build in separate processes equals one build', () => {
  const docs = corpus(12, 70);
  fs.writeFileSync(path.join(tmp, 's.jsonl'), jsonl(docs));
  const one = newDir(), staged = newDir();
  assert.is(cli(tmp, ['similar', 'build', 's.jsonl', '--index', one, '--n', '3']).code, 0);
  let r = cli(tmp, ['similar', 'stage', 'prepare', 's.jsonl', '--index', staged, '--n', '3', '--parts', '3']);
  assert.is(r.code, 0, r.stderr);
  const pairs: string[] = [];
  for (const i of [2, 0, 1]) {
    r = cli(tmp, ['similar', 'stage', 'part', '--index', staged, '--part', `${i}/3`, '--out', path.join(tmp, `p${i}.ckp`)]);
    assert.is(r.code, 0, r.stderr);
    pairs.push(r.stdout.toString().trim());
  }
  r = cli(tmp, ['similar', 'stage', 'part', '--index', staged, '--part', '0/4']);
  assert.is(r.code, 1);
  assert.match(r.stderr, /prepared with 3 parts, not 4/);
  r = cli(tmp, ['similar', 'stage', 'finish', '--index', staged, ...pairs]);
  assert.is(r.code, 0, r.stderr);
  assert.equal(cli(tmp, ['similar', 'top', '--index', staged]).stdout.toString(), cli(tmp, ['similar', 'top', '--index', one]).stdout.toString());
});

// -------------------------------------------------------------------------------------------------- errors

test('argument errors are TypeError/RangeError with ERR_NEARDUP_INVALID_ARGUMENT', async () => {
  const isArg = (kind: typeof TypeError | typeof RangeError) => (e: unknown) => e instanceof kind && (e as { code?: string }).code === 'ERR_NEARDUP_INVALID_ARGUMENT';
  const cases: Array<[() => unknown, typeof TypeError | typeof RangeError]> = [
    [() => ChunkIndex.build(newDir(), [], { bits: 40 }), RangeError],
    [() => ChunkIndex.build(newDir(), [], { n: 0 }), RangeError],
    [() => ChunkIndex.build(newDir(), [], { k: 1.5 }), RangeError],
    [() => ChunkIndex.build(newDir(), [], { minSimilarity: 2 }), RangeError],
    [() => ChunkIndex.build(newDir(), [], { split: 'x' as never }), TypeError],
    [() => ChunkIndex.build(newDir(), [], { memory: -1 }), RangeError],
    [() => ChunkIndex.build(newDir(), 'text' as never), TypeError],
    [() => ChunkIndex.build(newDir(), [{ id: {} as never, text: 'a' }]), TypeError],
    [() => ChunkIndex.build(newDir(), [{ id: 1.5, text: 'a' }]), TypeError],
    [() => ChunkIndex.build(newDir(), [{ id: 'a', text: null }]), TypeError],
    [() => ChunkIndex.build(42 as never, []), TypeError],
    [() => chunkIds(['a'], { bits: 27 }), RangeError],
  ];
  for (const [f, kind] of cases) {
    try {
      await f();
      assert.unreachable(`${f} did not throw`);
    } catch (e) {
      assert.ok(isArg(kind)(e), `${f}: ${(e as Error).stack}`);
    }
  }
  const ix = await ChunkIndex.open(path.join(tmp, 'ix0'));
  for (const f of [() => ix.top({} as never), () => ix.query('a' as never), () => ix.update([], { compact: 1 as never })]) {
    try {
      await f();
      assert.unreachable('did not throw');
    } catch (e) {
      assert.ok(isArg(TypeError)(e), (e as Error).stack);
    }
  }
  ix.close();
  try {
    await ix.top('doc-1');
    assert.unreachable('closed');
  } catch (e) {
    assert.is((e as { code?: string }).code, 'ERR_NEARDUP_CLOSED');
  }
});

test('corrupt and truncated index files are refused with the file named', async () => {
  const docs = corpus(13, 40);
  const orig = newDir();
  (await ChunkIndex.build(orig, docs, { n: 3 })).close();
  const names = fs.readdirSync(orig).filter((n) => /^(dir|docs|tops)-\d+\.ck[dr]$|^seg-|^MANIFEST$/.test(n));
  assert.ok(names.length >= 5, names.join());
  for (const name of names) {
    for (const damage of ['flip', 'truncate']) {
      const dir = newDir();
      fs.cpSync(orig, dir, { recursive: true });
      const f = path.join(dir, name);
      const b = fs.readFileSync(f);
      fs.writeFileSync(f, damage === 'flip' ? (b[b.length - 9] ^= 0x10, b) : b.subarray(0, Math.min(100, b.length - 1)));
      try {
        const ix = await ChunkIndex.open(dir, { verify: true });
        await ix.topOf(ix.internalIds());
        ix.close();
        assert.unreachable(`${name} ${damage}: opened`);
      } catch (e) {
        assert.ok(['ERR_NEARDUP_CORRUPT'].includes((e as { code?: string }).code!), `${name} ${damage}: ${(e as Error).stack}`);
        assert.ok((e as Error).message.includes(name), `${name} ${damage}: ${(e as Error).message}`);
      }
    }
  }
  // A table that is not a database.
  const dir = newDir();
  fs.cpSync(orig, dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'similar.sqlite'), Buffer.alloc(4096, 7));
  fs.rmSync(path.join(dir, 'similar.sqlite-wal'), { force: true });
  fs.rmSync(path.join(dir, 'similar.sqlite-shm'), { force: true });
  try {
    await ChunkIndex.open(dir);
    assert.unreachable('opened');
  } catch (e) {
    assert.is((e as { code?: string }).code, 'ERR_NEARDUP_CORRUPT', (e as Error).message);
    assert.match((e as Error).message, /similar\.sqlite/);
  }
});

// --------------------------------------------------------------------------------------------------- crash

const MAIN = path.join(__dirname, '..', 'lib', 'cli', 'main.ts');

test('a held writer lock refuses update, build and a staged finish; released, they run', async () => {
  const docs = corpus(17, 30);
  const dir = newDir();
  const ix = await ChunkIndex.build(dir, docs, { n: 3, bits: 64 });
  const before = await indexTable(ix);
  // Another run holds DIR/LOCK (here: a second descriptor of this process, as flock sees another process).
  const lock = path.join(dir, 'LOCK');
  const fd = fs.openSync(lock, 'a');
  native.lockTempFile(fd, lock);
  try {
    for (const [what, f] of [['update', () => ix.update([{ id: docs[0].id, text: null }])], ['build', () => ChunkIndex.build(dir, docs)],
      ['finish', () => chunkStages.finish(dir, [])]] as const) {
      const e = await (f as () => Promise<unknown>)().then(() => null, (x: unknown) => x);
      assert.ok(e instanceof Error && (e as { code?: string }).code === 'ERR_NEARDUP_IO' && /being written by another process/.test(e.message),
        `${what}: ${e instanceof Error ? e.stack : 'did not throw'}`);
    }
    sameTables(await indexTable(ix), before, 'unchanged');
  } finally {
    fs.closeSync(fd);
  }
  assert.is(native.chunkIndexLockState(lock), 'free');
  const s = await ix.update([{ id: docs[0].id, text: null }]);
  assert.is(s.generation, 2);
  const again = await ChunkIndex.build(dir, docs).then(() => null, (x: unknown) => x);
  assert.ok(again instanceof Error && /already holds a chunk index/.test(again.message), 'build over an index');
  ix.close();
});

test('SIGKILL in the middle of an update leaves the previous table and index usable', async () => {
  const docs = corpus(14, 80);
  const orig = newDir();
  fs.writeFileSync(path.join(tmp, 'k.jsonl'), jsonl(docs));
  assert.is(cli(tmp, ['similar', 'build', 'k.jsonl', '--index', orig, '--n', '3', '--k', '4']).code, 0);
  const changes = [{ id: docs[1].id, text: null }, { id: 'fresh', text: docs[2].text }, { id: docs[3].id, text: docs[5].text }];
  fs.writeFileSync(path.join(tmp, 'ku.jsonl'), jsonl(changes as ChunkDocument[]));
  const before = cli(tmp, ['similar', 'top', '--index', orig]).stdout.toString();
  const after = (() => {
    const d = newDir();
    fs.cpSync(orig, d, { recursive: true });
    assert.is(cli(tmp, ['similar', 'update', 'ku.jsonl', '--index', d]).code, 0);
    return cli(tmp, ['similar', 'top', '--index', d]).stdout.toString();
  })();
  assert.is.not(before, after);
  // update-committed-table: just before PENDING is renamed to MANIFEST (the table committed); update-committed:
  // just after (the old files not yet removed)
  for (const point of ['update-prepared', 'update-in-table', 'update-committed-table', 'update-committed']) {
    const committed = point === 'update-committed-table' || point === 'update-committed';
    const d = newDir();
    fs.cpSync(orig, d, { recursive: true });
    const r = spawnSync(process.execPath, [...TSX_FLAGS, MAIN, 'similar', 'update', 'ku.jsonl', '--index', d],
      { cwd: tmp, env: { ...process.env, NEARDUP_TEST_KILL_AT: point } });
    assert.is(r.signal, 'SIGKILL', point);
    // Readers see a consistent state: the old one, or the new one once the table committed.
    const top = cli(tmp, ['similar', 'top', '--index', d]);
    assert.is(top.code, 0, `${point}: ${top.stderr}`);
    assert.is(top.stdout.toString(), committed ? after : before, point);
    sameTables(sqliteUnordered(d), unordered(tableOf([top.stdout.toString().trim().split('\n').map((l) => JSON.parse(l))])), `${point}: sqlite`);
    // The next writer mends what was left (stale lock, PENDING, files) and updates as if nothing happened
    // (after the table committed, the update is in: a replacement by the same text changes nothing).
    fs.writeFileSync(path.join(tmp, 'same.jsonl'), jsonl([{ id: 'fresh', text: docs[2].text }]));
    const again = cli(tmp, ['similar', 'update', committed ? 'same.jsonl' : 'ku.jsonl', '--index', d]);
    assert.is(again.code, 0, `${point}: ${again.stderr}`);
    assert.is(cli(tmp, ['similar', 'top', '--index', d]).stdout.toString(), after, `${point}: after the next update`);
    assert.not.ok(fs.existsSync(path.join(d, 'PENDING')), point);
    assert.is(native.chunkIndexLockState(path.join(d, 'LOCK')), 'free', point);
  }
  // And at a random moment, several times: whatever state is left is consistent and updatable.
  const big = corpus(15, 3000);
  const bigDir = newDir();
  fs.writeFileSync(path.join(tmp, 'big.jsonl'), jsonl(big));
  assert.is(cli(tmp, ['similar', 'build', 'big.jsonl', '--index', bigDir, '--n', '3', '--k', '10']).code, 0);
  const r = rng(16);
  fs.writeFileSync(path.join(tmp, 'bigu.jsonl'), jsonl(big.slice(0, 800).map((d, i) => (i % 3 === 0 ? { id: d.id, text: null } : { id: d.id, text: randomWords(r, 20) }))));
  // Kills land while the run holds the writer lock (taken once the run starts writing): at a random moment
  // in its first 200 ms. At least one must hit a run still going (else the test proves nothing).
  const lock = path.join(bigDir, 'LOCK');
  let hit = 0;
  for (let round = 0; round < 8; round++) {
    const child = spawn(process.execPath, [...TSX_FLAGS, MAIN, 'similar', 'update', 'bigu.jsonl', '--index', bigDir], { cwd: tmp, stdio: 'ignore' });
    let done = false;
    const exited = new Promise<number | null>((res) => child.on('exit', (c) => { done = true; res(c); }));
    while (!done && native.chunkIndexLockState(lock) !== 'held') await new Promise((res) => setTimeout(res, 2));
    await new Promise((res) => setTimeout(res, r() * 200));
    child.kill('SIGKILL');
    if ((await exited) === null) hit++;
    const top = cli(tmp, ['similar', 'top', '--index', bigDir, '--id', String(big[10].id)]);
    assert.is(top.code, 0, `round ${round}: ${top.stderr}`);
  }
  assert.ok(hit > 0, 'no kill landed inside an update');
  // A last update valid whether or not a killed run committed (replacements of documents it kept).
  fs.writeFileSync(path.join(tmp, 'bigv.jsonl'), jsonl(big.slice(0, 800).filter((_, i) => i % 3 !== 0).map((d) => ({ id: d.id, text: randomWords(r, 25) }))));
  const last = cli(tmp, ['similar', 'update', 'bigv.jsonl', '--index', bigDir]);
  assert.is(last.code, 0, last.stderr);
  const ix = await ChunkIndex.open(bigDir);
  sameTables(sqliteUnordered(bigDir), unordered(await indexTable(ix)), 'after random kills');
  ix.close();
});

test.run();
