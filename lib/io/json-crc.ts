// JSON files that carry their own checksum: the file is JSON.stringify of an object with a last field
// "crc", the CRC-32C of that JSON text without the field. Used by passages.json (version 2) and the sharded
// passages build's passages-plan.json, part.json and lists-R.json (docs/FORMAT.md sections 11 and 14).
import { NeardupError } from '../util/errors';
import { native } from '../native/addon';

export const crc32c = (b: Uint8Array | string, crc?: number): number =>
  native.crc32c(typeof b === 'string' ? Buffer.from(b) : b, crc) >>> 0;

/** The file's text: JSON.stringify(obj) (any crc field of obj left out) with its crc as a last field, and a newline. */
export function jsonWithCrc(obj: object): string {
  const m = { ...obj } as { crc?: number };
  delete m.crc;
  const body = JSON.stringify(m);
  return body.slice(0, -1) + `${body === '{}' ? '' : ','}"crc":${crc32c(body)}}\n`;
}

/**
 * Checks and removes the crc field of an object parsed from `file`. Without one: an error when `required`,
 * else nothing (files written before they carried one). A mismatch: ERR_NEARDUP_CORRUPT naming the file.
 */
export function checkJsonCrc(obj: Record<string, unknown>, file: string, required: boolean): void {
  if (!('crc' in obj)) {
    if (required) throw new NeardupError('ERR_NEARDUP_CORRUPT', `'${file}' is corrupt: it has no checksum`, { file });
    return;
  }
  const crc = obj.crc;
  delete obj.crc;
  if (crc !== crc32c(JSON.stringify(obj))) throw new NeardupError('ERR_NEARDUP_CORRUPT', `'${file}' is corrupt: its checksum does not match`, { file });
}
