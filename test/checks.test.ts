// Every file neardup reads back is checked by default (docs/FORMAT.md section 14): one flipped byte, at the
// header, the payload start, the middle and the end of each file kind, gives a coded error naming the file
// (ERR_NEARDUP_CORRUPT or ERR_NEARDUP_UNSUPPORTED), never a silent result and never a crash.
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { PostingIndex } from '../lib/postings/postings';
import { PassageIndex } from '../lib/postings/passages';
import { ChunkIndex, stages as chunkStages } from '../lib/chunks/chunks';
import { NeardupError } from '../lib/util/errors';
import { cli } from './cli-helper';

const test = suite('checks');
let tmp = '';
test.before(() => { tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'neardup-checks-')); });
test.after(() => { fs.rmSync(tmp, { recursive: true, force: true }); });

function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => { s = (s * 1664525 + 1013904223) >>> 0; return s; };
}

/** Offsets to flip in a file of `size` bytes: header (inside the 64 bytes when there is one), payload start, middle, end. */
function offsets(size: number, header = true): number[] {
  const o = header ? [20, 64, Math.floor(size / 2), size - 1] : [0, Math.floor(size / 3), Math.floor(size / 2), size - 1];
  return [...new Set(o.filter((x) => x >= 0 && x < size))];
}

/** Flips one byte of file at each offset in turn and expects run() to fail with a coded error naming the file. */
async function expectEachFlipRefused(file: string, at: number[], run: () => Promise<unknown>, label: string, masks = [0x01, 0x80]): Promise<void> {
  const good = fs.readFileSync(file);
  for (const off of at) {
    for (const mask of masks) {
      const bad = Buffer.from(good);
      bad[off] ^= mask;
      fs.writeFileSync(file, bad);
      let err: unknown = null;
      try {
        await run();
      } catch (e) {
        err = e;
      }
      fs.writeFileSync(file, good);
      assert.ok(err !== null, `${label}: byte ${off} ^ ${mask} of ${path.basename(file)} gave a result, no error`);
      assert.instance(err, NeardupError, `${label} @${off}: ${String(err)}`);
      const e = err as NeardupError;
      assert.ok(e.code === 'ERR_NEARDUP_CORRUPT' || e.code === 'ERR_NEARDUP_UNSUPPORTED', `${label} @${off}: ${e.code} ${e.message}`);
      assert.ok(e.message.includes(path.basename(file)), `${label} @${off}: the error does not name the file: ${e.message}`);
    }
  }
  await run();  // the good file again: no error
}

test('posting segment (PSTS): a flipped byte anywhere is refused on lookup, without verify', async () => {
  const d = path.join(tmp, 'pst');
  PostingIndex.create(d);
  const next = rng(5);
  const docs = Array.from({ length: 300 }, () => Array.from({ length: 30 }, () => next() % 5000));
  {
    const ix = await PostingIndex.open(d);
    await ix.append(docs);
    ix.close();
  }
  const keys = new Uint32Array([...new Set(docs.flat())].sort((a, b) => a - b));
  const seg = path.join(d, fs.readdirSync(d).find((f) => f.endsWith('.pst'))!);
  const size = fs.statSync(seg).size;
  // every key looked up: the whole body is read, one key block at a time (a query reads only the blocks it needs)
  const run = async () => {
    const ix = await PostingIndex.open(d);
    try {
      await ix.lookup(keys);
    } finally {
      ix.close();
    }
  };
  const at = offsets(size);
  for (const f of [0.1, 0.3, 0.7, 0.9]) at.push(Math.floor(size * f));
  await expectEachFlipRefused(seg, at, run, 'segment');
  // the manifest (PSTM)
  const m = path.join(d, 'MANIFEST');
  await expectEachFlipRefused(m, offsets(fs.statSync(m).size), run, 'postings manifest');
});

