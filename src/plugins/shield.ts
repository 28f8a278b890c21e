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

/** Deep-freezes plain data (objects and arrays) in place; returns it. */
export function deepFreeze<T>(value: T): T {
  if (typeof value !== "object" || value === null || Object.isFrozen(value)) return value;
  Object.freeze(value);
  for (const v of Object.values(value as object)) deepFreeze(v);
  return value;
}

/** One per host: the frozen copy of each jobspec object seen, held weakly. */
export class JobspecShield {
  private readonly copies = new WeakMap<object, Jobspec>();

  /** The frozen copy of `jobspec` (made on first sight). */
  frozen(jobspec: Jobspec): Jobspec {
    let copy = this.copies.get(jobspec);
    if (copy === undefined) {
      copy = deepFreeze(structuredClone(jobspec));
      this.copies.set(jobspec, copy);
      this.copies.set(copy, copy);
    }
    return copy;
  }

  /** Puts the frozen copy into job args (built fresh per call by the manager); returns them. */
  args<T>(args: T): T {
    const js = (args as { jobspec?: unknown } | undefined)?.jobspec;
    if (typeof js === "object" && js !== null) {
      (args as { jobspec: Jobspec }).jobspec = this.frozen(js as Jobspec);
    }
    return args;
  }
}
