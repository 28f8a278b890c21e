/** Cron jobs (condor-cron): last and next run, status, and the last output as text. */
import { get, type Session } from "./api.js";
import { fill, h, text, when } from "./dom.js";
import { errorPage } from "./ui.js";
import { field, recordTable, recordsOf } from "./v-generic.js";

/** Renders the cron view from GET /api/v1/cron. */
export function renderCron(main: HTMLElement, _session: Session): void {
  void get<unknown>("/cron").then((reply) => {
    const jobs = recordsOf(reply, "jobs", "cron");
    const t = (v: unknown) => (typeof v === "number" ? when(v) : text(v));
    fill(main,
      h("h1", {}, "Cron jobs"),
      jobs.length === 0 ? h("p", {}, "No cron jobs (is condor-cron loaded?).") : recordTable("Cron jobs", jobs.map((j) => ({ ...j, _last: t(field(j, "last_run", "lastRun", "last")), _next: t(field(j, "next_run", "nextRun", "next")) })),
        [["Name", "name"], ["Last run", "_last"], ["Status", "last_exit"], ["Duration (s)", "last_duration", "duration"], ["Next run", "_next"]], "cron"),
      ...jobs.map((j) => h("section", {}, h("h2", {}, `Last output: ${text(field(j, "name"))}`), h("pre", { class: "output" }, text(field(j, "last_output", "output", "lastOutput")) || "(none)"))),
    );
  }, (e) => errorPage(main, e, "The cron view"));
}