test('posting segment version 2 (written before key block checksums): read, equal to a brute-force map, and checked whole at open', async () => {
  // test/fixtures/postings-v2: PostingIndex.append of these 120 documents by the version that wrote version 2
  let s = 7;
  const next = () => { s = (s * 1664525 + 1013904223) >>> 0; return s; };
  const docs = Array.from({ length: 120 }, () => Array.from({ length: 12 }, () => next() % 3000));
  const want = new Map<number, number[]>();
  docs.forEach((keys, id) => { for (const k of new Set(keys)) want.set(k, [...(want.get(k) ?? []), id]); });
  const d = path.join(tmp, 'v2');
  fs.cpSync(path.join(__dirname, 'fixtures', 'postings-v2'), d, { recursive: true });
  const keys = new Uint32Array([...want.keys()].sort((a, b) => a - b));
  const run = async () => {
    const ix = await PostingIndex.open(d);
    try {
      const r = await ix.lookup(keys);
      keys.forEach((k, i) => assert.equal([...r.docs.subarray(r.offsets[i], r.offsets[i + 1])], want.get(k)));
    } finally {
      ix.close();
    }
  };
  await run();
  const seg = path.join(d, 'seg-1.pst');
  const size = fs.statSync(seg).size;
  await expectEachFlipRefused(seg, [...offsets(size), Math.floor(size / 4), Math.floor(size * 0.75)], run, 'segment v2');
});

test('passage index: passages.json, docs-K.jsonl and texts-K.bin are checked (query, extract, text)', async () => {
  const d = path.join(tmp, 'pass');
  const ix = await PassageIndex.open(d, {}, true);
  const body = 'alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho sigma tau upsilon';
  await ix.add(Array.from({ length: 20 }, (_, i) => ({ id: `d${i}`, text: Buffer.from(`doc ${i} says ${body} and ${i % 3} more ${body}`) })));
  ix.close();
  const run = async () => {
    const p = await PassageIndex.open(d);
    try {
      for await (const _ of p.extract()) { /* every passage */ }
      await p.query([Buffer.from(body)]);
      for (let n = 0; n < p.size; n++) p.text(n);
    } finally {
      p.close();
    }
  };
  await run();
  const meta = path.join(d, 'passages.json');
  await expectEachFlipRefused(meta, offsets(fs.statSync(meta).size, false), run, 'passages.json');
  const docs = path.join(d, 'docs-1.jsonl');
  await expectEachFlipRefused(docs, offsets(fs.statSync(docs).size, false), run, 'docs-1.jsonl');
  const texts = path.join(d, 'texts-1.bin');
  await expectEachFlipRefused(texts, offsets(fs.statSync(texts).size, false), run, 'texts-1.bin');
  // the native readers check the texts too (extract alone, then query alone)
  const good = fs.readFileSync(texts);
  const bad = Buffer.from(good);
  bad[good.length >> 1] ^= 0x20;
  fs.writeFileSync(texts, bad);
  for (const op of ['extract', 'query'] as const) {
    const p = await PassageIndex.open(d);
    const e = await (async () => {
      if (op === 'extract') for await (const _ of p.extract()) { /* */ }
      else await p.query([bad.subarray(0, bad.length >> 1)]);
    })().then(() => null, (x) => x);
    p.close();
    assert.is(e?.code, 'ERR_NEARDUP_CORRUPT', `${op}: ${String(e)}`);
    assert.ok(String(e.message).includes('texts-1.bin'), e.message);
  }
  fs.writeFileSync(texts, good);
});

test('PassageIndex.add refuses an id that the document list cannot hold, before writing anything', async () => {
  const d = path.join(tmp, 'ids');
  const ix = await PassageIndex.open(d, {}, true);
  const before = fs.readdirSync(d).sort();
  // (a bigint is an id: an integer beyond 2^53, kept as its digits; passages.test.ts)
  for (const id of [undefined, () => 1, Symbol('x'), NaN, Infinity]) {
    const e = await ix.add([{ id, text: Buffer.from('one two three four five six seven eight nine ten eleven') }]).then(() => null, (x) => x);
    assert.instance(e, TypeError, String(id));
    assert.is(e.code, 'ERR_NEARDUP_INVALID_ARGUMENT');
    assert.match(e.message, /docs\[0\]\.id/);
  }
  assert.equal(fs.readdirSync(d).sort(), before);
  await ix.add([{ id: 'ok', text: Buffer.from('one two three four five six seven eight nine ten eleven') }]);
  ix.close();
  const p = await PassageIndex.open(d);
  assert.is(p.size, 1);
  assert.equal((await p.query([Buffer.from('one two three four five six seven eight nine ten eleven')]))[0][0].id, 'ok');
  p.close();
});

