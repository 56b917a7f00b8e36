// Logs a scheduler can keep (issue 28): --progress auto|tty|json|none (and NEARDUP_PROGRESS), one JSON summary
// with the same base keys from every command of neardup's own, "did you mean" for mistyped commands. Runs
// the built CLI with stderr a pipe, as a Slurm task or subprocess.run(capture_output=True) sees it.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { spawnSync } from 'node:child_process';

const MAIN = path.join(__dirname, '..', 'dist', 'cli', 'main.js');
type Run = { code: number; stdout: string; stderr: string };
function cli(cwd: string, args: string[], env: Record<string, string | undefined> = {}): Run {
  const e: NodeJS.ProcessEnv = { ...process.env };
  delete e.NEARDUP_PROGRESS;  // npm test runs the suites with none
  for (const [k, v] of Object.entries(env)) if (v === undefined) delete e[k]; else e[k] = v;
  const r = spawnSync(process.execPath, [MAIN, ...args], { cwd, env: e, maxBuffer: 1 << 28, timeout: 120_000, killSignal: 'SIGKILL' });
  return { code: r.status ?? -1, stdout: r.stdout.toString(), stderr: r.stderr.toString() };
}
const jsonLines = (s: string) => s.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Record<string, unknown>);

let dir = '';
const DOCS = 8000;
test.before(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'neardup-logs-'));
  const lines: string[] = [];
  for (let i = 0; i < DOCS; i++) lines.push(JSON.stringify({ id: `d${i}`, text: `document ${i % 5000} says ${'word '.repeat(20 + (i % 30))} and ends ${i % 5000}` }));
  fs.writeFileSync(path.join(dir, 'c.jsonl'), lines.join('\n') + '\n');
});
test.after(() => fs.rmSync(dir, { recursive: true, force: true }));

test('progress off a terminal: JSON lines in auto and json mode, the bar in tty mode, nothing in none', () => {
  // a tiny interval: every batch writes a line; the default is 10 s
  const fast = { NEARDUP_PROGRESS_INTERVAL: '0.001' };
  for (const mode of [['--progress', 'json'], [], ['--progress', 'auto']]) {
    const r = cli(dir, ['shingles', 'c.jsonl', '--dedupe', '--threads', '1', ...mode], fast);
    assert.is(r.code, 0, r.stderr);
    const lines = jsonLines(r.stderr);
    const progress = lines.filter((l) => l.progress !== undefined);
    assert.ok(progress.length >= 2, `${mode.join(' ') || 'default'}: ${progress.length} progress lines:\n${r.stderr.slice(0, 2000)}`);
    for (const p of progress) {
      assert.is(p.progress, 'neardup shingles');
      for (const k of ['bytes', 'rate_bytes_per_s', 'seconds', 'peak_rss_mb']) assert.type(p[k], 'number', `${k} in ${JSON.stringify(p)}`);
      assert.ok(typeof p.fraction === 'number' && p.fraction >= 0 && p.fraction <= 1, `fraction in ${JSON.stringify(p)}`);
    }
    const last = progress[progress.length - 1];
    assert.is(last.done, true, 'the last progress line is marked done');
    assert.is(last.documents, DOCS, 'with the final count');
    assert.not.ok(r.stderr.includes('\r'), 'no bar off a terminal');
    // the summary follows, and is the last line
    assert.is(lines[lines.length - 1].command, 'shingles');
  }
  const tty = cli(dir, ['shingles', 'c.jsonl', '--progress', 'tty'], fast);
  assert.ok(tty.stderr.includes('\r\x1b[K'), 'tty: the bar');
  for (const quiet of [{ args: ['--progress', 'none'], env: fast }, { args: [], env: { ...fast, NEARDUP_PROGRESS: 'none' } }]) {
    const r = cli(dir, ['shingles', 'c.jsonl', ...quiet.args], quiet.env);
    assert.is(r.code, 0, r.stderr);
    assert.equal(jsonLines(r.stderr).map((l) => l.command ?? l.progress), ['shingles'], r.stderr);
  }
  // the default interval (10 s): a short run writes no progress line at all, only the summary
  const short = cli(dir, ['shingles', 'c.jsonl']);
  assert.equal(jsonLines(short.stderr).map((l) => l.command ?? 'progress'), ['shingles'], short.stderr);
});

