/** Shared set-up for condor-router tests: a real manager on a simulated clock with the router loaded. */
import type { ClassAdValue } from "../../src/plugin.js";
import { formatJobId, type JobId } from "../../src/manager/base/ids.js";
import type { JobInfo } from "../../src/manager/engine/views.js";
import { host, type TestHost } from "../builtins/helpers.js";
import type { RouteRow } from "../../src/cli/router.js";

export { until } from "../builtins/helpers.js";

/** A test host with `cores` local cores and condor-router loaded with `conf`. */
export function routerHost(conf: Record<string, unknown>, cores = 1): Promise<TestHost> {
  return host({}, { plugin: "condor-router", conf, resources: { cores } });
}

/** A job ad attribute's value; undefined when the ad lacks it. */
export function attr(h: TestHost, id: JobId, name: string): ClassAdValue | undefined {
  const ad = h.manager.jobAd(id);
  return ad.has(name) ? ad.evaluate(name) : undefined;
}

/** Every routed copy, in submission order. */
export function copies(h: TestHost): JobInfo[] {
  return h.manager
    .jobs()
    .filter((j) => h.manager.jobAd(j.id).has("RoutedFromJobId"))
    .sort((a, b) => (a.id < b.id ? -1 : 1));
}

/** The copies routed from `orig`. */
export function copiesOf(h: TestHost, orig: JobId): JobInfo[] {
  return copies(h).filter((j) => attr(h, j.id, "RoutedFromJobId") === formatJobId(orig));
}

/** The router's per-route summary (`condor-router.q`). */
export async function routeRows(h: TestHost): Promise<RouteRow[]> {
  return ((await h.plugins.query("condor-router")) as { routes: RouteRow[] }).routes;
}

/** Submits `n` jobs that want the router. */
export async function submitRoutable(h: TestHost, n: number, job: Parameters<TestHost["submit"]>[0] = {}): Promise<JobId[]> {
  const ids: JobId[] = [];
  for (let i = 0; i < n; i++) ids.push(await h.submit({ runDuration: 30, ...job, classad: { WantJobRouter: "true", ...job?.classad } }));
  return ids;
}
