// neardup exact and the ExactDedup API against a brute force written here: the first line of each group of
// equal texts (or keys) after the normalisation computed in plain TypeScript, on random corpora with planted
// copies and near-copies that differ only by case, punctuation, whitespace or Unicode form; in memory and
// spilled (--memory); URL keys; --drop-all; bad lines; refused and failed runs leave no output.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as zlib from 'node:zlib';
import { ExactDedup, exactDuplicates, normalizeUrl, URL_DEFAULT_RULES } from '../lib/exact/exact';
import { noisyCorpus } from './support/noisy-corpus';
import { rng } from './reference/random';

const MAIN = path.join(__dirname, '..', 'dist', 'cli', 'main.js');
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'neardup-exact-'));
const run = (args: string[], env: Record<string, string> = {}) =>
  spawnSync(process.execPath, [MAIN, 'exact', ...args], { cwd: dir, encoding: 'utf8', maxBuffer: 1 << 28, timeout: 120_000, env: { ...process.env, NEARDUP_PROGRESS: 'none', ...env } });
function ok(args: string[]): Record<string, unknown> {
  const r = run(args);
  assert.is(r.status, 0, `neardup exact ${args.join(' ')}: ${r.stderr}`);
  const last = r.stderr.trim().split('\n').pop()!;
  return JSON.parse(last) as Record<string, unknown>;
}
const lines = (f: string) => fs.readFileSync(path.join(dir, f), 'utf8').split('\n').filter((l) => l.length > 0);

const WORDS = ['alpha', 'Beta', 'gamma', 'DELTA', 'café', 'naïve', 'über', 'ｆｕｌｌ', 'ﬁne', 'x', 'Ωmega', 'end.'];
/** A corpus with exact copies and variants: case, punctuation, extra whitespace, NFD/NFKC forms. */
function corpus(seed: number, n: number): string[] {
  const r = rng(seed);
  const base: string[] = [];
  for (let i = 0; i < n / 4; i++) base.push(Array.from({ length: 1 + Math.floor(r() * 6) }, () => WORDS[Math.floor(r() * WORDS.length)]).join(' '));
  base.push('');
  const out: string[] = [];
  for (let i = 0; i < n; i++) {
    let t = base[Math.floor(r() * base.length)];
    const v = r();
    if (v < 0.15) t = t.toUpperCase();
    else if (v < 0.25) t = t.replace(/ /g, '  \t');
    else if (v < 0.35) t = ` ${t}, !`;
    else if (v < 0.45) t = t.normalize('NFD');
    out.push(t);
  }
  return out;
}