test('progress of the commands whose work is their output: passages query|pairs|extract, simhash find-all and similar query|top count what they wrote or queried', () => {
  const fast = { NEARDUP_PROGRESS_INTERVAL: '0.001' };
  const ix = cli(dir, ['passages', 'index', '-o', 'plog', 'c.jsonl', '--id-field', 'id']);
  assert.is(ix.code, 0, ix.stderr);
  const fp = cli(dir, ['simhash', 'fingerprint', 'c.jsonl', '--id-field', 'id', '--progress', 'none']);
  const sim = cli(dir, ['similar', 'build', 'c.jsonl', '--index', 'slog', '--id-field', 'id', '--progress', 'none']);
  assert.is(sim.code, 0, sim.stderr);
  fs.writeFileSync(path.join(dir, 'fp.txt'), fp.stdout);
  for (const [label, args, counted] of [
    ['neardup passages pairs', ['passages', 'pairs', 'plog'], 'written'],
    ['neardup passages extract', ['passages', 'extract', 'plog', '--min-docs', '2'], 'written'],
    ['neardup passages query', ['passages', 'query', 'plog', 'c.jsonl', '--id-field', 'id'], 'documents'],
    ['neardup simhash find-all', ['simhash', 'find-all', '--ids', 'fp.txt', '--distance', '3'], 'written'],
    ['neardup similar query', ['similar', 'query', 'c.jsonl', '--index', 'slog'], 'documents'],
    ['neardup similar top', ['similar', 'top', '--index', 'slog'], 'documents'],
  ] as const) {
    const r = cli(dir, [...args, '--progress', 'json'], fast);
    assert.is(r.code, 0, r.stderr);
    const progress = jsonLines(r.stderr).filter((l) => l.progress === label);
    assert.ok(progress.length >= 1, `${label}: no progress line:\n${r.stderr.slice(0, 1000)}`);
    const last = progress[progress.length - 1];
    assert.is(last.done, true, `${label}: a last line marked done`);
    const out = r.stdout.split('\n').filter((l) => l.length > 0).length;
    assert.ok(out > 0, `${label} wrote something`);
    // similar query and top print a line per match: their count is of the documents queried
    const want = label.startsWith('neardup similar') ? DOCS : out;
    assert.is(last[counted], want, `${label}: ${counted} in the last line`);
  }
});

test('paragraphs: progress of each pass (JSONL bytes and documents, --drop-all\'s two passes)', () => {
  const fast = { NEARDUP_PROGRESS_INTERVAL: '0.001' };
  for (const extra of [[], ['--drop-all']]) {
    const r = cli(dir, ['paragraphs', 'c.jsonl', '--progress', 'json', ...extra], fast);
    assert.is(r.code, 0, r.stderr);
    const progress = jsonLines(r.stderr).filter((l) => l.progress === 'neardup paragraphs');
    assert.ok(progress.length >= 1, r.stderr.slice(0, 1000));
    const last = progress[progress.length - 1];
    assert.equal([last.done, last.documents], [true, DOCS]);
    if (extra.length) assert.ok(progress.some((p) => p.stage === 'first pass') && last.stage === 'second pass', 'the passes are named');
  }
});

test('--progress and NEARDUP_PROGRESS: a bad value is a usage error before any work', () => {
  let r = cli(dir, ['dedup', 'c.jsonl', '--progress', 'loud', '--flags', 'x.flags']);
  assert.is(r.code, 2);
  assert.match(r.stderr, /--progress must be one of auto, tty, json, none, got 'loud'/);
  r = cli(dir, ['dedup', 'c.jsonl', '--flags', 'x.flags'], { NEARDUP_PROGRESS: 'yes' });
  assert.is(r.code, 2);
  assert.match(r.stderr, /NEARDUP_PROGRESS must be one of/);
  assert.not.ok(fs.existsSync(path.join(dir, 'x.flags')));
});

