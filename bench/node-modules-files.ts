// The project's own node_modules as a corpus of real files (code, docs, generated modules): every regular file,
// in sorted path order, its bytes; empty files and files of 4 MiB or more left out. Used by the SimHash benches.
import * as fs from 'node:fs';
import * as path from 'node:path';

export function nodeModulesFiles(root = path.join(__dirname, '..')): Buffer[] {
  const list: string[] = [];
  const walk = (d: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.isFile()) list.push(p);
    }
  };
  walk(path.join(root, 'node_modules'));
  return list.map((p) => fs.readFileSync(p)).filter((b) => b.length > 0 && b.length < 4 << 20);
}
