/**
 * Read-only jobspecs for plugins. The manager hands every stack call its cached redacted
 * jobspec, which may share objects with the job's own jobspec (and with the object the
 * submitter passed in): a plugin writing to it would change what later plugins and the
 * manager see. Plugins instead get a deep-frozen copy, made once per jobspec object (a
 * jobspec-update makes a new object, hence a new copy), so a write throws a TypeError
 * (plugin modules are strict mode) that the host reports like any handler error.
 *
 * Copying rather than freezing in place keeps the submitter's object and the manager's
 * own jobspec writable for their owners.
 */
import type { Jobspec } from "../manager/port.js";
import { STORED_JOBSPEC } from "../manager/summary.js";

/**
 * A deep-frozen copy of JSON data (plain objects and arrays; a jobspec is stored as JSON).
 * About 5x cheaper than structuredClone + freeze for a small jobspec. Own enumerable keys
 * in their order (for-in with an own-key check walks them without Object.keys' array);
 * an array keeps its holes.
 */
export function frozenCopy<T>(value: T, self?: symbol): T {
  if (typeof value !== "object" || value === null) return value;
  if (Array.isArray(value)) return Object.freeze(value.map(frozenItem)) as T;
  const src = value as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const k in src) {
    if (!hasOwn.call(src, k)) continue;
    const c = frozenItem(src[k]);
    // A JSON "__proto__" key is an own property; plain assignment would set the prototype.
    if (k === "__proto__") Object.defineProperty(out, k, { value: c, enumerable: true });
    else out[k] = c;
  }
  // The copy points to itself under `self` (JobspecShield's key): a copy is its own copy.
  if (self !== undefined) Object.defineProperty(out, self, { value: out });
  return Object.freeze(out) as T;
}

const hasOwn = Object.prototype.hasOwnProperty;

/** frozenCopy of one value (as map's callback, its index must not reach `self`). */
function frozenItem(v: unknown): unknown {
  return typeof v === "object" && v !== null ? frozenCopy(v) : v;
}

/**
 * One per host: the frozen copy of each jobspec object seen. The copy hangs off the object
 * under this host's own symbol (non-enumerable: invisible to JSON, keys, spread and clones),
 * so finding it is a property read; a WeakMap holding 100,000 jobspecs cost more to look up
 * and to collect than the priority plugin's whole call. Objects that cannot take the
 * property (frozen by their owner) fall back to the WeakMap.
 */
export class JobspecShield {
  private readonly key = Symbol("jobtap.frozenJobspec");
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
   * src/manager/summary.ts) stays on demand: the copy is made when it is read.
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
