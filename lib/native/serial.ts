// A native object whose calls run one after another, in call order (the native side holds one lock per object
// and the pool runs the work; chaining here keeps the order the caller gave). ParagraphFilter, ExactDedup and
// SubstringFinder stand on it.
import { NeardupError, fromNative } from '../util/errors';

export abstract class SerialNative<H extends { close(): void }> {
  protected handle: H | null = null;
  private queue: Promise<unknown> = Promise.resolve();

  /** `what` names the object in the error of a call after close(): "the exact dedup is closed". */
  protected constructor(private readonly what: string) {}

  /** The native object, or ERR_NEARDUP_CLOSED once closed. */
  protected live(): H {
    if (!this.handle) throw new NeardupError('ERR_NEARDUP_CLOSED', `${this.what} is closed`);
    return this.handle;
  }

  /** Runs op after every call queued before it (whether those succeeded or not); native errors converted. */
  protected enqueue<T>(op: (h: H) => Promise<T>): Promise<T> {
    const run = async (): Promise<T> => {
      try {
        return await op(this.live());
      } catch (e) {
        throw fromNative(e);
      }
    };
    const p = this.queue.then(run, run);
    this.queue = p.catch(() => undefined);
    return p;
  }

  /** Closes the native object (queued work holds its own reference and finishes or is cancelled). */
  protected closeHandle(): void {
    if (this.handle) {
      this.handle.close();
      this.handle = null;
    }
  }
}
