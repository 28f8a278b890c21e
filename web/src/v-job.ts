/**
 * One job: what it is, its live timeline, why it waits or how it ended, its job ad and
 * jobspec (environment redacted by the API unless it is the caller's job), its output tails
 * (the API serves them to the job's own user only) and the actions its user may take.
 */
import { ApiError, call, follow, get, type Session } from "./api.js";
import { fill, h, pairs, text, when } from "./dom.js";
import { act, errorPage } from "./ui.js";
import { drawTimeline, type EventEntry } from "./v-timeline.js";
import { type JobView, outputSection, whySection } from "./v-job-parts.js";

/** Renders the job view for `id`; returns its cleanup (the eventlog stream and clock). */
export function renderJob(main: HTMLElement, session: Session, id: string): () => void {
  let closed = false;
  const cleanups: Array<() => void> = [];
  void (async () => {
    let info: { job: JobView; jobspec: unknown };
    try {
      info = await get(`/jobs/${encodeURIComponent(id)}`);
    } catch (e) {
      return errorPage(main, e, `Job ${id}`);
    }
    if (closed) return;
    const job = info.job;
    document.title = `jobtap: job ${job.id}`;
    const summary = h("div");
    const timeline = h("div", { id: "timeline" });
    const events: EventEntry[] = [];
    const drawSummary = () => fill(summary, pairs([
      ["ID", job.id], ["Name", job.name], ["User", String(job.userid)], ["Queue", job.queue ?? ""], ["State", h("strong", { id: "job-state" }, job.state)],
      ["Urgency", String(job.urgency)], ["Priority", String(job.priority)], ["Submitted", when(job.t_submit)],
      ["Result", job.result ?? ""], ["Exit code", job.returncode === undefined ? "" : String(job.returncode)],
      ["Exception", job.exception ? `${job.exception.type}: ${job.exception.note}` : ""],
    ]));
    drawSummary();
    const mine = session.owner || session.userid === undefined || session.userid === job.userid;
    fill(main,
      h("h1", {}, "Job ", h("span", { class: "mono" }, job.id)),
      summary,
      mine && job.state !== "INACTIVE" ? actions(job) : null,
      h("section", { "aria-labelledby": "tl-h" }, h("h2", { id: "tl-h" }, "Timeline"), timeline),
      whySection(job.id),
      adSection(job.id),
      h("section", { "aria-labelledby": "js-h" }, h("h2", { id: "js-h" }, "Jobspec"), h("pre", { id: "jobspec" }, JSON.stringify(info.jobspec, null, 2))),
      outputSection(job.id),
    );
    const redraw = () => drawTimeline(timeline, events, Date.now() / 1000);
    const stream = follow(`/jobs/${encodeURIComponent(job.id)}/eventlog?follow=1`, (e: EventEntry) => {
      events.push(e);
      const st = stateAfter(e, job.state);
      if (st !== job.state) {
        job.state = st;
        drawSummary();
      }
      redraw();
    });
    const tick = setInterval(redraw, 1000);
    cleanups.push(() => stream.close(), () => clearInterval(tick));
    redraw();
  })();
  return () => {
    closed = true;
    cleanups.forEach((f) => f());
  };
}

/** The job's state after an event, for the summary's live State line. */
function stateAfter(e: EventEntry, cur: string): string {
  const to: Record<string, string> = { depend: "PRIORITY", alloc: "RUN", finish: "CLEANUP", clean: "INACTIVE" };
  if (e.name === "priority" && cur === "PRIORITY") return "SCHED";
  return to[e.name] ?? cur;
}

function actions(job: JobView): HTMLElement {
  const id = encodeURIComponent(job.id);
  const urgency = h("input", { type: "number", min: 0, max: 31, value: job.urgency, id: "urgency-input" });
  // Re-render the view in place (the router listens to hashchange): no reload, the session stays.
  const run = (q: string, done: string, f: () => Promise<unknown>) => act(q, done, f).then((ok) => ok && window.dispatchEvent(new HashChangeEvent("hashchange")));
  return h("section", { "aria-labelledby": "act-h", class: "actions" }, h("h2", { id: "act-h" }, "Actions"),
    h("button", { type: "button", class: "danger", onclick: () => run(`Cancel job ${job.id}?`, `Job ${job.id} canceled`, () => call("POST", `/jobs/${id}/cancel`, {})) }, "Cancel job"),
    h("button", { type: "button", onclick: () => run(`Hold job ${job.id} (urgency 0)?`, `Job ${job.id} held`, () => call("POST", `/jobs/${id}/urgency`, { urgency: 0 })) }, "Hold"),
    h("button", { type: "button", onclick: () => run(`Release job ${job.id} (urgency 16)?`, `Job ${job.id} released`, () => call("POST", `/jobs/${id}/urgency`, { urgency: 16 })) }, "Release"),
    h("label", {}, h("span", {}, "Urgency"), urgency),
    h("button", { type: "button", onclick: () => run(`Set job ${job.id}'s urgency to ${urgency.value}?`, `Job ${job.id}: urgency ${urgency.value}`, () => call("POST", `/jobs/${id}/urgency`, { urgency: Number(urgency.value) })) }, "Set urgency"),
  );
}

function adSection(id: string): HTMLElement {
  const body = h("div", {}, "Loading…");
  void get<{ text?: string; json?: Record<string, unknown>; ad?: { text?: string } }>(`/jobs/${encodeURIComponent(id)}/jobad`).then(
    (r) => fill(body, h("pre", { id: "jobad" }, r.text ?? r.ad?.text ?? Object.entries(r.json ?? r).map(([k, v]) => `${k} = ${text(v)}`).join("\n"))),
    (e: ApiError) => fill(body, h("p", { class: "muted" }, `No job ad: ${e.message}`)),
  );
  return h("section", { "aria-labelledby": "ad-h" }, h("h2", { id: "ad-h" }, "Job ad"), body);
}
