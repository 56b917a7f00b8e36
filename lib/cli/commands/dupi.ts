// neardup dupi <verb>: go-air/dupi's command line (index, extract, like, unblot, blot, inspect) on neardup's
// posting store, with dupi's flags (Go flag syntax) and outputs. Differences, on purpose: extract -json
// prints one valid JSON array (dupi concatenates arrays); unblot groups and like documents come in
// ascending document order (dupi: Go map order, random from run to run).
import * as fs from 'node:fs';
import * as path from 'node:path';
import { NeardupError } from '../../util/errors';
import { DupiIndex, dupiWalk, goJson, type DupiDoc } from '../../postings/dupi';
import { defaultBuildMemory } from '../../postings/postings';
import { checkInputFiles, inputSize } from '../../io/input';
import { parseByteSize } from '../../util/validate';
import { Output, UsageError, type Command } from '../common';
import { checkFiles, makeSpillDir, removeSpillDir } from '../../io/files';

type FlagKind = 'bool' | 'int' | 'float' | 'string';

/** Go's flag package: -f, --f, -f=v, -f v (not for bools); stops at the first non-flag or after "--". */
export function goFlags(args: string[], spec: Record<string, FlagKind>): { values: Record<string, string | boolean>; rest: string[] } {
  const values: Record<string, string | boolean> = {};
  let i = 0;
  for (; i < args.length; i++) {
    const a = args[i];
    if (a.length < 2 || a[0] !== '-') break;
    if (a === '--') {
      i++;
      break;
    }
    const body = a.startsWith('--') ? a.slice(2) : a.slice(1);
    if (body === '' || body[0] === '-' || body[0] === '=') throw new UsageError(`bad flag syntax: ${a}`);
    const eq = body.indexOf('=');
    const name = eq < 0 ? body : body.slice(0, eq);
    const kind = spec[name];
    if (name === 'h' || name === 'help') {
      values.help = true;
      continue;
    }
    if (kind === undefined) throw new UsageError(`flag provided but not defined: -${name}`);
    if (kind === 'bool') {
      const v = eq < 0 ? 'true' : body.slice(eq + 1);
      if (!['1', 't', 'T', 'true', 'TRUE', 'True', '0', 'f', 'F', 'false', 'FALSE', 'False'].includes(v)) {
        throw new UsageError(`invalid boolean value "${v}" for -${name}`);
      }
      values[name] = ['1', 't', 'T', 'true', 'TRUE', 'True'].includes(v);
      continue;
    }
    let v: string;
    if (eq >= 0) v = body.slice(eq + 1);
    else if (i + 1 < args.length) v = args[++i];
    else throw new UsageError(`flag needs an argument: -${name}`);
    if (kind === 'int' && !/^[+-]?\d+$/.test(v)) throw new UsageError(`invalid value "${v}" for flag -${name}: parse error`);
    if (kind === 'float' && !Number.isFinite(Number(v))) throw new UsageError(`invalid value "${v}" for flag -${name}: parse error`);
    values[name] = v;
  }
  return { values, rest: args.slice(i) };
}

const VERBS = ['index', 'extract', 'like', 'unblot', 'blot', 'inspect'];

function indexRoot(g: Record<string, string | boolean>): string {
  if (typeof g.r === 'string' && g.r !== '') return g.r;
  if (process.env.DUPIROOT) return process.env.DUPIROOT;
  const home = process.env.HOME;
  return home ? path.join(home, '.dupi') : 'dupi';
}

function readInput(file: string): Buffer {
  try {
    return fs.readFileSync(file);
  } catch (e) {
    throw new NeardupError('ERR_NEARDUP_IO', `cannot read '${file}': ${(e as Error).message}`, { file, cause: e });
  }
}

const docLine = (d: DupiDoc) => `\t${d.Path} ${d.Start}:${d.End}\n`;

async function runIndex(root: string, args: string[]): Promise<number> {
  const { values: f, rest } = goFlags(args, { n: 'int', s: 'int', t: 'int', c: 'string', a: 'bool', v: 'bool', memory: 'string', tmp: 'string' });
  if (f.help) return usageOut();
  let memory = f.memory === undefined ? -1 : parseSize(String(f.memory));
  // the inputs first: a missing or unreadable path creates no index and changes none
  const files: string[] = [];
  for (const p of rest) files.push(...dupiWalk(p));
  checkInputFiles(files, { sniff: false });
  let ix: DupiIndex;
  // the writer: holds the root's lock until closed (a second writer is refused)
  if (f.a) {
    ix = await DupiIndex.open(root, { writer: true });
  } else {
    const cfg = DupiIndex.makeConfig(root, Number(f.n ?? 4), Number(f.t ?? 10), Number(f.s ?? 4), f.c === undefined ? undefined : String(f.c));
    ix = await DupiIndex.create(cfg);
  }
  // -tmp: the build's spill files in a folder of this process there (removed on errors and signals; a killed
  // run's by the next one); without, in ROOT/postings (removed by the next writer of the root)
  let spill: string | undefined;
  try {
    if (memory < 0) memory = defaultBuildMemory(inputSize(files));
    if (f.tmp !== undefined) spill = makeSpillDir(String(f.tmp));
    await ix.add(files, { memory, tmp: spill });
  } finally {
    ix.close();
    if (spill) removeSpillDir(spill);
  }
  return 0;
}

