// Test inputs in the formats the reader takes, made without outside tools: zstd frames of raw and RLE blocks
// (valid zstd any decoder reads; compressed blocks come from test/fixtures/formats, made by the zstd tool),
// skippable frames, and Parquet files written with hyparquet-writer (snappy, gzip, zstd pages); and the
// helpers the input tests share.
import * as assert from 'uvu/assert';
import { readDocuments, idJson, type ReadDocumentsOptions } from '../../lib/io/input';
import type { NeardupError } from '../../lib/util/errors';

/** Awaits p, which must reject with an error `check` accepts. */
export async function rejects(p: Promise<unknown>, check: (e: NeardupError) => boolean, what = ''): Promise<void> {
  let err: unknown;
  try {
    await p;
  } catch (e) {
    err = e;
  }
  assert.ok(err !== undefined, `${what}: expected a rejection`);
  assert.ok(check(err as NeardupError), `${what}: ${(err as Error).message}`);
}

/** Every document of the files (onBadLine 'skip' unless given): its text (null: skipped), bad-line reason, id (JSON), line. */
export async function readAllDocs(files: string[], o: ReadDocumentsOptions = {}) {
  const out: { text: string | null; reason?: string; id?: string; line: number }[] = [];
  for await (const b of readDocuments(files, { onBadLine: 'skip', ...o })) {
    const data = Buffer.from(b.packed.data.buffer, b.packed.data.byteOffset, b.packed.data.length);
    for (let i = 0; i < b.count; i++) {
      const skipped = b.valid !== undefined && b.valid[i] === 0;
      out.push({
        text: skipped ? null : data.toString('utf8', b.packed.offsets[i], b.packed.offsets[i + 1]),
        reason: b.bad.get(i), id: b.ids && !skipped ? idJson(b.ids, i) : undefined, line: b.firstLine + i,
      });
    }
  }
  return out;
}

/** One zstd frame holding `data` in raw blocks of at most `block` bytes (no content size, no checksum). */
export function zstdRawFrame(data: Uint8Array, block = 1 << 16): Buffer {
  const parts: Buffer[] = [Buffer.from([0x28, 0xb5, 0x2f, 0xfd, 0x00, (17 - 10) << 3])];  // FHD 0, window 128 KiB
  let at = 0;
  do {
    const n = Math.min(block, data.length - at);
    const last = at + n >= data.length ? 1 : 0;
    const h = (n << 3) | (0 << 1) | last;  // raw block
    parts.push(Buffer.from([h & 0xff, (h >> 8) & 0xff, (h >> 16) & 0xff]), Buffer.from(data.subarray(at, at + n)));
    at += n;
  } while (at < data.length);
  return Buffer.concat(parts);
}

/** A zstd frame of one RLE block: `count` copies of `byte`. */
export function zstdRleFrame(byte: number, count: number): Buffer {
  const h = (count << 3) | (1 << 1) | 1;
  return Buffer.from([0x28, 0xb5, 0x2f, 0xfd, 0x00, (17 - 10) << 3, h & 0xff, (h >> 8) & 0xff, (h >> 16) & 0xff, byte]);
}

/**
 * A zstd frame that expands to `prefix` then `count` copies of `byte` (RLE blocks of 128 KiB: 4 bytes each),
 * so a few KB of frame make gigabytes: a decompression bomb.
 */
export function zstdBombFrame(prefix: Uint8Array, byte: number, count: number): Buffer {
  const parts: Buffer[] = [Buffer.from([0x28, 0xb5, 0x2f, 0xfd, 0x00, (17 - 10) << 3])];
  const header = (size: number, type: number, last: boolean) => {
    const h = (size << 3) | (type << 1) | (last ? 1 : 0);
    return Buffer.from([h & 0xff, (h >> 8) & 0xff, (h >> 16) & 0xff]);
  };
  if (prefix.length) parts.push(header(prefix.length, 0, count === 0), Buffer.from(prefix));
  for (let left = count; left > 0;) {
    const n = Math.min(left, 1 << 17);
    left -= n;
    parts.push(header(n, 1, left === 0), Buffer.from([byte]));
  }
  return Buffer.concat(parts);
}

/** A skippable frame (magic 0x184D2A50..5F) of `n` bytes of junk. */
export function zstdSkippableFrame(n: number): Buffer {
  const b = Buffer.alloc(8 + n, 0x5a);
  b.writeUInt32LE(0x184d2a53, 0);
  b.writeUInt32LE(n, 4);
  return b;
}

type Writer = typeof import('hyparquet-writer', { with: { 'resolution-mode': 'import' } });

export interface ParquetColumn {
  name: string;
  data: unknown[];
  type?: 'STRING' | 'INT32' | 'INT64' | 'DOUBLE' | 'FLOAT' | 'BOOLEAN' | 'BYTE_ARRAY' | 'TIMESTAMP' | 'JSON';
  nullable?: boolean;
}

/**
 * A Parquet file's bytes: `codec` pages (SNAPPY, GZIP, ZSTD (written as raw-block frames), UNCOMPRESSED),
 * `rowGroupSize` rows per row group.
 */
export async function parquetBytes(columns: ParquetColumn[], options: {
  codec?: 'SNAPPY' | 'GZIP' | 'ZSTD' | 'UNCOMPRESSED'; rowGroupSize?: number; pageSize?: number;
  zstd?: (b: Uint8Array) => Uint8Array; gzip?: (b: Uint8Array) => Uint8Array;
} = {}): Promise<Buffer> {
  const w: Writer = await import('hyparquet-writer');
  const zlib = await import('node:zlib');
  const ab = w.parquetWriteBuffer({
    columnData: columns.map((c) => ({ name: c.name, data: c.data as never, type: c.type, nullable: c.nullable })),
    codec: options.codec ?? 'SNAPPY',
    rowGroupSize: options.rowGroupSize,
    ...(options.pageSize !== undefined ? { pageSize: options.pageSize } : {}),
    compressors: {
      GZIP: options.gzip ?? ((b: Uint8Array) => new Uint8Array(zlib.gzipSync(b))),
      ZSTD: options.zstd ?? ((b: Uint8Array) => new Uint8Array(zstdRawFrame(b))),
    },
  });
  return Buffer.from(ab);
}