test('chunk index: every file of `similar` is checked by default (open, top, query)', async () => {
  const d = path.join(tmp, 'sim');
  const next = rng(11);
  const words = Array.from({ length: 300 }, (_, i) => 'w' + i);
  const docs = Array.from({ length: 60 }, (_, i) => ({ id: `d${i}`, text: Array.from({ length: 80 }, () => words[next() % (i % 2 ? 300 : 40)]).join(' ') }));
  await ChunkIndex.build(d, docs, { n: 3 });
  // reads: top lists (top), segments (query); an update (of a copy) reads the chunk lists of what it changes
  const scratch = path.join(tmp, 'sim-copy');
  const run = async () => {
    const ix = await ChunkIndex.open(d);
    try {
      for (const doc of docs) await ix.top(doc.id);
      await ix.query(docs.slice(0, 10).map((x) => x.text));
    } finally {
      ix.close();
    }
    fs.rmSync(scratch, { recursive: true, force: true });
    fs.cpSync(d, scratch, { recursive: true });
    const up = await ChunkIndex.open(scratch);
    try {
      await up.update(docs.map((x) => ({ id: x.id, text: x.text + ' w1 w2 w3' })));
    } finally {
      up.close();
    }
  };
  await run();
  const files = fs.readdirSync(d).filter((f) => /^(MANIFEST|dir-\d+\.ckd|docs-\d+\.ckr|tops-\d+\.ckr|seg-\d+-\d+\.pst)$/.test(f));
  assert.is(files.length, 5, files.join(' '));
  for (const f of files) {
    const file = path.join(d, f);
    const size = fs.statSync(file).size;
    const at = offsets(size);
    if (f.endsWith('.pst')) for (const x of [0.2, 0.4, 0.6, 0.8]) at.push(Math.floor(size * x));
    await expectEachFlipRefused(file, at, run, f, [0x10]);
  }
});

test('chunk index staged build: a flipped byte in a pairs file (CKPR) fails finish, naming the file, and commits nothing', async () => {
  const d = path.join(tmp, 'simst');
  const next = rng(17);
  const words = Array.from({ length: 200 }, (_, i) => 'p' + i);
  const docs = Array.from({ length: 40 }, (_, i) => ({ id: `d${i}`, text: Array.from({ length: 60 }, () => words[next() % (i % 2 ? 200 : 30)]).join(' ') }));
  await chunkStages.prepare(d, docs, { n: 3, parts: 2 });
  const pairs = [await chunkStages.part(d, 0, { parts: 2 }), await chunkStages.part(d, 1, { parts: 2 })];
  const scratch = path.join(tmp, 'simst-run');
  let answer = '';
  const run = async () => {
    fs.rmSync(scratch, { recursive: true, force: true });
    fs.cpSync(d, scratch, { recursive: true });
    try {
      const ix = await chunkStages.finish(scratch, pairs);
      try {
        const lines: unknown[] = [];
        for (const doc of docs) lines.push(await ix.top(doc.id));
        answer = JSON.stringify(lines);
      } finally {
        ix.close();
      }
    } catch (e) {
      // nothing committed: the folder still holds the prepared build only
      assert.not.ok(fs.existsSync(path.join(scratch, 'MANIFEST')), `a failed finish committed an index: ${String(e)}`);
      throw e;
    }
  };
  await run();
  const want = answer;
  assert.ok(want.length > 100 && want.includes('similarity'), 'the staged build finds similar documents');
  for (const f of pairs) {
    const size = fs.statSync(f).size;
    await expectEachFlipRefused(f, [...offsets(size), Math.floor(size / 3), size - 8], run, 'pairs');
  }
  assert.is(answer, want, 'the good files give the same table again');
});

