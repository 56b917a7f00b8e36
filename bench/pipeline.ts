// A corpus through the whole pipeline (exact -> dedup -> substrings -> decontaminate) with `neardup pipeline`,
// each stage's documents in and kept, bytes removed, wall, CPU and peak RSS (from the stages' own summaries), for
// bench/RESULTS-pipeline.md and docs/pipeline.md.
//   node --import tsx bench/pipeline.ts [--mb 1000] [--out DIR]
// The corpus (generated here, in DIR): SpamAssassin-based texts (bench/dedup-noisy-corpus.ts's model) with 20%
// exact copies of an earlier text, 25% near-copies, a boilerplate footer (one of 20, ~300 bytes) on 30% of the
// documents, and 1% of the documents holding a passage of one of 500 benchmark questions.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { spawnSync } from 'node:child_process';
import { loadTexts, machine } from './corpus';
import { makeRng, noisyCopy } from '../test/support/noisy-corpus';

const argv = process.argv.slice(2);
const opt = (name: string, def: string) => { const i = argv.indexOf(`--${name}`); return i >= 0 ? argv[i + 1] : def; };
const MB = Number(opt('mb', '1000'));
const dir = path.resolve(opt('out', path.join(os.tmpdir(), 'neardup-bench', `pipeline-${MB}mb`)));
const MAIN = path.join(__dirname, '..', 'dist', 'cli', 'main.js');
const load = () => os.loadavg().map((x) => x.toFixed(1)).join(' ');

function makeCorpus(): void {
  const texts = loadTexts().map((t) => t.split(' '));
  const rnd = makeRng(7);
  const word = () => Math.floor(rnd() * 2 ** 31).toString(36);
  const footers = Array.from({ length: 20 }, (_, k) => `-- This message was sent through list server ${k}. ` +
    Array.from({ length: 40 }, () => word()).join(' ') + ' To unsubscribe, write to the list owner.');
  const questions = Array.from({ length: 500 }, () => Array.from({ length: 30 }, () => word()).join(' '));
  fs.mkdirSync(path.join(dir, 'shards'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'bench.jsonl'), questions.map((q, i) => JSON.stringify({ id: i, question: q })).join('\n') + '\n');
  const recent: string[] = [];
  let written = 0, id = 0, shard = 0, inShard = 0;
  let fd = fs.openSync(path.join(dir, 'shards', 'part-000.jsonl'), 'w');
  const parts: string[] = [];
  const flush = () => { fs.writeSync(fd, parts.join('')); parts.length = 0; };
  while (written < MB * 1e6) {
    let text: string;
    const r = rnd();
    if (recent.length > 0 && r < 0.2) text = recent[Math.floor(rnd() * recent.length)];
    else if (recent.length > 0 && r < 0.45) text = noisyCopy(recent[Math.floor(rnd() * recent.length)], rnd, word);
    else {
      const src = texts[Math.floor(rnd() * texts.length)];
      text = word() + ' ' + src.map((w) => (rnd() < 0.3 ? word() : w)).join(' ');
      if (rnd() < 0.3) text += '\n\n' + footers[Math.floor(rnd() * footers.length)];
      if (rnd() < 0.01) text += ' ' + questions[Math.floor(rnd() * questions.length)];
    }
    if (recent.length < 5000) recent.push(text); else recent[Math.floor(rnd() * recent.length)] = text;
    const line = JSON.stringify({ id: id++, text }) + '\n';
    parts.push(line);
    written += Buffer.byteLength(line);
    inShard += Buffer.byteLength(line);
    if (parts.length >= 1000) flush();
    if (inShard >= 250e6) {
      flush();
      fs.closeSync(fd);
      fd = fs.openSync(path.join(dir, 'shards', `part-${String(++shard).padStart(3, '0')}.jsonl`), 'w');
      inShard = 0;
    }
  }
  flush();
  fs.closeSync(fd);
  fs.writeFileSync(path.join(dir, 'corpus.done'), String(written));
}

function main(): void {
  if (!fs.existsSync(path.join(dir, 'corpus.done'))) makeCorpus();
  const cfg = path.join(dir, 'pipeline.json');
  fs.writeFileSync(cfg, JSON.stringify({
    inputs: ['shards'], output: 'clean.jsonl', work: 'work', id_field: 'id',
    stages: [
      { run: 'exact' },
      { run: 'dedup' },
      { run: 'substrings' },
      { run: 'decontaminate', args: ['--against', path.join(dir, 'bench.jsonl'), '--bench-field', 'question'] },
    ],
  }, null, 2));
  fs.rmSync(path.join(dir, 'work'), { recursive: true, force: true });
  const startLoad = load();
  const r = spawnSync('/usr/bin/time', ['-f', 'TIME %e %U %S %M', process.execPath, MAIN, 'pipeline', cfg], {
    cwd: dir, encoding: 'utf8', maxBuffer: 1 << 26, env: { ...process.env, NEARDUP_PROGRESS: 'none' },
  });
  const m = /TIME ([\d.]+) ([\d.]+) ([\d.]+) (\d+)/.exec(r.stderr);
  const line = r.stderr.split('\n').filter((l) => l.startsWith('{"command":"pipeline"')).pop();
  if (r.status !== 0 || !m || !line) throw new Error(`neardup pipeline failed: ${r.stderr.slice(-3000)}`);
  const s = JSON.parse(line) as { documents: number; kept: number; stages: Record<string, number | string | boolean | null>[] };
  const mb = Number(fs.readFileSync(path.join(dir, 'corpus.done'), 'utf8')) / 1e6;
  console.log(`# neardup pipeline on a ${mb.toFixed(0)} MB corpus: ${machine()}, load average ${startLoad} at the start, ${load()} at the end\n`);
  console.log('| stage | documents in | kept | removed | bytes removed | wall s | CPU s | peak RSS MB |');
  console.log('|---|---:|---:|---:|---:|---:|---:|---:|');
  for (const st of s.stages) {
    const removed = typeof st.documents === 'number' && typeof st.kept === 'number' ? st.documents - st.kept : '';
    console.log(`| ${st.stage} | ${st.documents} | ${st.kept} | ${removed} | ${st.bytes_removed ?? ''} | ${Number(st.seconds).toFixed(1)} | ${Number(st.cpu_seconds).toFixed(1)} | ${st.peak_rss_mb} |`);
  }
  console.log(`\nWhole pipeline: ${s.documents} documents in, ${s.kept} kept; wall ${m[1]} s, CPU ${(+m[2] + +m[3]).toFixed(1)} s, the pipeline process's own peak RSS ${(+m[4] / 1024).toFixed(0)} MB.`);
}

main();
