// One table of the public API's async calls (lib/index.ts), shared by two scenarios:
//  - test/helpers/worker-terminate-api.ts: a Worker loops one case's call until it is terminated
//    (crash.test.ts: "worker.terminate() during every async method");
//  - test/worker.test.ts: every case once inside a Worker and once on the main thread, summaries compared.
// setup(dir) prepares the inputs (files under dir) and returns the call; each call returns a small
// JSON-able summary of its result, the same on every run over the same inputs.
import * as fs from 'node:fs';
import * as path from 'node:path';
import type * as NdModule from '../../lib/index';

// The module is passed in (not imported here): the list of cases can be read without loading the addon.
type Nd = typeof NdModule;
export interface ApiCase {
  name: string;
  setup(nd: Nd, dir: string): Promise<() => Promise<unknown>>;
}

const VECTORS = path.join(__dirname, '..', 'fixtures', 'vectors');
// Short texts with near-duplicates among them (the 20,000 of issue 25's repro, scaled per case).
// Every fifth text repeats an earlier one; the others share a few words at most.
const WORDS = Array.from({ length: 512 }, (_, i) => `w${((i * 2654435761) >>> 0).toString(36)}`);
export const texts = (n: number) => Array.from({ length: n }, (_, j) => {
  const i = j % 5 === 4 ? j - 3 : j;
  return Array.from({ length: 12 }, (_, k) => WORDS[((i + 1) * 40503 + k * (i % 61 + 1) * 9973) % 512]).join(' ') + ` ${i}`;
});
const bufs = (n: number) => texts(n).map((t) => Buffer.from(t));
const sum = (a: ArrayLike<number | bigint>) => {
  let s = 0n;
  for (let i = 0; i < a.length; i++) s = (s * 31n + BigInt(a[i])) & 0xffffffffffffn;
  return s.toString();
};
const drain = async <T>(it: AsyncIterable<T>, f: (x: T) => unknown = () => 1) => {
  const out: unknown[] = [];
  for await (const x of it) out.push(f(x));
  return out;
};
let fresh = 0;
const newDir = (dir: string, name: string) => {
  const d = path.join(dir, `${name}-${process.pid}-${fresh++}-${Math.random().toString(36).slice(2, 8)}`);
  return d;
};

