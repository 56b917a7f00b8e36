// lib/'s import graph and the layout rules it must keep (HACKING.md, "The map"): read with TypeScript's own
// pre-processor (ts.preProcessFile: import/export-from statements, `import type`, import() calls and types,
// require()), so comments and strings that look like imports are not edges. Used by test/layout.test.ts.
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as ts from 'typescript';

/** The layers from the bottom up; a file may import its own folder and the layers below its own. */
export const LAYERS: readonly (readonly string[])[] = [
  ['util'],
  ['native'],
  ['io'],
  ['text'],
  ['minhash', 'simhash', 'postings', 'chunks', 'filter', 'exact', 'substr', 'code'],  // the engines: each stands alone on the layers below
  ['scale'],
  ['cli'],
  ['.'],  // lib/index.ts, lib/index.mts: the public API
];

/** file (lib-relative, '/'-separated) -> the lib files it imports (lib-relative), in source order. */
export type ImportGraph = Record<string, string[]>;

/** The relative specifiers a source file imports (every kind of import; package names left out). */
export function specifiers(source: string): string[] {
  return ts.preProcessFile(source, true, true).importedFiles.map((f) => f.fileName).filter((s) => s.startsWith('.'));
}

function listFiles(dir: string, base = ''): string[] {
  const out: string[] = [];
  for (const e of fs.readdirSync(path.join(dir, base), { withFileTypes: true })) {
    const rel = base === '' ? e.name : `${base}/${e.name}`;
    if (e.isDirectory()) out.push(...listFiles(dir, rel));
    else if (/\.m?ts$/.test(e.name) && !e.name.endsWith('.d.ts')) out.push(rel);
  }
  return out.sort();
}

/** Where `spec`, imported by lib file `from`, leads: a lib file, 'outside lib' (../package.json), or undefined. */
export function resolveSpecifier(from: string, spec: string, files: ReadonlySet<string>): string | undefined {
  const joined = path.posix.normalize(path.posix.join(path.posix.dirname(from), spec));
  if (joined.startsWith('../')) return 'outside lib';
  const bare = joined.replace(/\.(m?js)$/, '');
  for (const c of [joined, `${bare}.ts`, `${bare}.mts`, `${joined}/index.ts`]) if (files.has(c)) return c;
  return undefined;
}

/** The import graph of every .ts/.mts file under `libDir`; throws on an import it cannot resolve. */
export function readGraph(libDir: string): ImportGraph {
  const files = listFiles(libDir);
  const set = new Set(files);
  const graph: ImportGraph = {};
  for (const f of files) {
    const to: string[] = [];
    for (const s of specifiers(fs.readFileSync(path.join(libDir, f), 'utf8'))) {
      const r = resolveSpecifier(f, s, set);
      if (r === undefined) throw new Error(`lib/${f}: cannot resolve '${s}'`);
      if (r !== 'outside lib' && !to.includes(r)) to.push(r);
    }
    graph[f] = to;
  }
  return graph;
}

/** The folder a lib file belongs to ('.' for the files directly in lib/). */
export const folderOf = (file: string): string => (file.includes('/') ? file.slice(0, file.indexOf('/')) : '.');

/** The layer of a file, or -1 when its folder is in no layer (or it is some other file directly in lib/). */
export function layerOf(file: string): number {
  const folder = folderOf(file);
  if (folder === '.' && !/^index\.m?ts$/.test(file)) return -1;
  return LAYERS.findIndex((l) => l.includes(folder));
}

/** The strongly connected parts of the graph that hold a cycle (Tarjan's algorithm), each sorted by name. */
export function components(graph: ImportGraph): string[][] {
  let next = 0;
  const index = new Map<string, number>(), low = new Map<string, number>(), onStack = new Set<string>();
  const stack: string[] = [];
  const parts: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, next); low.set(v, next); next++;
    stack.push(v); onStack.add(v);
    for (const w of graph[v] ?? []) {
      if (!index.has(w)) { visit(w); low.set(v, Math.min(low.get(v)!, low.get(w)!)); }
      else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const part: string[] = [];
      let w: string;
      do { w = stack.pop()!; onStack.delete(w); part.push(w); } while (w !== v);
      if (part.length > 1 || (graph[v] ?? []).includes(v)) parts.push(part.sort());
    }
  };
  for (const v of Object.keys(graph).sort()) if (!index.has(v)) visit(v);
  return parts.sort((a, b) => a[0].localeCompare(b[0]));
}

/** One cycle (a -> b -> ... -> a) per component of `components`: a shortest one through its first name. */
export function cycles(graph: ImportGraph): string[][] {
  return components(graph).map((part) => {
    const inPart = new Set(part);
    const start = part[0];
    const prev = new Map<string, string>();
    const queue = [start];
    let end: string | undefined;
    while (queue.length > 0 && end === undefined) {
      const v = queue.shift()!;
      for (const w of graph[v] ?? []) {
        if (!inPart.has(w)) continue;
        if (w === start) { end = v; break; }
        if (!prev.has(w)) { prev.set(w, v); queue.push(w); }
      }
    }
    const cycle = [start];
    for (let v = end!; v !== start; v = prev.get(v)!) cycle.splice(1, 0, v);
    return [...cycle, start];
  });
}

export interface LayoutReport {
  cycles: string[][];
  /** files outside lib/cli importing lib/cli: "from -> to" */
  cliImports: string[];
  /** imports to a higher layer, or from one engine to another: "from -> to" */
  upward: string[];
  /** files in no layer (a new folder must be given one in LAYERS and in HACKING.md) */
  unplaced: string[];
}

export function checkLayout(graph: ImportGraph): LayoutReport {
  const cliImports: string[] = [], upward: string[] = [], unplaced: string[] = [];
  for (const [from, tos] of Object.entries(graph)) {
    const lf = layerOf(from);
    if (lf < 0) unplaced.push(from);
    for (const to of tos) {
      if (folderOf(from) !== 'cli' && folderOf(to) === 'cli') cliImports.push(`${from} -> ${to}`);
      const lt = layerOf(to);
      if (lf < 0 || lt < 0) continue;  // reported as unplaced
      if (lt > lf || (lt === lf && folderOf(to) !== folderOf(from))) upward.push(`${from} -> ${to}`);
    }
  }
  return { cycles: cycles(graph), cliImports: cliImports.sort(), upward: upward.sort(), unplaced: unplaced.sort() };
}
