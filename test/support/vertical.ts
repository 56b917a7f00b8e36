// Converts the SpamAssassin corpus (gzip JSONL {id, text}) to vertical text for tests and benchmarks:
// one document per message (<doc id="...">), paragraphs at blank lines (<p> ... </p>), tokens = runs of
// word characters or single other non-space characters, with & < > escaped as entities.
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as zlib from 'node:zlib';

export const FIXTURES = path.join(__dirname, '..', 'fixtures');
export const SPAM = path.join(FIXTURES, 'corpora', 'spamassassin.jsonl.gz');

export function loadSpam(limit = Infinity): { id: string; text: string }[] {
  const lines = zlib.gunzipSync(fs.readFileSync(SPAM)).toString('utf8').split('\n');
  const out: { id: string; text: string }[] = [];
  for (const l of lines) {
    if (!l) continue;
    out.push(JSON.parse(l) as { id: string; text: string });
    if (out.length >= limit) break;
  }
  return out;
}

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

export function tokenize(text: string): string[] {
  return text.match(/[\p{L}\p{N}_]+|[^\s\p{L}\p{N}_]/gu) ?? [];
}

/** Vertical text of documents; `copy` (default 0) tags repeated passes so ids stay unique. */
export function toVertical(docs: { id: string; text: string }[], copy = 0): string {
  const out: string[] = [];
  for (const d of docs) {
    out.push(`<doc id="${esc(d.id)}${copy ? `#${copy}` : ''}">`);
    for (const p of d.text.split(/\n\s*\n/)) {
      const toks = tokenize(p);
      if (toks.length === 0) continue;
      out.push('<p>');
      for (const t of toks) out.push(esc(t));
      out.push('</p>');
    }
    out.push('</doc>');
  }
  return out.join('\n') + '\n';
}