export const CASES: ApiCase[] = [
  { name: 'shingleHashes', setup: async (nd) => async () => sum((await nd.shingleHashes(texts(4000), { n: 5 })).offsets) },
  // issue 25's repro: minhash over 20,000 short texts, numPerm 64
  { name: 'minhash', setup: async (nd) => { const t = texts(20000); return async () => sum((await nd.minhash(t, { numPerm: 64 })).signatures); } },
  {
    name: 'minhashStream',
    setup: async (nd) => async () => drain(nd.minhashStream(texts(4000), { numPerm: 32, batchDocuments: 1000 } as never), (r) => sum(r.signatures)),
  },
  { name: 'simhashFingerprints', setup: async (nd) => async () => sum(await nd.simhashFingerprints(texts(4000))) },
  {
    name: 'simhashFindAll',
    setup: async (nd) => {
      const fps = nd.simhashFingerprintsSync(texts(3000));
      return async () => sum((await nd.simhashFindAll(fps, { distance: 3 })).pairs);
    },
  },
  {
    name: 'simhashFindAllStream',
    setup: async (nd) => {
      const fps = nd.simhashFingerprintsSync(texts(3000));
      return async () => (await drain(nd.simhashFindAllStream(fps, { distance: 3, chunkPairs: 500 }), (c) => c.a.length)).length;
    },
  },
  { name: 'optimalParamAsync', setup: async (nd) => async () => nd.optimalParamAsync(0.8, 128) },
  {
    name: 'LshIndex insert/queryBatch/candidatePairsStream',
    setup: async (nd) => {
      const sigs = nd.minhashSync(texts(3000), { numPerm: 64 }).signatures;
      const ids = BigUint64Array.from({ length: 3000 }, (_, i) => BigInt(i));
      return async () => {
        const ix = new nd.LshIndex({ numPerm: 64, b: 16, r: 4 });
        await ix.insert(ids, sigs);
        const q = await ix.queryBatch(sigs);
        const pairs = await drain(ix.candidatePairsStream({ chunkPairs: 5000 }), (c) => c.a.length);
        ix.close();
        return [q.ids.length, pairs.length];
      };
    },
  },
  {
    name: 'LshIndex save/loadAsync',
    setup: async (nd, dir) => {
      const ix = new nd.LshIndex({ numPerm: 64, b: 16, r: 4 });
      await ix.insert(BigUint64Array.from({ length: 3000 }, (_, i) => BigInt(i)), nd.minhashSync(texts(3000), { numPerm: 64 }).signatures);
      const f = path.join(dir, `lsh-${process.pid}-${fresh++}.lsh`);
      return async () => {
        await ix.save(f);
        const back = await nd.LshIndex.loadAsync(f);
        const n = back.size;
        back.close();
        return n;
      };
    },
  },
  {
    name: 'dedup',
    setup: async (nd) => async () => sum((await nd.dedup(texts(3000), { threshold: 0.8 })).duplicate),
  },
  {
    name: 'DedupSession add/finish/saveIndex',
    setup: async (nd, dir) => async () => {
      const s = new nd.DedupSession({ numPerm: 64, b: 16, r: 4, indexOut: true });
      await s.add(texts(1500));
      await s.add(texts(1500));
      const r = await s.finish();
      const saved = await s.saveIndex(path.join(dir, `dedup-${process.pid}-${fresh++}.idx`));
      return [sum(r.duplicate), saved.entries];
    },
  },
  {
    name: 'doubriSelf/doubriOther',
    setup: async (nd, dir) => {
      const V = path.join(VECTORS, 'doubri-v1');
      return async () => {
        const d = newDir(dir, 'doubri');
        fs.mkdirSync(d);
        for (const g of ['groupA', 'groupB']) {
          fs.copyFileSync(path.join(V, `${g}.hash`), path.join(d, `${g}.hash`));
          fs.copyFileSync(path.join(V, `${g}.hash.f.init`), path.join(d, `${g}.hash.f`));
          fs.chmodSync(path.join(d, `${g}.hash.f`), 0o644);
        }
        fs.mkdirSync(path.join(d, 'idx'));
        const a = await nd.doubriSelf([path.join(d, 'groupA.hash')], path.join(d, 'idx', 'index'));
        const b = await nd.doubriOther(path.join(d, 'idx', 'index'), [path.join(d, 'groupB.hash')]);
        fs.rmSync(d, { recursive: true, force: true });
        return [a, b];
      };
    },
  },
  {
    name: 'SimhashIndex insertAsync/findFirstMany/findAllMany/removeAsync/save/openAsync',
    setup: async (nd, dir) => {
      const fps = nd.simhashFingerprintsSync(texts(3000));
      const ids = BigUint64Array.from({ length: 3000 }, (_, i) => BigInt(i));
      return async () => {
        const ix = new nd.SimhashIndex({ distance: 3 });
        await ix.insertAsync(ids, fps);
        const first = await ix.findFirstMany(fps);
        const all = await ix.findAllMany(fps);
        const removed = await ix.removeAsync(ids.subarray(0, 100));
        const f = path.join(dir, `simh-${process.pid}-${fresh++}.six`);
        await ix.save(f);
        ix.close();
        const back = await nd.SimhashIndex.openAsync(f);
        const n = back.stats().size;
        back.close();
        return [sum(first.ids), sum(first.found), sum(all.offsets), sum(all.ids), removed, n];
      };
    },
  },
  {
    name: 'ParagraphFilter pushDocuments/pushParagraphs/pushVertical/saveSeen/loadSeen',
    setup: async (nd, dir) => async () => {
      const f = new nd.ParagraphFilter();
      const docs = texts(1500).map((t, i) => [t, `paragraph ${i % 50} of a document`, t.toUpperCase()]);
      const a = await f.pushDocuments(docs);
      const flat = texts(1500);
      const offs = Uint32Array.from({ length: 501 }, (_, i) => i * 3);
      const b = await f.pushParagraphs(flat, offs);
      const v = await f.pushVertical('<doc id="1">\n<p>\na\nb\n</p>\n</doc>\n', true);
      const seen = path.join(dir, `seen-${process.pid}-${fresh++}.bin`);
      await f.saveSeen(seen);
      f.close();
      const g = new nd.ParagraphFilter();
      const loaded = await g.loadSeen(seen);
      g.close();
      return [a.documentRemoved.map(Number), sum(b.dup), sum(v.flags), loaded.size];
    },
  },
  {
    name: 'ParagraphFilter startSecondPass/addDuplicateNgrams, dedupVertical',
    setup: async (nd) => async () => {
      const vert = Array.from({ length: 300 }, (_, i) => `<doc id="${i}">\n<p>\n${texts(20).slice(i % 5, (i % 5) + 6).join('\n')}\n</p>\n</doc>\n`).join('');
      const out = await nd.dedupVertical(vert);
      const f = new nd.ParagraphFilter({ dropAll: true });
      await f.startSecondPass();
      f.close();
      const g = new nd.ParagraphFilter({ ngramHash: 'onion' } as never);
      const n = await g.addDuplicateNgrams(new Uint8Array(64).fill(7));
      g.close();
      return [out.length, n];
    },
  },
  {
    name: 'DecontaminationIndex add/seal/probe/check, addBenchmarkFiles',
    setup: async (nd, dir) => {
      const f = path.join(dir, `bench-${process.pid}-${fresh++}.jsonl`);
      fs.writeFileSync(f, texts(300).map((t) => JSON.stringify({ text: t })).join('\n') + '\n');
      return async () => {
        const x = new nd.DecontaminationIndex({ n: 8, minTokens: 4 });
        const files = await nd.addBenchmarkFiles(x, [f]);
        await x.add(texts(2000), Uint32Array.from({ length: 2000 }, (_, i) => 300 + i));
        await x.seal();
        const p = await x.probe(texts(3000));
        const c = await x.check(texts(500).map((t) => `x y ${t} z`));
        x.close();
        const a = new nd.DecontaminationIndex({ approx: true });
        await a.add(texts(2000), Uint32Array.from({ length: 2000 }, (_, i) => i));
        await a.seal();
        const q = await a.probe(texts(3000));
        a.close();
        return [files[0].rows, sum(p.matched), sum(p.rows), c.length, sum(q.matched)];
      };
    },
  },
  {
    name: 'ExactDedup add/addHashes/finish/saveIndex/loadIndex, exactDuplicates',
    setup: async (nd, dir) => async () => {
      const ix = path.join(dir, `exact-${process.pid}-${fresh++}.exix`);
      const d = new nd.ExactDedup({ lowercase: true, indexOut: true, memory: 1 << 16 });
      const early = await d.add(texts(6000));
      const r = await d.finish();
      await d.saveIndex(ix, { meta: '{}', firstDoc: 0 });
      d.close();
      const e = new nd.ExactDedup({ lowercase: true });
      await e.loadIndex(ix);
      const late = await e.add(texts(3000).map((t) => t.toUpperCase()));
      const f = await e.finish();
      e.close();
      fs.rmSync(ix, { force: true });
      return [sum(early.map((x) => Math.min(x, 1e6))), sum(r.representative), r.duplicates, f.indexMatched, sum(late), sum(await nd.exactDuplicates(texts(4000)))];
    },
  },
  {
    name: 'SubstringFinder add/addBatch/find, removeRepeatedSubstrings, countSubstrings',
    setup: async (nd, dir) => async () => {
      const f = new nd.SubstringFinder();
      await f.add(texts(3000));
      await f.addBatch(bufs(3000));
      const index = path.join(dir, `substr-${process.pid}-${fresh++}.subx`);
      const r = await f.find({ minLength: 20, indexPath: index });
      f.close();
      const g = await nd.removeRepeatedSubstrings(texts(500), { minLength: 16, dropAll: true });
      const c = await nd.countSubstrings(index, [WORDS[3], WORDS[7]]);
      fs.rmSync(index, { force: true });
      return [r.stats.spans, r.stats.removedBytes, sum(r.start), g.spans.stats.removedBytes, c.counts];
    },
  },
  {
    name: 'CodeIndex add/match, findCopiedCode',
    setup: async (nd) => async () => {
      const src = texts(400).map((t, i) => `function f${i}() { return [${t.split(' ').map((w) => JSON.stringify(w)).join(', ')}].length + ${i % 7}; }\n`);
      const i = new nd.CodeIndex({ minTokens: 20 });
      await i.add(src.map((text) => ({ text, lang: 'javascript' as const })));
      const m = await i.match({ maxFiles: 0 });
      i.close();
      const f = await nd.findCopiedCode(src.slice(0, 50).map((text) => ({ text, lang: 'javascript' as const })), { minTokens: 20 });
      return [m.pairs.length, m.stats.fingerprints, f.pairs.length];
    },
  },
  {
    name: 'readJsonl/readDocuments',
    setup: async (nd, dir) => {
      const f = path.join(dir, `in-${process.pid}-${fresh++}.jsonl`);
      fs.writeFileSync(f, texts(5000).map((t, i) => JSON.stringify({ id: i, text: t })).join('\n') + '\n');
      return async () => [
        (await drain(nd.readJsonl([f], { field: 'text' }), (b) => b.texts.length)),
        (await drain(nd.readDocuments([f], { field: 'text' } as never), (b) => (b as { count?: number; documents?: number }).count ?? 1)),
      ];
    },
  },
  {
    name: 'blot, chunkIds',
    setup: async (nd) => async () => [sum((await nd.blot(texts(3000))).docOffsets), sum((await nd.chunkIds(texts(3000))).offsets)],
  },
  {
    name: 'PostingIndex append/appendTexts/lookup/keyCounts/delete/merge, PostingAppender add/addTexts/commit/abort',
    setup: async (nd, dir) => async () => {
      const d = newDir(dir, 'post');
      nd.PostingIndex.create(d);
      const ix = await nd.PostingIndex.open(d);
      const docs = Array.from({ length: 2000 }, (_, i) => [i % 300, (i * 7) % 500, 1000 + (i % 13)]);
      await ix.append(docs);
      await ix.appendTexts(texts(2000));
      const ap = await ix.appender();
      await ap.add(docs.slice(0, 100));
      await ap.addTexts(texts(50));
      await ap.commit();
      const ap2 = await ix.appender();
      await ap2.add(docs.slice(0, 10));
      await ap2.abort();
      const l = await ix.lookup([5, 1003]);
      const kc = await ix.keyCounts();
      await ix.delete([1, 2, 3]);
      await ix.merge();
      ix.close();
      fs.rmSync(d, { recursive: true, force: true });
      return [sum(l.docs), kc.counts.length];
    },
  },
  {
    name: 'PassageIndex open(create)/add/addRun/merge/query(Lines)/pairs(Lines)/extract(Lines)',
    setup: async (nd, dir) => async () => {
      const d = newDir(dir, 'pass');
      const p = await nd.PassageIndex.open(d, { seqLen: 4 }, true);
      const docs = bufs(1200);
      await p.add(docs.slice(0, 600).map((text, i) => ({ id: `d${i}`, text })));
      await p.add(docs.slice(600).map((text, i) => ({ id: `d${600 + i}`, text })));
      await p.addRun([docs.slice(0, 100).map((text, i) => ({ id: `r${i}`, text }))]);
      await p.merge();
      const q = await p.query(docs.slice(0, 20));
      const ql = await p.queryLines(docs.slice(0, 20));
      const pairs = await p.pairs();
      const pl = await drain(p.pairsLines());
      const ex = await drain(p.extract());
      const el = await drain(p.extractLines());
      p.close();
      fs.rmSync(d, { recursive: true, force: true });
      return [q.map((m) => m.length), ql.length, pairs.length, pl.length, ex.length, el.length];
    },
  },
  {
    name: 'ChunkIndex build/open/update/top/topOf/topLines/query',
    setup: async (nd, dir) => async () => {
      const d = newDir(dir, 'chunks');
      const docs = texts(800).map((text, i) => ({ id: i, text }));
      const ix = await nd.ChunkIndex.build(d, docs);
      const top = await ix.top(3);
      const many = await ix.topOf(Uint32Array.from([0, 1, 2]));
      const lines = await ix.topLines(Uint32Array.from([0, 1, 2]));
      const q = await ix.query(texts(10));
      ix.close();
      const back = await nd.ChunkIndex.open(d);
      const u = await back.update([{ id: 5, text: null }, { id: 9000, text: texts(1)[0] }]);
      back.close();
      fs.rmSync(d, { recursive: true, force: true });
      return [top.length, many.map((m) => m.length), lines.length, q.map((m) => m.length), Object.keys(u).length];
    },
  },
];
