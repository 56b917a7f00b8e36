// neardup pipeline: the config's stages give exactly what the commands chained by hand give (each stage's kept
// corpus the next one's input); a rerun runs nothing; a changed input, --from, or a stage killed in the middle
// runs again what has to; bad configs are refused before anything runs.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { noisyCorpus } from './support/noisy-corpus';
import { rng } from './reference/random';

const MAIN = path.join(__dirname, '..', 'dist', 'cli', 'main.js');
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'neardup-pipeline-'));
const env = { ...process.env, NEARDUP_PROGRESS: 'none' };
const neardup = (args: string[], extra: Record<string, string> = {}) =>
  spawnSync(process.execPath, [MAIN, ...args], { cwd: dir, encoding: 'utf8', env: { ...env, ...extra }, maxBuffer: 1 << 26 });
const BENCH = 'the committee decided that every member would vote on the final proposal before the end of the session';

function summary(r: ReturnType<typeof neardup>): Record<string, unknown> {
  assert.is(r.status, 0, r.stderr);
  return JSON.parse(r.stderr.trim().split('\n').pop()!) as Record<string, unknown>;
}

test.before(() => {
  const r = rng(4);
  const texts: string[] = [];
  for (const t of noisyCorpus({ seed: 12, n: 300, copies: 0.3 })) {
    texts.push(r() < 0.05 ? `${t} ${BENCH}` : t);  // some documents hold a benchmark passage
    if (r() < 0.2) texts.push(texts[Math.floor(r() * texts.length)]);  // exact copies
  }
  const lines = texts.map((t, i) => JSON.stringify({ id: `d${i}`, text: t }));
  fs.mkdirSync(path.join(dir, 'shards'));
  fs.writeFileSync(path.join(dir, 'shards', 'a.jsonl'), lines.slice(0, 200).join('\n') + '\n');
  fs.writeFileSync(path.join(dir, 'shards', 'b.jsonl'), lines.slice(200).join('\n') + '\n');
  fs.writeFileSync(path.join(dir, 'bench.jsonl'), JSON.stringify({ question: BENCH }) + '\n');
  fs.writeFileSync(path.join(dir, 'p.json'), JSON.stringify({
    inputs: ['shards'], output: 'clean.jsonl', id_field: 'id',
    stages: [
      { run: 'exact', args: ['--normalize', 'fold-whitespace'] },
      { run: 'dedup' },
      { run: 'decontaminate', args: ['--against', 'bench.jsonl', '--bench-field', 'question'] },
    ],
  }));
});
test.after(() => fs.rmSync(dir, { recursive: true, force: true }));

test('the stages equal the commands chained by hand; the summary counts each stage', () => {
  const s = summary(neardup(['pipeline', 'p.json']));
  const ins = ['shards/a.jsonl', 'shards/b.jsonl'];
  summary(neardup(['exact', ...ins, '--normalize', 'fold-whitespace', '--id-field', 'id', '--kept', 'h1.jsonl']));
  assert.is(neardup(['dedup', 'h1.jsonl', '--id-field', 'id', '--kept', 'h2.jsonl']).status, 0);
  summary(neardup(['decontaminate', 'h2.jsonl', '--against', 'bench.jsonl', '--bench-field', 'question', '--id-field', 'id', '--kept', 'h3.jsonl', '--report', 'h3.report']));
  assert.ok(fs.readFileSync(path.join(dir, 'h3.jsonl')).equals(fs.readFileSync(path.join(dir, 'clean.jsonl'))), 'the output differs from the chained commands');
  const st = s.stages as { stage: string; documents: number; kept: number; skipped: boolean }[];
  assert.equal(st.map((x) => x.stage), ['1-exact', '2-dedup', '3-decontaminate']);
  for (let k = 1; k < st.length; k++) assert.is(st[k].documents, st[k - 1].kept);
  for (const x of st) assert.ok(x.kept < x.documents && !x.skipped, JSON.stringify(x));  // every stage removed something
  const lines = fs.readFileSync(path.join(dir, 'clean.jsonl'), 'utf8').trim().split('\n');
  assert.is(s.kept, lines.length);
  assert.not.ok(lines.some((l) => l.includes(BENCH)), 'no contaminated document is kept');
});

test('a rerun runs nothing; a changed input reruns from the first stage; --from reruns that stage and the later ones', () => {
  let s = summary(neardup(['pipeline', 'p.json']));
  assert.ok((s.stages as { skipped: boolean }[]).every((x) => x.skipped));
  s = summary(neardup(['pipeline', 'p.json', '--from', '2-dedup']));
  assert.equal((s.stages as { skipped: boolean }[]).map((x) => x.skipped), [true, false, false]);
  const b = path.join(dir, 'shards', 'b.jsonl');
  fs.appendFileSync(b, JSON.stringify({ id: 'new', text: 'a new document' }) + '\n');
  s = summary(neardup(['pipeline', 'p.json']));
  assert.equal((s.stages as { skipped: boolean }[]).map((x) => x.skipped), [false, false, false]);
  assert.ok(fs.readFileSync(path.join(dir, 'clean.jsonl'), 'utf8').includes('"a new document"'));
});

test('a stage that fails stops the pipeline (non-zero, its message passed on), and the rerun completes it', () => {
  const cfg = JSON.parse(fs.readFileSync(path.join(dir, 'p.json'), 'utf8')) as { stages: { run: string; args?: string[] }[] };
  cfg.stages[2].args = ['--against', 'missing-bench.jsonl', '--bench-field', 'question'];
  fs.writeFileSync(path.join(dir, 'q.json'), JSON.stringify({ ...cfg, output: 'q.jsonl' }));
  const r = neardup(['pipeline', 'q.json']);
  assert.is.not(r.status, 0);
  assert.match(r.stderr, /missing-bench\.jsonl/);
  assert.not.ok(fs.existsSync(path.join(dir, 'q.jsonl')));
  fs.copyFileSync(path.join(dir, 'bench.jsonl'), path.join(dir, 'missing-bench.jsonl'));
  const s = summary(neardup(['pipeline', 'q.json']));
  assert.equal((s.stages as { skipped: boolean }[]).map((x) => x.skipped), [true, true, false]);
});

test('bad configs: exit 2 naming the key, nothing run', () => {
  const cases: [unknown, RegExp][] = [
    [{ inputs: ['shards'], output: 'x.jsonl', stages: [{ run: 'sort' }] }, /stages\[0\]\.run/],
    [{ inputs: [], output: 'x.jsonl', stages: [{ run: 'exact' }] }, /"inputs"/],
    [{ inputs: ['shards'], output: 'x.jsonl', stages: [{ run: 'exact', args: ['--kept', 'y'] }] }, /--kept is the pipeline's/],
    [{ inputs: ['shards'], output: 'x.jsonl', stages: [{ run: 'exact' }], extra: 1 }, /unknown key "extra"/],
  ];
  for (const [c, re] of cases) {
    fs.writeFileSync(path.join(dir, 'bad.json'), JSON.stringify(c));
    const r = neardup(['pipeline', 'bad.json']);
    assert.is(r.status, 2, r.stderr);
    assert.match(r.stderr, re);
    assert.not.ok(fs.existsSync(path.join(dir, 'x.jsonl')));
  }
  fs.writeFileSync(path.join(dir, 'bad.json'), '{"inputs": [');
  assert.is(neardup(['pipeline', 'bad.json']).status, 2);
});

test.run();
