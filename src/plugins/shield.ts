/**
 * Read-only jobspecs for plugins. The manager hands every stack call its cached redacted
 * jobspec, which may share objects with the job's own jobspec (and with the object the
 * submitter passed in): a plugin writing to it would change what later plugins and the
 * manager see. Plugins instead get a deep-frozen copy, made once per jobspec object (a
 * jobspec-update makes a new object, hence a new copy), so a write throws a TypeError
 * (plugin modules are strict mode) that the host reports like any handler error.
 *
 * A job's own jobspec is already such a copy (src/manager/core/frozen.ts: made at submit), so for
 * it there is nothing to copy; a jobspec the manager made later (a jobspec-update, a
 * redaction, one read back from the store) is copied once. The submitter's object is never
 * touched.
 */
import { frozenCopy, OWN_COPY } from "../manager/core/frozen.js";
import type { Jobspec } from "../manager/port/records.js";
import { STORED_JOBSPEC } from "../manager/engine/summary.js";

export { frozenCopy };

/**
 * The frozen copy of each jobspec object seen. The copy hangs off the object under OWN_COPY
 * (non-enumerable: invisible to JSON, keys, spread and clones; the copy points to itself),
 * so finding it is a property read; a WeakMap holding 100,000 jobspecs cost more to look up
 * and to collect than the priority plugin's whole call. Objects that cannot take the
 * property (frozen by their owner) fall back to the WeakMap.
 */
export class JobspecShield {
  private readonly key = OWN_COPY;
  private readonly copies = new WeakMap<object, Jobspec>();

  /** The frozen copy of `jobspec` (made on first sight); a copy is its own copy. */
  frozen(jobspec: Jobspec): Jobspec {
    const held = (jobspec as unknown as { [k: symbol]: Jobspec | undefined })[this.key];
    if (held !== undefined) return held;
    let copy = this.copies.get(jobspec);
    if (copy !== undefined) return copy;
    copy = frozenCopy(jobspec, this.key);
    if (Object.isExtensible(jobspec)) Object.defineProperty(jobspec, this.key, { value: copy });
    else this.copies.set(jobspec, copy);
    return copy;
  }

  /**
   * Puts the frozen copy into job args (built fresh per call by the manager); returns them.
   * A jobspec the manager reads from the store only on demand (an inactive job at restart,
   * src/manager/engine/summary.ts) stays on demand: the copy is made when it is read.
   */
  args<T>(args: T): T {
    const stored = args as { [STORED_JOBSPEC]?: (wrap: (js: Jobspec) => Jobspec) => void } | undefined;
    if (typeof stored?.[STORED_JOBSPEC] === "function") {
      stored[STORED_JOBSPEC]((js) => this.frozen(js));
      return args;
    }
    const js = (args as { jobspec?: unknown } | undefined)?.jobspec;
    if (typeof js === "object" && js !== null) {
      (args as { jobspec: Jobspec }).jobspec = this.frozen(js as Jobspec);
    }
    return args;
  }
}