test('one summary: every command of its own ends with the same base keys and its counts', () => {
  const base = ['command', 'version', 'inputs', 'documents', 'seconds', 'cpu_seconds', 'peak_rss_mb'];
  const version = (JSON.parse(fs.readFileSync(path.join(__dirname, '..', 'package.json'), 'utf8')) as { version: string }).version;
  const check = (what: string, s: Record<string, unknown>, command: string, documents: number | null, inputs = ['c.jsonl']) => {
    for (const k of base) assert.ok(k in s, `${what}: no ${k} in ${JSON.stringify(s)}`);
    assert.is(s.command, command, what);
    assert.is(s.version, version, what);
    assert.equal(s.inputs, inputs, what);
    assert.is(s.documents, documents, what);
    for (const k of ['seconds', 'cpu_seconds', 'peak_rss_mb']) assert.ok(typeof s[k] === 'number' && (s[k] as number) >= 0, `${what}: ${k}`);
    for (const k of Object.keys(s)) assert.match(k, /^[a-z0-9_]+$/, `${what}: key ${k} is not snake_case`);
  };
  const lastJson = (r: Run, from: 'stdout' | 'stderr') => {
    assert.is(r.code, 0, r.stderr);
    const l = jsonLines(r[from]);
    return l[l.length - 1];
  };
  check('dedup (stdout)', lastJson(cli(dir, ['dedup', 'c.jsonl', '--flags', 'f.txt']), 'stdout'), 'dedup', DOCS);
  check('shingles', lastJson(cli(dir, ['shingles', 'c.jsonl']), 'stderr'), 'shingles', DOCS);
  check('minhash', lastJson(cli(dir, ['minhash', 'c.jsonl', '-o', 's.bin']), 'stderr'), 'minhash', DOCS);
  const fp = cli(dir, ['simhash', 'fingerprint', 'c.jsonl']);
  check('simhash fingerprint', lastJson(fp, 'stderr'), 'simhash fingerprint', DOCS);
  fs.writeFileSync(path.join(dir, 'fps.txt'), fp.stdout);
  const fa = lastJson(cli(dir, ['simhash', 'find-all', 'fps.txt']), 'stderr');
  check('simhash find-all', fa, 'simhash find-all', DOCS, ['fps.txt']);
  assert.type(fa.pairs, 'number');
  const para = lastJson(cli(dir, ['paragraphs', 'c.jsonl']), 'stderr');
  check('paragraphs', para, 'paragraphs', DOCS);
  assert.type(para.duplicate_paragraphs, 'number');
  const pi = lastJson(cli(dir, ['passages', 'index', '-o', 'pidx', 'c.jsonl']), 'stderr');
  check('passages index', pi, 'passages index', DOCS);
  assert.equal([pi.documents_before, pi.documents_after], [0, DOCS]);
  check('similar build', lastJson(cli(dir, ['similar', 'build', 'c.jsonl', '--index', 'sidx', '--id-field', 'id']), 'stderr'), 'similar build', DOCS);
  fs.writeFileSync(path.join(dir, 'u.jsonl'), JSON.stringify({ id: 'new', text: 'a new document with its own words' }) + '\n');
  const up = lastJson(cli(dir, ['similar', 'update', 'u.jsonl', '--index', 'sidx', '--id-field', 'id']), 'stderr');
  check('similar update', up, 'similar update', 1, ['u.jsonl']);
  assert.equal([up.added, up.replaced, up.deleted], [1, 0, 0]);
});

test('a mistyped command or sub-command: "did you mean", on stderr, exit 2', () => {
  for (const [args, want] of [[['dedpu'], 'dedup'], [['simhash', 'find-al'], 'find-all'], [['passages', 'indx'], 'index'],
    [['similar', 'updte'], 'update'], [['doubri', 'minhsh'], 'minhash']] as const) {
    const r = cli(dir, [...args]);
    assert.is(r.code, 2, args.join(' '));
    assert.ok(r.stderr.includes(`did you mean '${want}'?`), `${args.join(' ')}: ${r.stderr}`);
    assert.is(r.stdout, '', 'usage errors stay off stdout');
  }
  const far = cli(dir, ['zzzzzz']);
  assert.is(far.code, 2);
  assert.not.match(far.stderr, /did you mean/);
});

test.run();
