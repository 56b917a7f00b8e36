// docs/scale/: the Slurm and Kubernetes scripts, run locally. Stand-ins for sbatch and kubectl run each job
// array / Indexed Job task in turn with its index (SLURM_ARRAY_TASK_ID, JOB_COMPLETION_INDEX), exactly the
// command the scripts give the scheduler; the outputs must equal one `neardup dedup` run (the passage index:
// one `neardup passages index` run, file for file).
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as zlib from 'node:zlib';

const test = suite('scale-scripts');
const root = path.join(__dirname, '..');
const MAIN = path.join(root, 'dist', 'cli', 'main.js');
const SCRIPTS = path.join(root, 'docs', 'scale');
let dir = '';

const SBATCH = `#!/usr/bin/env bash
# stand-in for sbatch: runs every task of the array now, in index order
set -euo pipefail
lo=0 hi=0
while [[ $1 == --* ]]; do
  case $1 in --array=*) r=\${1#--array=}; lo=\${r%-*}; hi=\${r#*-};; esac
  echo "$1" >> "$SBATCH_LOG"
  shift
done
for ((i = lo; i <= hi; i++)); do SLURM_ARRAY_TASK_ID=$i bash "$@" >&2; done
echo "$RANDOM;cluster"
`;
const KUBECTL = `#!/usr/bin/env bash
# stand-in for kubectl: apply runs every index of the Indexed Job now, in order; delete and wait do nothing
set -euo pipefail
case $1 in
  apply)
    y=$(cat)
    n=$(sed -n 's/^  completions: \\([0-9]*\\)$/\\1/p' <<< "$y")
    cmd=$(sed -n 's/^ *command: \\["\\/bin\\/sh", "-c", "\\(.*\\)"\\]$/\\1/p' <<< "$y")
    [[ -n $n && -n $cmd ]] || { echo "kubectl stand-in: no completions/command in the job" >&2; exit 1; }
    for ((i = 0; i < n; i++)); do JOB_COMPLETION_INDEX=$i /bin/sh -c "$cmd" >&2; done;;
esac
`;

test.before(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'neardup-scripts-'));
  const lines = zlib.gunzipSync(fs.readFileSync(path.join(root, 'test', 'fixtures', 'corpora', 'spamassassin.jsonl.gz'))).toString('utf8').split('\n').slice(0, 600);
  for (let f = 0; f < 3; f++) fs.writeFileSync(path.join(dir, `in${f}.jsonl`), [...lines.slice(f * 200, f * 200 + 200), ...lines.slice(10, 40)].join('\n') + '\n');
  fs.mkdirSync(path.join(dir, 'bin'));
  fs.writeFileSync(path.join(dir, 'bin', 'sbatch'), SBATCH, { mode: 0o755 });
  fs.writeFileSync(path.join(dir, 'bin', 'kubectl'), KUBECTL, { mode: 0o755 });
});
test.after(() => fs.rmSync(dir, { recursive: true, force: true }));

const INPUTS = ['in0.jsonl', 'in1.jsonl', 'in2.jsonl'];

function run(cmd: string, args: string[], env: Record<string, string>) {
  const r = spawnSync(cmd, args, {
    cwd: dir, encoding: 'utf8', timeout: 300_000,
    env: { ...process.env, PATH: `${path.join(dir, 'bin')}:${process.env.PATH}`, NEARDUP: `${process.execPath} ${MAIN}`, ...env },
  });
  assert.is(r.status, 0, `${cmd} ${args.join(' ')}: ${r.stderr}`);
  return r;
}

function reference() {
  run(process.execPath, [MAIN, 'dedup', ...INPUTS, '--flags', 'ref.flags', '--kept-dir', 'ref-kept'], {});
}
function sameAsReference(flags: string, keptDir: string) {
  assert.ok(fs.readFileSync(path.join(dir, 'ref.flags')).equals(fs.readFileSync(path.join(dir, flags))), `${flags} differs`);
  for (const f of INPUTS) assert.ok(fs.readFileSync(path.join(dir, 'ref-kept', f)).equals(fs.readFileSync(path.join(dir, keptDir, f))), `${keptDir}/${f} differs`);
}