test('CLI: a corrupt similar MANIFEST is a coded error without a stack', () => {
  const d = path.join(tmp, 'simcli');
  const words = Array.from({ length: 50 }, (_, i) => 'w' + i);
  fs.writeFileSync(path.join(tmp, 's.jsonl'), Array.from({ length: 20 }, (_, i) => JSON.stringify({ id: `d${i}`, text: Array.from({ length: 30 }, (_, j) => words[(i * 7 + j * 3) % 50]).join(' ') })).join('\n') + '\n');
  let r = cli(tmp, ['similar', 'build', 's.jsonl', '--index', d, '--n', '3']);
  assert.is(r.code, 0, r.stderr);
  const m = path.join(d, 'MANIFEST');
  const good = fs.readFileSync(m);
  for (const off of [10, 64, good.length - 1]) {
    const bad = Buffer.from(good);
    bad[off] ^= 1;
    fs.writeFileSync(m, bad);
    for (const args of [['similar', 'top', '--index', d], ['similar', 'update', 's.jsonl', '--index', d]]) {
      r = cli(tmp, args);
      assert.is.not(r.code, 0);
      assert.not.match(r.stderr, /internal error|\n\s+at /, r.stderr);
      assert.match(r.stderr, /MANIFEST/);
    }
  }
  fs.writeFileSync(m, good);
});

test('staged dedup: a flipped byte in each stage file (and plan.json) fails the stage that reads it, naming the file', () => {
  const words = Array.from({ length: 400 }, (_, i) => 'v' + i);
  const next = rng(3);
  const lines = Array.from({ length: 120 }, (_, i) => {
    const base = i % 3 === 0 && i > 0 ? i - 1 : i;
    const r = rng(base + 1);
    const t = Array.from({ length: 60 }, () => words[r() % 400]);
    if (base !== i) t[next() % 60] = 'changed';
    return JSON.stringify({ id: i, text: t.join(' ') });
  });
  fs.writeFileSync(path.join(tmp, 'st.jsonl'), lines.join('\n') + '\n');
  const w = path.join(tmp, 'stw');
  const ok = (args: string[]) => {
    const r = cli(tmp, args);
    assert.is(r.code, 0, `${args.join(' ')}: ${r.stderr}`);
  };
  ok(['dedup-stage', 'plan', '--work', w, '--shards', '1', '--verify', 'exact', '--flags', path.join(tmp, 'st.flags'), 'st.jsonl']);
  ok(['dedup-stage', 'signatures', '--work', w, '--shard', '0/1']);
  ok(['dedup-stage', 'buckets', '--work', w, '--shard', '0/1']);
  ok(['dedup-stage', 'verify', '--work', w, '--shard', '0/1']);
  ok(['dedup-stage', 'clusters', '--work', w]);
  ok(['dedup-stage', 'filter', '--work', w, '--shard', '0/1']);
  const reader: Record<string, string[]> = {
    'sig-0.keys-0': ['buckets', '--shard', '0/1'],
    'sig-0.docs': ['buckets', '--shard', '0/1'],
    'sig-0.locs': ['verify', '--shard', '0/1'],
    'sig-0.meta': ['buckets', '--shard', '0/1'],
    'bkt-0.cand-0': ['verify', '--shard', '0/1'],
    'bkt-0.pairs': ['clusters'],
    'vfy-0.pairs': ['clusters'],
    'clusters.rep': ['filter', '--shard', '0/1'],
    'plan.json': ['buckets', '--shard', '0/1'],
  };
  for (const [f, stage] of Object.entries(reader)) {
    const file = path.join(w, f);
    assert.ok(fs.existsSync(file), f);
    const good = fs.readFileSync(file);
    // one offset per file (each run is a process); the header and the end of one of them (the same checks for all)
    const at = f === 'sig-0.keys-0' ? [20, Math.floor(good.length / 2), good.length - 1] : [Math.floor(good.length / 2)];
    for (const off of at) {
      const bad = Buffer.from(good);
      bad[off] ^= 0x04;
      fs.writeFileSync(file, bad);
      const r = cli(tmp, ['dedup-stage', stage[0], '--work', w, ...stage.slice(1)]);
      fs.writeFileSync(file, good);
      assert.is.not(r.code, 0, `${f} @${off}: ${stage[0]} succeeded`);
      assert.ok(r.stderr.includes(f), `${f} @${off}: ${r.stderr}`);
      assert.not.match(r.stderr, /internal error|\n\s+at /, r.stderr);
    }
  }
});

