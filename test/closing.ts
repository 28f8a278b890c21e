/**
 * The one after-each clean-up of the test files: what a test opened (a test host, a manager,
 * a daemon) is closed after it, so a failing test cannot leak timers or processes into the
 * next one. `let t: TestHost | undefined; closeAfterEach(() => t);` then `t = await ...`.
 */
import { afterEach } from "vitest";

/** Anything with an async (or sync) close. */
export interface Closeable {
  close(): unknown;
}

/** After each test, closes what each getter returns (once: a value kept over to the next
 *  test is not closed twice). */
export function closeAfterEach(...opened: Array<() => Closeable | undefined>): void {
  const closed = new WeakSet<Closeable>();
  afterEach(async () => {
    for (const get of opened) {
      const x = get();
      if (x === undefined || closed.has(x)) continue;
      closed.add(x);
      await x.close();
    }
  });
}