export function parseSize(s: string): number {
  const n = parseByteSize(s);
  if (n === undefined) throw new UsageError(`invalid size '${s}' (examples: 512M, 1G)`);
  return n;
}

async function runInspect(root: string, args: string[], out: Output): Promise<number> {
  const { values: f } = goFlags(args, { json: 'bool' });
  if (f.help) return usageOut();
  const ix = await DupiIndex.open(root);
  try {
    const s = await ix.stats();
    if (f.json) {
      await out.write(goJson(s));
    } else {
      await out.write(`dupi index at ${s.Root}:\n\t- ${s.NumDocs} docs\n\t- ${s.NumPaths} nodes in path tree\n\t- ${s.NumPosts} posts\n` +
        `\t- ${s.NumBlots} blots\n\t- ${s.BlotMean.toFixed(2)} mean docs per blot\n\t- ${s.BlotSigma.toFixed(2)} sigma (std deviation)\n`);
    }
  } finally {
    ix.close();
  }
  return 0;
}

async function runExtract(root: string, args: string[], out: Output): Promise<number> {
  const { values: f } = goFlags(args, { sigma: 'float', b: 'bool', json: 'bool' });
  if (f.help) return usageOut();
  const sigma = f.sigma === undefined ? 2.0 : Number(f.sigma);
  const ix = await DupiIndex.open(root);
  try {
    const order = await ix.extractOrder(sigma);
    if (f.json) await out.write('[');
    for (let i = 0; i < order.length; i += 16384) {
      const chunk = order.slice(i, i + 16384);
      if (f.b && !f.json) {
        await out.write(chunk.map((b) => b.toString(16) + '\n').join(''));
        continue;
      }
      if (!f.json) {
        await ix.writeExtractLines(chunk, (b) => out.writeBytes(b));
        continue;
      }
      const lists = await ix.lookup(chunk);
      for (let k = 0; k < chunk.length; k++) {
        const docs = lists[k].map((id) => ix.docs[id]);
        const item = goJson([{ Blot: chunk[k], Docs: docs }]);
        // dupi writes one MarshalIndent'ed array per blot back to back; neardup writes their items as one array.
        await out.write((i + k > 0 ? ',' : '') + item.slice(1, -2));
      }
    }
    if (f.json) await out.write(order.length > 0 ? '\n]\n' : ']\n');
  } finally {
    ix.close();
  }
  return 0;
}

function parseHex(s: string): number {
  const m = /^(?:0[xX])?([0-9a-fA-F]+)$/.exec(s);
  if (!m || m[1].length > 8) throw new UsageError(`not a 32-bit hex blot: '${s}'`);
  return parseInt(m[1], 16);
}

/** For each document (cached per call): its reduced blots and the byte range of each blot's text. */
class DocBlots {
  private cache = new Map<number, { data: Buffer; blots: number[]; text: Array<[number, number]> }>();
  constructor(private readonly ix: DupiIndex) {}
  async get(id: number) {
    let e = this.cache.get(id);
    if (!e) {
      const data = this.ix.readDoc(id);
      const b = await this.ix.blotFile(data);
      e = { data, blots: b.blots, text: b.text };
      this.cache.set(id, e);
    }
    return e;
  }
}

async function runUnblot(root: string, args: string[], out: Output): Promise<number> {
  const { values: f, rest } = goFlags(args, { all: 'bool' });
  if (f.help) return usageOut();
  const ix = await DupiIndex.open(root);
  try {
    const db = new DocBlots(ix);
    for (const arg of rest) {
      const h = parseHex(arg);
      const [docs] = await ix.lookup([h]);
      const groups = new Map<string, number[]>();
      for (const id of docs) {
        const e = await db.get(id);
        const j = e.blots.indexOf(h);
        if (j < 0) continue;  // dupi logs a warning (H >= shards x 65536, or the file changed)
        const text = e.data.subarray(e.text[j][0], e.text[j][1]).toString('latin1');
        const g = groups.get(text);
        if (g) g.push(id);
        else groups.set(text, [id]);
      }
      for (const [text, ids] of groups) {
        if (ids.length < 2 && !f.all) continue;
        await out.write(`text:\n'''\n${Buffer.from(text, 'latin1').toString('utf8')}'''\n` + ids.map((id) => docLine(ix.docs[id])).join(''));
      }
    }
  } finally {
    ix.close();
  }
  return 0;
}