test('staged dedup with --pairs: a flipped byte in sig-I.sigs (the signatures) fails verify, naming the file', () => {
  const words = Array.from({ length: 300 }, (_, i) => 'g' + i);
  const lines = Array.from({ length: 80 }, (_, i) => {
    const base = i % 4 === 0 && i > 0 ? i - 1 : i;
    const r = rng(base + 7);
    const t = Array.from({ length: 50 }, () => words[r() % 300]);
    if (base !== i) t[3] = 'changed';
    return JSON.stringify({ id: i, text: t.join(' ') });
  });
  fs.writeFileSync(path.join(tmp, 'sg.jsonl'), lines.join('\n') + '\n');
  const w = path.join(tmp, 'sgw'), pairsOut = path.join(tmp, 'sg.pairs');
  const ok = (args: string[]) => {
    const r = cli(tmp, args);
    assert.is(r.code, 0, `${args.join(' ')}: ${r.stderr}`);
  };
  ok(['dedup-stage', 'plan', '--work', w, '--shards', '1', '--pairs', pairsOut, 'sg.jsonl']);
  ok(['dedup-stage', 'signatures', '--work', w, '--shard', '0/1']);
  ok(['dedup-stage', 'buckets', '--work', w, '--shard', '0/1']);
  const file = path.join(w, 'sig-0.sigs');
  assert.ok(fs.existsSync(file), 'a --pairs run writes the signatures');
  const good = fs.readFileSync(file);
  for (const off of [20, 64, Math.floor(good.length / 2), good.length - 1]) {
    const bad = Buffer.from(good);
    bad[off] ^= 0x08;
    fs.writeFileSync(file, bad);
    const r = cli(tmp, ['dedup-stage', 'verify', '--work', w, '--shard', '0/1']);
    fs.writeFileSync(file, good);
    assert.is.not(r.code, 0, `sig-0.sigs @${off}: verify succeeded`);
    assert.ok(r.stderr.includes('sig-0.sigs'), `sig-0.sigs @${off}: ${r.stderr}`);
    assert.not.match(r.stderr, /internal error|\n\s+at /, r.stderr);
  }
  ok(['dedup-stage', 'verify', '--work', w, '--shard', '0/1']);
});

