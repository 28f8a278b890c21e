/**
 * The one step loop of jobtap: a fixed sequence of steps, run synchronously for as long as
 * every step returns synchronously; the first step that returns a Promise makes the rest run
 * after it settles (hookable's `callHooks` idea). Synchronous plugins (the builtins) then cost
 * no Promise round trip, and an async handler still holds its job's place in the order.
 *
 * Used by the engine's per-event callbacks, submit's admission topics and the plugin stack.
 */

/** What a step returns: `undefined` to go on, any other value to stop with it, or a Promise
 *  of either. */
export type Step<R> = R | void | undefined | PromiseLike<R | void | undefined>;

/**
 * Runs `step(ctx, i)` for i = from .. count-1 in order and returns the first value that is
 * not undefined (or undefined). Synchronous unless a step returned a Promise; a rejected
 * Promise rejects the result and runs no further step. `ctx` is passed through so callers
 * can use a module-level step function (no closure per call on the hot path).
 */
export function runSteps<C, R>(
  ctx: C,
  count: number,
  step: (ctx: C, i: number) => Step<R>,
  from = 0,
): R | undefined | Promise<R | undefined> {
  for (let i = from; i < count; i++) {
    const r = step(ctx, i);
    if (isThenable(r)) {
      const next = i + 1;
      return Promise.resolve(r).then((v) => (v !== undefined ? (v as R) : runSteps(ctx, count, step, next)));
    }
    if (r !== undefined) return r as R;
  }
  return undefined;
}

/** True for anything with a `then` method (a Promise or a foreign thenable). */
export function isThenable(v: unknown): v is PromiseLike<unknown> {
  return typeof v === "object" && v !== null && typeof (v as { then?: unknown }).then === "function";
}
