// Reference model of one JSONL line for tests (never used by the library): the JavaScript reader neardup
// had before the native one (JSON.parse after a strict UTF-8 check, own-property lookup), extended with the
// native reader's documented rules: dot paths into nested objects, ids (strings, or integers without
// fraction or exponent, kept as written), and an extracted string holding an unpaired surrogate is bad.
// The result is a category (not the exact words: JSON.parse's messages are V8's) plus the values.

export type LineCategory = 'ok' | 'empty' | 'utf8' | 'json' | 'object' | 'missing' | 'type' | 'surrogate';

export interface LineTruth {
  category: LineCategory;
  text?: string;
  /** JSON text of the id (a quoted string or the integer's digits). */
  id?: string;
}

const hasLone = (s: string) => /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(s);

/** The parts of a dot path ('\.' a literal dot, '\\' a backslash). */
export function pathParts(spec: string): string[] {
  const parts: string[] = [];
  let cur = '';
  for (let i = 0; i < spec.length; i++) {
    if (spec[i] === '\\') cur += spec[++i];
    else if (spec[i] === '.') { parts.push(cur); cur = ''; } else cur += spec[i];
  }
  parts.push(cur);
  return parts;
}

function follow(obj: unknown, parts: string[]): { value: unknown; found: boolean } {
  let v = obj;
  for (const p of parts) {
    if (v === null || typeof v !== 'object' || Array.isArray(v) || !Object.prototype.hasOwnProperty.call(v, p)) return { value: undefined, found: false };
    v = (v as Record<string, unknown>)[p];
  }
  return { value: v, found: true };
}

/**
 * `raw`: the line's bytes without '\n' (BOM already removed). `idNumber`: the id's text as written in the line
 * (JSON.parse loses it for big integers), found by the caller's generator; the reference checks the type only.
 */
export function referenceLine(raw: Buffer, field: string, idField?: string): LineTruth {
  if (raw.length === 0 || (raw.length === 1 && raw[0] === 0x0d)) return { category: 'empty' };
  const s = raw.toString('utf8');
  if (!Buffer.from(s, 'utf8').equals(raw)) return { category: 'utf8' };
  let obj: unknown;
  try {
    obj = JSON.parse(s);
  } catch {
    return { category: 'json' };
  }
  if (obj === null || typeof obj !== 'object' || Array.isArray(obj)) return { category: 'object' };
  const t = follow(obj, pathParts(field));
  if (!t.found) return { category: 'missing' };
  if (typeof t.value !== 'string') return { category: 'type' };
  if (hasLone(t.value)) return { category: 'surrogate' };
  const out: LineTruth = { category: 'ok', text: t.value };
  if (idField !== undefined) {
    const id = follow(obj, pathParts(idField));
    if (!id.found) return { category: 'missing' };
    if (typeof id.value === 'string') {
      if (hasLone(id.value)) return { category: 'surrogate' };
      out.id = JSON.stringify(id.value);
    } else if (typeof id.value === 'number' && Number.isInteger(id.value)) {
      out.id = 'integer';  // the digits as written: checked by the caller
    } else {
      return { category: 'type' };
    }
  }
  return out;
}

/** The category of a native reader's reason. */
export function reasonCategory(reason: string): LineCategory {
  if (reason === 'empty line') return 'empty';
  if (reason.startsWith('invalid UTF-8')) return 'utf8';
  if (reason.startsWith('not valid JSON')) return 'json';
  if (reason === 'not a JSON object') return 'object';
  if (/^field '.*' is missing/.test(reason)) return 'missing';
  if (/unpaired surrogate/.test(reason)) return 'surrogate';
  if (/^field '.*' is .*, expected/.test(reason)) return 'type';
  throw new Error(`unknown reason: ${reason}`);
}
