// lib/'s layout (HACKING.md, "The map"): no import cycle, nothing outside lib/cli imports lib/cli, every arrow
// points down the layers (cli -> scale -> engines -> text -> io -> native -> util; an engine imports no other
// engine), every file in a layer. The rules are checked on lib/ as it is, and shown to fail on the import graphs
// of lib/ before issue 27 (fixtures: main at 25c2e5f, and the plain move of a56e6a7 before the circles were
// broken), so that a rule that cannot fail would be seen here.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { checkLayout, components, readGraph, specifiers, type ImportGraph } from './helpers/layout';

const LIB = path.join(__dirname, '..', 'lib');
const fixture = (name: string): ImportGraph =>
  JSON.parse(fs.readFileSync(path.join(__dirname, 'fixtures', 'layout', name), 'utf8')) as ImportGraph;

const graph = readGraph(LIB);
const report = checkLayout(graph);

test('lib/ has no import cycle', () => {
  assert.equal(report.cycles.map((c) => c.join(' -> ')), []);
});

test('no file outside lib/cli imports lib/cli', () => {
  assert.equal(report.cliImports, []);
});

test('every import points down the layers (and no engine imports another)', () => {
  assert.equal(report.upward, []);
});

test('every lib file is in a layer', () => {
  assert.equal(report.unplaced, []);
  assert.ok(Object.keys(graph).length > 40, 'the graph holds lib/');
  assert.ok(graph['cli/main.ts'].length > 0, 'imports are read');
});

test('the checks find main\'s circles and its library-on-CLI import (lib/ at 25c2e5f)', () => {
  const r = checkLayout(fixture('main-25c2e5f.json'));
  const parts = components(fixture('main-25c2e5f.json')).map((p) => p.join(' '));
  assert.equal(parts, [
    'cli/commands/dedup.ts cli/staged.ts',
    'cli/files.ts native.ts paragraphs.ts postings.ts shingles.ts',  // native <-> engines, postings -> cli/files -> native
    'dedup-index.ts dedup.ts',
    'input.ts parquet.ts',
  ]);
  assert.equal(r.cycles.length, 4);
  for (const c of r.cycles) assert.is(c[0], c[c.length - 1]);
  for (const i of ['index.ts -> cli/jsonl.ts', 'postings.ts -> cli/files.ts', 'passages.ts -> cli/files.ts', 'index-commit.ts -> cli/files.ts'])
    assert.ok(r.cliImports.includes(i), i);
  assert.ok(r.unplaced.includes('native.ts'), 'the flat files are in no layer');
});

test('the checks find the upward arrows of the plain move (lib/ at a56e6a7)', () => {
  const r = checkLayout(fixture('moved-a56e6a7.json'));
  assert.equal(r.upward, [
    'io/index-commit.ts -> chunks/chunks-db.ts',
    'io/kept.ts -> cli/common.ts',
    'native/addon.ts -> filter/paragraphs.ts',
    'native/addon.ts -> postings/postings.ts',
    'native/addon.ts -> text/shingles.ts',
    'scale/passages-stages.ts -> cli/common.ts',
    'scale/staged.ts -> cli/commands/dedup.ts',
    'scale/staged.ts -> cli/common.ts',
  ]);
  assert.equal(r.cliImports, ['io/kept.ts -> cli/common.ts', 'scale/passages-stages.ts -> cli/common.ts', 'scale/staged.ts -> cli/commands/dedup.ts', 'scale/staged.ts -> cli/common.ts']);
  assert.equal(r.cycles.length, 4);
  assert.equal(r.unplaced, []);
});

test('an engine importing another engine, and a file in a new folder, are refused', () => {
  const r = checkLayout({ 'minhash/a.ts': ['simhash/b.ts', 'util/c.ts'], 'simhash/b.ts': [], 'util/c.ts': [], 'extra/d.ts': ['util/c.ts'], 'e.ts': [] });
  assert.equal(r.upward, ['minhash/a.ts -> simhash/b.ts']);
  assert.equal(r.unplaced, ['e.ts', 'extra/d.ts']);
  assert.equal(checkLayout({ 'util/a.ts': ['util/a.ts'] }).cycles, [['util/a.ts', 'util/a.ts']]);
});

test('specifiers: every kind of import, and nothing in comments or strings', () => {
  const src = [
    "import * as fs from 'node:fs';",
    "import { a,\n  b } from './multi-line';",
    "import type { T } from '../types';",
    "export { c } from './reexport';",
    "export type * from './types-only.js';",
    "const lazy = () => import('./lazy.js');",
    "let x: import('./type-query').X;",
    "const v = require('../package.json');",
    "// import { no } from './line-comment';",
    "/* export { no } from './block-comment'; */",
    "const s = \"import { no } from './in-a-string'\";",
  ].join('\n');
  assert.equal(specifiers(src), ['./multi-line', '../types', './reexport', './types-only.js', './lazy.js', './type-query', '../package.json']);
});

test.run();