test('sharded passages build: a flipped byte in passages-plan.json, part.json or lists-R.json fails the stage that reads it, naming the file', () => {
  const words = Array.from({ length: 200 }, (_, i) => 'q' + i);
  const next = rng(23);
  for (const f of ['pa.jsonl', 'pb.jsonl'])
    fs.writeFileSync(path.join(tmp, f), Array.from({ length: 20 }, (_, i) => JSON.stringify({ id: `${f}${i}`, text: Array.from({ length: 40 }, () => words[next() % 200]).join(' ') })).join('\n') + '\n');
  const ok = (args: string[]) => {
    const r = cli(tmp, args);
    assert.is(r.code, 0, `${args.join(' ')}: ${r.stderr}`);
  };
  const w = path.join(tmp, 'pw');
  ok(['passages', 'stage', 'plan', '-o', 'px', '--work', w, '--shards', '2', '--window', '6', 'pa.jsonl', 'pb.jsonl']);
  ok(['passages', 'stage', 'part', '--work', w, '--shard', '0/2']);
  ok(['passages', 'stage', 'part', '--work', w, '--shard', '1/2']);
  ok(['passages', 'stage', 'lists', '--work', w, '--shard', '0/2']);
  ok(['passages', 'stage', 'lists', '--work', w, '--shard', '1/2']);
  const reader: Array<[string, string[]]> = [
    ['passages-plan.json', ['part', '--shard', '1/2']],
    [path.join('part-1', 'part.json'), ['lists', '--shard', '0/2']],
    ['lists-0.json', ['finish']],
  ];
  for (const [f, stage] of reader) {
    const file = path.join(w, f);
    assert.ok(fs.existsSync(file), f);
    const good = fs.readFileSync(file);
    assert.match(good.toString(), /,"crc":\d+\}\n$/, `${f} carries its crc`);
    // a digit of a number (still valid JSON, a different value) and a letter of a string
    const text = good.toString();
    const digit = text.search(/\d/), letter = text.search(/"[a-z]/) + 1;
    for (const off of [digit, letter]) {
      const bad = Buffer.from(good);
      bad[off] = bad[off] === 0x31 ? 0x32 : (bad[off] >= 0x30 && bad[off] <= 0x39 ? 0x31 : bad[off] ^ 0x01);
      fs.writeFileSync(file, bad);
      const r = cli(tmp, ['passages', 'stage', stage[0], '--work', w, ...stage.slice(1)]);
      fs.writeFileSync(file, good);
      assert.is.not(r.code, 0, `${f} @${off}: ${stage[0]} succeeded`);
      assert.ok(r.stderr.includes(path.basename(f)) && /corrupt|checksum/.test(r.stderr), `${f} @${off}: ${r.stderr}`);
      assert.not.match(r.stderr, /internal error|\n\s+at /, r.stderr);
    }
  }
  ok(['passages', 'stage', 'finish', '--work', w]);
});

test('dupi index: a changed byte in cfg.json (dupi layout, CRC in the commit record) or docs.json is refused, naming the file', () => {
  const src = path.join(tmp, 'dupi-src');
  fs.mkdirSync(src, { recursive: true });
  const next = rng(29);
  const words = Array.from({ length: 100 }, (_, i) => 'u' + i);
  for (let i = 0; i < 6; i++) fs.writeFileSync(path.join(src, `f${i}.txt`), Array.from({ length: 60 }, () => words[next() % 100]).join(' ') + '\n');
  const root = path.join(tmp, 'dupi-root');
  let r = cli(tmp, ['dupi', '-r', root, 'index', src]);
  assert.is(r.code, 0, r.stderr);
  r = cli(tmp, ['dupi', '-r', root, 'inspect']);
  assert.is(r.code, 0, r.stderr);
  const want = String(r.stdout);
  for (const f of ['cfg.json', 'docs.json']) {
    const file = path.join(root, f), good = fs.readFileSync(file);
    const text = good.toString();
    // a digit (NumShards 4 -> 5 gives another modulus: a silently different index) and a letter of a path
    const digit = f === 'cfg.json' ? text.indexOf('"NumShards": ') + 13 : text.lastIndexOf('"End":') + 6;
    const letter = text.indexOf(f === 'cfg.json' ? 'words.simple' : 'dupi-src') + 1;
    assert.ok(digit > 12 && letter > 0 && /\d/.test(text[digit]), `${f}: ${text}`);
    for (const off of [digit, letter]) {
      const bad = Buffer.from(good);
      bad[off] = bad[off] >= 0x30 && bad[off] <= 0x38 ? bad[off] + 1 : bad[off] ^ 0x01;
      fs.writeFileSync(file, bad);
      r = cli(tmp, ['dupi', '-r', root, 'inspect']);
      fs.writeFileSync(file, good);
      assert.is.not(r.code, 0, `${f} @${off}: inspect succeeded`);
      assert.ok(r.stderr.includes(f) && /corrupt/.test(r.stderr), `${f} @${off}: ${r.stderr}`);
      assert.not.match(r.stderr, /internal error|\n\s+at /, r.stderr);
    }
  }
  r = cli(tmp, ['dupi', '-r', root, 'inspect']);
  assert.is(String(r.stdout), want, 'the good files again: the same answer');
});

test.run();
