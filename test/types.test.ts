// The published types, as consumers see them: the package's declarations are built fresh into a temporary
// package (with this package.json's exports map), then `tsc --noEmit` compiles an ESM (.mts) and a CommonJS
// (.cts) consumer (test/fixtures/types) against it. Classes must be usable as types from ESM (TS2749 when the
// ESM entry re-declared them as consts), shingleHashes typed per hash kind, dedup() taking packed input and
// async iterables. A deliberately wrong consumer must fail (so the harness can fail), class documentation must
// reach the consumer (hover), and every field of every exported *Result type must be documented.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import ts from 'typescript';

const root = path.join(__dirname, '..');
const fixtures = path.join(root, 'test', 'fixtures', 'types');
const TSC = path.join(path.dirname(require.resolve('typescript/package.json')), 'bin', 'tsc');
let tmp = '';
let consumer = '';

function tsc(args: string[]): { code: number; out: string } {
  const r = spawnSync(process.execPath, [TSC, ...args], { cwd: root, encoding: 'utf8', timeout: 300_000 });
  return { code: r.status ?? -1, out: `${r.stdout}${r.stderr}` };
}

test.before(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'neardup-types-'));
  const pkg = path.join(tmp, 'node_modules', 'neardup');
  const built = tsc(['-p', 'tsconfig.json', '--outDir', path.join(pkg, 'dist'), '--emitDeclarationOnly', '--sourceMap', 'false']);
  assert.is(built.code, 0, `building the declarations failed:\n${built.out}`);
  const own = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
  fs.writeFileSync(path.join(pkg, 'package.json'), JSON.stringify({ name: own.name, version: own.version, main: own.main, types: own.types, exports: own.exports }));
  fs.symlinkSync(path.join(root, 'node_modules', '@types'), path.join(tmp, 'node_modules', '@types'), 'dir');
  consumer = path.join(tmp, 'consumer');
  fs.mkdirSync(consumer);
  for (const f of fs.readdirSync(fixtures)) fs.copyFileSync(path.join(fixtures, f), path.join(consumer, f));
});
test.after(() => fs.rmSync(tmp, { recursive: true, force: true }));

test('ESM (.mts) and CommonJS (.cts) consumers compile with tsc --noEmit --strict', () => {
  const r = tsc(['-p', path.join(consumer, 'tsconfig.json')]);
  assert.is(r.code, 0, `tsc reported:\n${r.out}`);
});

test('a wrong consumer fails to compile (the check can fail)', () => {
  const cfg = JSON.parse(fs.readFileSync(path.join(consumer, 'tsconfig.json'), 'utf8'));
  cfg.files = ['bad-consumer.mts'];
  fs.writeFileSync(path.join(consumer, 'tsconfig.bad.json'), JSON.stringify(cfg));
  const r = tsc(['-p', path.join(consumer, 'tsconfig.bad.json')]);
  assert.is.not(r.code, 0);
  assert.match(r.out, /bad-consumer\.mts\(4,\d+\): error TS2322/);
});

function program(): ts.Program {
  const cfg = ts.readConfigFile(path.join(consumer, 'tsconfig.json'), ts.sys.readFile);
  const parsed = ts.parseJsonConfigFileContent(cfg.config, ts.sys, consumer);
  return ts.createProgram(parsed.fileNames, parsed.options);
}

test('class documentation reaches ESM and CommonJS consumers (hover)', () => {
  const p = program();
  const checker = p.getTypeChecker();
  for (const file of ['esm-consumer.mts', 'cjs-consumer.cts']) {
    const sf = p.getSourceFile(path.join(consumer, file))!;
    const documented = new Map<string, string>();
    sf.forEachChild(function visit(node): void {
      if (ts.isImportSpecifier(node)) {
        let sym = checker.getSymbolAtLocation(node.name)!;
        if (sym.flags & ts.SymbolFlags.Alias) sym = checker.getAliasedSymbol(sym);
        documented.set(node.name.text, ts.displayPartsToString(sym.getDocumentationComment(checker)));
      }
      node.forEachChild(visit);
    });
    for (const cls of ['LshIndex', 'SimhashIndex']) {
      assert.ok(documented.has(cls), `${file} imports ${cls}`);
      assert.ok(documented.get(cls)!.length > 20, `${file}: ${cls} has no documentation on hover`);
    }
    if (file.endsWith('.mts')) for (const cls of ['ParagraphFilter', 'DedupSession', 'SignatureWriter', 'NeardupError'])
      assert.ok(documented.get(cls)!.length > 20, `${file}: ${cls} has no documentation on hover`);
  }
});

test('every field of every exported *Result type is documented', () => {
  const p = program();
  const checker = p.getTypeChecker();
  const entry = p.getSourceFile(path.join(tmp, 'node_modules', 'neardup', 'dist', 'index.d.mts'))!;
  const mod = checker.getSymbolAtLocation(entry)!;
  const undocumented: string[] = [];
  let results = 0;
  for (const exp of checker.getExportsOfModule(mod)) {
    if (!/Result$/.test(exp.name)) continue;
    const sym = exp.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exp) : exp;
    if (!(sym.flags & (ts.SymbolFlags.Interface | ts.SymbolFlags.TypeAlias))) continue;
    results++;
    const type = checker.getDeclaredTypeOfSymbol(sym);
    for (const prop of checker.getPropertiesOfType(type)) {
      if (ts.displayPartsToString(prop.getDocumentationComment(checker)).trim() === '') undocumented.push(`${exp.name}.${prop.name}`);
    }
  }
  assert.ok(results >= 5, `found ${results} result types`);
  assert.equal(undocumented, []);
});

test.run();