async function runLike(root: string, args: string[], out: Output): Promise<number> {
  const { values: f, rest } = goFlags(args, {});
  if (f.help) return usageOut();
  checkFiles({ inputs: rest, outputs: [], stdout: true });
  const ix = await DupiIndex.open(root);
  try {
    const db = new DocBlots(ix);
    for (const file of rest) {
      const data = readInput(file);
      const b = await ix.blotFile(data);
      const m = new Map<number, string>();
      b.blots.forEach((h, i) => m.set(h, data.subarray(b.text[i][0], b.text[i][1]).toString('latin1')));
      const lists = await ix.lookup(b.blots);
      const accepted = new Set<number>();
      const rejected = new Set<number>();
      for (const list of lists) {
        for (const id of list) {
          if (accepted.has(id) || rejected.has(id)) continue;
          const e = await db.get(id);
          let ok = false;
          for (let k = 0; k < e.blots.length && !ok; k++) {
            const t = m.get(e.blots[k]);
            ok = t !== undefined && t === e.data.subarray(e.text[k][0], e.text[k][1]).toString('latin1');
          }
          if (ok) accepted.add(id);
          else rejected.add(id);
        }
      }
      await out.write(`like ${file}:\n` + [...accepted].sort((a, c) => a - c).map((id) => docLine(ix.docs[id])).join(''));
    }
  } finally {
    ix.close();
  }
  return 0;
}

async function runBlot(root: string, args: string[], out: Output): Promise<number> {
  const { values: f, rest } = goFlags(args, { offsets: 'bool' });
  if (f.help) return usageOut();
  checkFiles({ inputs: rest, outputs: [], stdout: true });
  const ix = await DupiIndex.open(root);
  try {
    for (const file of rest) {
      const b = await ix.blotFile(readInput(file));
      await out.write(b.blots.map((h, i) => (f.offsets ? `${h.toString(16)} ${b.offsets[i][0]}:${b.offsets[i][1]}\n` : `${h.toString(16)}\n`)).join(''));
    }
  } finally {
    ix.close();
  }
  return 0;
}

const USAGE = `Usage: neardup dupi [-r ROOT] <verb> [flags] [args]

go-air/dupi's commands on neardup's posting store (same flags, same outputs). ROOT: -r, else $DUPIROOT,
else ~/.dupi.
  index [-n shards] [-s shatterers] [-t seqlen] [-c cfg.json] [-a] [-memory SIZE] [-tmp DIR] PATH...
                                 index files (directories walked in byte order, dot-files skipped)
  inspect [-json]                index statistics
  extract [-sigma S] [-b] [-json]  shared blots by descending document count, down to mean + S*sd (S = 2)
  unblot [-all] HEXBLOT...       the text of a blot in each document, grouped by identical bytes
  like FILE...                   indexed documents sharing a byte-identical 11-word window with FILE
  blot [-offsets] FILE...        the blots of FILE

Differences from dupi: extract -json prints one JSON array (dupi prints one array per blot, back to back,
which is not valid JSON); unblot groups and like results are in ascending document order (dupi: random);
-memory caps the index build's memory (default: twice the input, between 64M and 1G; dupi holds it all
in memory); the result does not depend on it.`;

function usageOut(): number {
  process.stdout.write(USAGE + '\n');
  return 0;
}

export const dupiCommand: Command = {
  name: 'dupi',
  usage: USAGE,
  async run(args) {
    let v = args.findIndex((a) => VERBS.includes(a));
    if (args[0] === '-h' || args[0] === '--help' || args[0] === 'help') return usageOut();
    if (v < 0) throw new UsageError('expected a verb: ' + VERBS.join(', '));
    const { values: g, rest } = goFlags(args.slice(0, v), { r: 'string' });
    if (rest.length > 0) throw new UsageError(`unexpected argument before the verb: ${rest[0]}`);
    const root = indexRoot(g);
    const verb = args[v];
    const vargs = args.slice(v + 1);
    const out = new Output();
    let rc: number;
    switch (verb) {
      case 'index': rc = await runIndex(root, vargs); break;
      case 'inspect': rc = await runInspect(root, vargs, out); break;
      case 'extract': rc = await runExtract(root, vargs, out); break;
      case 'unblot': rc = await runUnblot(root, vargs, out); break;
      case 'like': rc = await runLike(root, vargs, out); break;
      default: rc = await runBlot(root, vargs, out); break;
    }
    v = 0;
    await out.flush();
    return rc;
  },
};
