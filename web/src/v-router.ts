/** The router: routes with their idle/running/max counts and throttle, and the routed pairs. */
import { get, type Session } from "./api.js";
import { fill, h } from "./dom.js";
import { errorPage } from "./ui.js";
import { recordTable, recordsOf } from "./v-generic.js";

/** Renders the router view from GET /api/v1/router. */
export function renderRouter(main: HTMLElement, _session: Session): void {
  void get<unknown>("/router").then((reply) => {
    const routes = recordsOf(reply, "routes");
    const pairs = recordsOf(reply, "pairs");
    fill(main,
      h("h1", {}, "Router"),
      routes.length === 0 ? h("p", {}, "No routes (is condor-router loaded?).") : recordTable("Routes", routes, [["Route", "name"], ["Idle", "idle"], ["Running", "running"], ["Max idle", "max_idle_jobs"], ["Max jobs", "max_jobs"], ["Throttle", "throttle"], ["Accepting", "accepting"]], "routes"),
      h("h2", {}, "Routed jobs"),
      pairs.length === 0 ? h("p", {}, "No routed jobs.") : recordTable("Routed pairs", pairs, [["Original", "original", "src", "from"], ["Copy", "copy", "dest", "to"], ["Route", "route"], ["Phase", "phase"], ["Original state", "original_state", "originalState"], ["Copy state", "copy_state", "copyState"]], "pairs"),
    );
  }, (e) => errorPage(main, e, "The router view"));
}