test('Slurm: slurm-submit.sh chains the job arrays; each task is slurm-task.sh with its array index', () => {
  reference();
  const log = path.join(dir, 'sbatch.log');
  run('bash', [path.join(SCRIPTS, 'slurm-submit.sh'), '--flags', 'slurm.flags', '--kept-dir', 'slurm-kept', ...INPUTS],
    { WORK: path.join(dir, 'slurm-work'), N: '3', M: '2', SBATCH_LOG: log });
  sameAsReference('slurm.flags', 'slurm-kept');
  const opts = fs.readFileSync(log, 'utf8');
  assert.match(opts, /--array=0-2\n/);
  assert.match(opts, /--array=0-1\n/);
  assert.is(opts.match(/--dependency=afterok:\d+/g)?.length, 5, 'every stage after the first waits for the one before');
});

test('Kubernetes: k8s-run.sh applies one Indexed Job per stage; each pod runs with its completion index', () => {
  reference();
  run('bash', [path.join(SCRIPTS, 'k8s-run.sh'), '--flags', 'k8s.flags', '--kept-dir', 'k8s-kept', ...INPUTS],
    { WORK: path.join(dir, 'k8s-work'), N: '2', M: '3', IMAGE: 'neardup:test', PVC: 'corpus' });
  sameAsReference('k8s.flags', 'k8s-kept');
});

/** Every file under d (relative path -> bytes). */
function tree(d: string): Map<string, Buffer> {
  const m = new Map<string, Buffer>();
  for (const e of fs.readdirSync(d, { withFileTypes: true, recursive: true }))
    if (e.isFile()) m.set(path.relative(d, path.join(e.parentPath ?? e.path, e.name)), fs.readFileSync(path.join(e.parentPath ?? e.path, e.name)));
  return m;
}
function sameIndex(a: string, b: string) {
  const ta = tree(path.join(dir, a)), tb = tree(path.join(dir, b));
  assert.equal([...tb.keys()].sort(), [...ta.keys()].sort(), `${b}: the same files`);
  for (const [k, v] of ta) assert.ok(v.equals(tb.get(k)!), `${b}/${k} differs`);
}

test('passages index on Slurm (slurm-passages.sh: the parts as one array, the key ranges as another, finish after them) and on Kubernetes (k8s-passages.sh)', () => {
  run(process.execPath, [MAIN, 'passages', 'index', '-o', 'pix-ref', '--window', '8', ...INPUTS], {});
  const log = path.join(dir, 'sbatch-passages.log');
  const r = run('bash', [path.join(SCRIPTS, 'slurm-passages.sh'), '-o', 'pix-slurm', '--window', '8', ...INPUTS],
    { WORK: path.join(dir, 'pw-slurm'), N: '3', K: '2', SBATCH_LOG: log });
  assert.match(r.stdout, /^\d+\n$/, 'prints the finish job\'s id');
  sameIndex('pix-ref', 'pix-slurm');
  const opts = fs.readFileSync(log, 'utf8');
  assert.match(opts, /--array=0-2\n/);
  assert.match(opts, /--array=0-1\n/);
  assert.is(opts.match(/--dependency=afterok:\d+/g)?.length, 2, 'the key ranges wait for the parts, finish for the ranges');
  assert.equal(fs.readdirSync(path.join(dir, 'pw-slurm')), ['passages-plan.json']);
  run('bash', [path.join(SCRIPTS, 'k8s-passages.sh'), '-o', 'pix-k8s', '--window', '8', ...INPUTS],
    { WORK: path.join(dir, 'pw-k8s'), N: '2', K: '3', IMAGE: 'neardup:test', PVC: 'corpus' });
  sameIndex('pix-ref', 'pix-k8s');
});

test.run();
