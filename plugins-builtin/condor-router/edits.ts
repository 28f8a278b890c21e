/**
 * Edits of a job ad turned into jobspec updates: EditJobInPlace's transforms on the
 * original itself, and UPDATE_JOB_INFO's attributes over a pending copy.
 */
import { JOB_AD_ATTRIBUTES, TransformRun, unparse, type ClassAd, type Evaluator } from "jobtap/plugin";
import { CLASSAD } from "./core.js";
import { plainCopy } from "./copy.js";
import type { Route, RouterConfig } from "./routes.js";

/** `base` with `update`'s attributes over it. */
export function mergedAd(base: ClassAd, update: ClassAd): ClassAd {
  const out = plainCopy(base);
  for (const [n, e] of update.attributes()) out.bind(n, e);
  return out;
}

/**
 * Jobspec updates that make the user attributes of `before` those of `after`: set or
 * changed ones as expression text, deleted ones (a transform's DELETE, the old name of a
 * RENAME) as null, which the job ad reads as absent. Only `deletable` attributes are deleted
 * (the user attributes of the jobspec: an ad's other attributes have no jobspec key).
 */
export function differences(before: ClassAd, after: ClassAd, deletable: ReadonlySet<string> = new Set()): Record<string, unknown> {
  const computed = new Set(JOB_AD_ATTRIBUTES.map((n) => n.toLowerCase()));
  const out: Record<string, unknown> = {};
  for (const [name, expr] of after.attributes()) {
    if (computed.has(name.toLowerCase())) continue;
    const old = before.lookup(name);
    const text = unparse(expr, true);
    if (old === undefined || unparse(old, true) !== text) out[`${CLASSAD}${name}`] = text;
  }
  for (const [name] of before.attributes()) {
    if (deletable.has(name) && after.lookup(name) === undefined) out[`${CLASSAD}${name}`] = null;
  }
  return out;
}

/** EditJobInPlace: pre-route, route and post-route transforms on the original itself. */
export function buildEditAd(working: ClassAd, route: Route, cfg: RouterConfig, evaluator: Evaluator): { ok: true; ad: ClassAd } | { ok: false; error: string } {
  const run = new TransformRun({ evaluator });
  let current = plainCopy(working);
  const steps = [...cfg.preRouteTransforms.map((t) => t.transform), { ...route.transform, requirements: undefined }, ...cfg.postRouteTransforms.map((t) => t.transform)];
  for (const t of steps) {
    const out = run.apply(t, current);
    if (!out.ok) return { ok: false, error: out.error };
    current = out.ad;
  }
  return { ok: true, ad: current };
}