/** The brute force: rep[i] = the first j with key(text j) == key(text i). */
function bruteForce(texts: string[], key: (t: string) => string): number[] {
  const first = new Map<string, number>();
  return texts.map((t, i) => {
    const k = key(t);
    if (!first.has(k)) first.set(k, i);
    return first.get(k)!;
  });
}
// the normalisations, written plainly (the corpus has no final sigma, where the core's lower-casing differs)
const PUNCT = /\p{P}/gu;
const SPACE = /[\t\n\v\f\r\x1c-\x20\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+/g;
const lower = (t: string) => t.toLowerCase();
const fold = (t: string) => t.replace(SPACE, ' ').replace(/^ | $/g, '');
const words = (t: string) => t.split(SPACE).filter((w) => w !== '').join(' ');

const TEXTS = corpus(7, 2000);
const writeCorpus = (name: string, texts: string[], extra: (i: number) => Record<string, unknown> = () => ({})) =>
  fs.writeFileSync(path.join(dir, name), texts.map((t, i) => JSON.stringify({ id: `d${i}`, text: t, ...extra(i) })).join('\n') + '\n');

test.before(() => {
  assert.ok(fs.existsSync(MAIN), `${MAIN} is missing: run npx tsc -p . first`);
  writeCorpus('a.jsonl', TEXTS.slice(0, 1200));
  fs.writeFileSync(path.join(dir, 'b.jsonl.gz'), zlib.gzipSync(TEXTS.slice(1200).map((t, i) => JSON.stringify({ id: `d${1200 + i}`, text: t })).join('\n') + '\n'));
});
test.after(() => fs.rmSync(dir, { recursive: true, force: true }));

const CASES: { name: string; args: string[]; key: (t: string) => string }[] = [
  { name: 'as is', args: [], key: (t) => t },
  { name: '--lowercase', args: ['--lowercase'], key: lower },
  { name: '--fold-whitespace --strip-punctuation', args: ['--fold-whitespace', '--strip-punctuation'], key: (t) => fold(t.replace(PUNCT, '')) },
  { name: '--normalize nfkc,lowercase,words', args: ['--normalize', 'nfkc,lowercase,words'], key: (t) => words(lower(t.normalize('NFKC'))) },
  { name: '--unicode nfc --lowercase', args: ['--unicode', 'nfc', '--lowercase'], key: (t) => lower(t.normalize('NFC')) },
];

for (const c of CASES) {
  for (const memory of [undefined, '1k']) {
    test(`${c.name}${memory ? ' (spilled: --memory 1k)' : ''}: --clusters, --flags and --kept equal the brute force`, () => {
      const tag = `${CASES.indexOf(c)}-${memory ? 's' : 'm'}`;
      const s = ok(['a.jsonl', 'b.jsonl.gz', ...c.args, ...(memory ? ['--memory', memory] : []),
        '--clusters', `c${tag}.txt`, '--flags', `f${tag}.txt`, '--kept', `k${tag}.jsonl`]);
      const want = bruteForce(TEXTS, c.key);
      assert.equal(lines(`c${tag}.txt`).map(Number), want);
      assert.equal(lines(`f${tag}.txt`), want.map((r, i) => (r === i ? '1' : '0')));
      assert.equal(lines(`k${tag}.jsonl`).map((l) => (JSON.parse(l) as { text: string }).text), TEXTS.filter((_, i) => want[i] === i));
      const kept = want.filter((r, i) => r === i).length;
      assert.is(s.kept, kept);
      assert.is(s.duplicates, TEXTS.length - kept);
      assert.ok(kept < TEXTS.length * 0.6 && kept > 100, `the corpus has copies (${kept} of ${TEXTS.length} kept)`);
      if (memory) assert.ok((s.runs as number) >= 1 && (s.spilled_bytes as number) > 0, `spilled: ${JSON.stringify(s)}`);
      else assert.is(s.runs, 0);
    });
  }
}

test('--drop-all keeps only the lines without a copy; --removed-ids and --removed hold the others', () => {
  ok(['a.jsonl', 'b.jsonl.gz', '--drop-all', '--id-field', 'id', '--removed-ids', 'r.txt', '--removed', 'rm.jsonl', '--kept', 'k.jsonl']);
  const want = bruteForce(TEXTS, (t) => t);
  const count = new Map<number, number>();
  for (const r of want) count.set(r, (count.get(r) ?? 0) + 1);
  const unique = TEXTS.map((_, i) => count.get(want[i]) === 1);
  assert.equal(lines('k.jsonl').map((l) => (JSON.parse(l) as { id: string }).id), TEXTS.map((_, i) => `d${i}`).filter((_, i) => unique[i]));
  assert.equal(lines('r.txt'), TEXTS.map((_, i) => `"d${i}"`).filter((_, i) => !unique[i]));
  assert.is(lines('rm.jsonl').length, TEXTS.length - lines('k.jsonl').length);
});

test('--key url --url-normalize: keys compared as normalised URLs (brute force over WHATWG URL)', () => {
  const r = rng(3);
  const hosts = ['example.com', 'www.example.com', 'EXAMPLE.com', 'other.org'];
  const urls = Array.from({ length: 400 }, () => {
    const scheme = r() < 0.5 ? 'http' : 'https';
    const q = r() < 0.3 ? '?b=2&a=1' : r() < 0.5 ? '?a=1&b=2&utm_source=x' : '';
    return `${scheme}://${hosts[Math.floor(r() * hosts.length)]}/p${Math.floor(r() * 20)}${r() < 0.5 ? '/' : ''}${q}${r() < 0.2 ? '#top' : ''}`;
  });
  urls.push('not a url', 'not a url/');
  writeCorpus('u.jsonl', urls.map((_, i) => `text ${i}`), (i) => ({ url: urls[i] }));
  const key = (u: string) => {
    try {
      const x = new URL(u);
      x.protocol = 'http:';
      x.hostname = x.hostname.replace(/^www\./, '');
      x.hash = '';
      for (const k of [...x.searchParams.keys()]) if (k.startsWith('utm_')) x.searchParams.delete(k);
      x.searchParams.sort();
      x.pathname = x.pathname.length > 1 ? x.pathname.replace(/\/+$/, '') : x.pathname;
      return x.href.replace(/\?$/, '');
    } catch {
      return u.replace(/\/+$/, '');
    }
  };
  const s = ok(['u.jsonl', '--key', 'url', '--url-normalize', 'all', '--clusters', 'uc.txt']);
  assert.equal(lines('uc.txt').map(Number), bruteForce(urls, key));
  assert.is(s.key, 'url');
  ok(['u.jsonl', '--key', 'url', '--clusters', 'uc2.txt']);  // without rules: the values as they are
  assert.equal(lines('uc2.txt').map(Number), bruteForce(urls, (u) => u));
  assert.is(normalizeUrl('HTTPS://WWW.Example.COM:443/a/?utm_medium=m&z=1#f', new Set(URL_DEFAULT_RULES)), 'http://example.com/a?z=1');
});

test('the API: ExactDedup.add gives representatives as batches arrive, equal to finish(); exactDuplicates', async () => {
  const d = new ExactDedup({ lowercase: true });
  const early: number[] = [];
  for (let b = 0; b < TEXTS.length; b += 333) early.push(...(await d.add(TEXTS.slice(b, b + 333))));
  const res = await d.finish();
  d.close();
  const want = bruteForce(TEXTS, lower);
  assert.equal(Array.from(res.representative), want);
  assert.equal(early, want);
  assert.equal(Array.from(await exactDuplicates(TEXTS, { memory: 1024 })), bruteForce(TEXTS, (t) => t));
  assert.throws(() => new ExactDedup({ unicode: 'nfd' as never }), /unicode/);
});

test('bad lines: an error names the file and line and writes nothing; --on-bad-line skip keeps them out of every group', () => {
  fs.writeFileSync(path.join(dir, 'bad.jsonl'), '{"text":"a"}\n{"text":"a"}\n{"text": broken\n{"text":"a"}\n{"txt":"a"}\n');
  const r = run(['bad.jsonl', '--flags', 'bf.txt']);
  assert.is.not(r.status, 0);
  assert.match(r.stderr, /bad\.jsonl:3/);
  assert.not.ok(fs.existsSync(path.join(dir, 'bf.txt')));
  ok(['bad.jsonl', '--flags', 'bf.txt', '--on-bad-line', 'skip', '--clusters', 'bc.txt']);
  assert.equal(lines('bc.txt').map(Number), [0, 0, 2, 0, 4]);
});

test('refused: an output that is an input, unknown normalisations and rules, --url-normalize without --key (exit 2, nothing written)', () => {
  const before = fs.readFileSync(path.join(dir, 'a.jsonl'));
  let r = run(['a.jsonl', '--kept', 'a.jsonl']);
  assert.is.not(r.status, 0);
  assert.equal(fs.readFileSync(path.join(dir, 'a.jsonl')), before);
  for (const args of [['--normalize', 'nfkd'], ['--url-normalize', 'all'], ['--key', 'url', '--url-normalize', 'host'], ['--split', 'nonword'], ['--key', 'u', '--field', 't']]) {
    r = run(['a.jsonl', ...args, '--flags', 'never.txt']);
    assert.is(r.status, 2, `${args.join(' ')}: ${r.stderr}`);
    assert.not.ok(fs.existsSync(path.join(dir, 'never.txt')));
  }
});

test('--index / --index-out over three runs: the clusters a single run over all of them gives (line numbers, ids), in memory and spilled', () => {
  const parts = [TEXTS.slice(0, 700), TEXTS.slice(700, 1500), TEXTS.slice(1500)];
  parts.forEach((p, k) => writeCorpus(`part${k}.jsonl`, p, (i) => ({ id: `d${[0, 700, 1500][k] + i}` })));
  const want = bruteForce(TEXTS, lower);
  for (const memory of [[], ['--memory', '1k']]) {
    for (const ids of [false, true]) {
      const ix = `run-${memory.length}-${ids}.exix`;
      const got: string[] = [];
      for (let k = 0; k < 3; k++) {
        const s = ok([`part${k}.jsonl`, ...memory, ...(ids ? ['--id-field', 'id'] : []), ...(k === 0 ? ['--lowercase'] : ['--index', ix]),
          ...(k < 2 ? ['--index-out', ix] : []), '--clusters', `ic${k}.txt`]);
        got.push(...lines(`ic${k}.txt`));
        const index = s.index as Record<string, unknown>;
        assert.is(index.documents_before, [0, 700, 1500][k]);
        if (k < 2) assert.is(index.entries_after, new Set(want.slice(0, [700, 1500][k])).size);
      }
      if (!ids) assert.equal(got.map(Number), want);
      else {
        // with ids: a line found in the index is named by id ("kept" null), the others by number and id
        got.forEach((l, i) => {
          const c = JSON.parse(l) as { id: string; kept: number | null; kept_id: string };
          assert.is(c.kept_id, `d${want[i]}`);
          const fromIndex = want[i] < [0, 700, 1500][[700, 1500, Infinity].findIndex((e) => i < e)];
          assert.is(c.kept, fromIndex ? null : want[i]);
        });
      }
    }
  }
  // the index's settings are taken when not given, and other settings are refused
  const r = run(['part1.jsonl', '--index', 'run-0-false.exix', '--fold-whitespace', '--flags', 'never.txt']);
  assert.is(r.status, 2);
  assert.match(r.stderr, /other settings.*fold_whitespace/);
  assert.not.ok(fs.existsSync(path.join(dir, 'never.txt')));
  // a damaged index is refused by name, nothing written
  const bytes = fs.readFileSync(path.join(dir, 'run-0-false.exix'));
  bytes[bytes.length - 5] ^= 1;
  fs.writeFileSync(path.join(dir, 'bad.exix'), bytes);
  const c = run(['part2.jsonl', '--index', 'bad.exix', '--flags', 'never.txt']);
  assert.is(c.status, 1, c.stderr);
  assert.match(c.stderr, /bad\.exix/);
  assert.not.ok(fs.existsSync(path.join(dir, 'never.txt')));
});

test('--work --shards 3 (the stages, in this process): every output of the single run, byte for byte', () => {
  writeCorpus('c.jsonl', TEXTS.slice(0, 150));  // a third input; and the URLs of the key test
  const outs = (p: string) => ['--flags', `${p}.flags`, '--clusters', `${p}.clusters`, '--kept', `${p}.kept`, '--removed', `${p}.removed`, '--removed-ids', `${p}.rids`];
  const sets = [
    ['--id-field', 'id'],
    ['--normalize', 'nfkc,lowercase,words', '--id-field', 'id', '--drop-all', '--annotate'],
    ['--lowercase', '--memory', '1k', '--id-field', 'id'],
  ];
  sets.forEach((opts, k) => {
    const single = ok(['a.jsonl', 'b.jsonl.gz', 'c.jsonl', ...opts, ...outs(`s${k}`)]);
    const staged = ok(['a.jsonl', 'b.jsonl.gz', 'c.jsonl', ...opts, ...outs(`w${k}`), '--work', `work${k}`, '--shards', '3']);
    for (const ext of ['flags', 'clusters', 'kept', 'removed', 'rids'])
      assert.ok(fs.readFileSync(path.join(dir, `s${k}.${ext}`)).equals(fs.readFileSync(path.join(dir, `w${k}.${ext}`))), `${opts.join(' ')}: ${ext} differs`);
    for (const key of ['documents', 'kept', 'duplicates', 'dropped', 'distinct']) assert.is(staged[key], single[key], `${opts.join(' ')}: ${key}`);
    assert.ok((staged.stages as { stage: string }[]).every((x) => x.stage !== 'buckets' && x.stage !== 'verify'));
  });
  // the stage commands run an exact plan too: its clusters stage again gives the same file
  const r = spawnSync(process.execPath, [MAIN, 'dedup-stage', 'clusters', '--work', 'work0'], { cwd: dir, encoding: 'utf8' });
  assert.is(r.status, 0, r.stderr);
  const again = spawnSync(process.execPath, [MAIN, 'dedup-stage', 'run', '--work', 'work0'], { cwd: dir, encoding: 'utf8' });
  assert.is(again.status, 0, again.stderr);
  assert.is((JSON.parse(again.stdout) as { duplicates: number }).duplicates, ok(['a.jsonl', 'b.jsonl.gz', 'c.jsonl']).duplicates);
  assert.ok(fs.readFileSync(path.join(dir, 's0.clusters')).equals(fs.readFileSync(path.join(dir, 'w0.clusters'))));
});

test('dedup --exact-first: the same clusters, flags and counts as dedup without it (verified and --fast), exact copies counted', () => {
  const r = rng(5);
  const near = noisyCorpus({ seed: 9, n: 400, copies: 0.4 });
  const texts: string[] = [];
  for (const t of near) {
    texts.push(t);
    if (r() < 0.3) texts.push(texts[Math.floor(r() * texts.length)]);  // an exact copy of any earlier line
  }
  writeCorpus('n.jsonl', texts);
  const dedup = (args: string[]) => {
    const x = spawnSync(process.execPath, [MAIN, 'dedup', 'n.jsonl', ...args], { cwd: dir, encoding: 'utf8', env: { ...process.env, NEARDUP_PROGRESS: 'none' } });
    assert.is(x.status, 0, x.stderr);
    return JSON.parse(x.stdout) as Record<string, unknown>;
  };
  for (const mode of [[], ['--fast']]) {
    const a = dedup([...mode, '--clusters', 'plain.txt', '--flags', 'plainf.txt']);
    const b = dedup([...mode, '--exact-first', '--clusters', 'ef.txt', '--flags', 'eff.txt']);
    assert.equal(lines('ef.txt'), lines('plain.txt'));
    assert.equal(lines('eff.txt'), lines('plainf.txt'));
    for (const k of ['kept', 'duplicates', 'clusters', 'dropped']) assert.is(b[k], a[k], `${k} ${mode.join(' ')}`);
    assert.is(b.exact_copies, bruteForce(texts, (t) => t).filter((x, i) => x !== i).length);
    assert.ok((a.duplicates as number) > (b.exact_copies as number), 'near copies too');
  }
  const x = spawnSync(process.execPath, [MAIN, 'dedup', 'n.jsonl', '--exact-first', '--pairs', 'p.jsonl'], { cwd: dir, encoding: 'utf8' });
  assert.is(x.status, 2);
  assert.not.ok(fs.existsSync(path.join(dir, 'p.jsonl')));
});

test.run();
