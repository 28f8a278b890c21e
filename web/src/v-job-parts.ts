/** The job view's sections that load on their own: why, and the output tails. */
import { ApiError, get } from "./api.js";
import { fill, h, text } from "./dom.js";
import type { JobRow } from "./v-queue.js";

/** A job as `GET /jobs/{id}` gives it: a queue row with how it ended. */
export interface JobView extends JobRow {
  returncode?: number;
  exception?: { type: string; severity: number; note: string };
}

interface Reason {
  layer: string;
  source?: string;
  code: string;
  text: string;
}

/** `job why`: every layer's reasons, in the API's order. */
export function whySection(id: string): HTMLElement {
  const body = h("div", {}, "Loading…");
  void get<{ reasons: Reason[] }>(`/jobs/${encodeURIComponent(id)}/why`).then(
    (r) => fill(body, r.reasons.length === 0 ? h("p", {}, "No reasons given.") : h("ul", { id: "why" }, ...r.reasons.map((x) => h("li", {}, h("span", { class: "tag" }, x.source ?? x.layer), " ", x.text)))),
    (e: ApiError) => fill(body, h("p", { class: "muted" }, `Unavailable: ${e.message}`)),
  );
  return h("section", { "aria-labelledby": "why-h" }, h("h2", { id: "why-h" }, "Why"), body);
}

/** The last 16 KiB of stdout and stderr; a refusal (not the job's user) is said as such. */
export function outputSection(id: string): HTMLElement {
  const body = h("div", {});
  for (const stream of ["stdout", "stderr"]) {
    const pre = h("pre", { id: `out-${stream}`, class: "output" }, "Loading…");
    body.append(h("h3", {}, stream), pre);
    void get<unknown>(`/jobs/${encodeURIComponent(id)}/output?stream=${stream}&tail=16384`).then(
      (r) => {
        const o = r as { data?: string; text?: string; tail?: string; content?: string };
        pre.textContent = (o.data ?? o.text ?? o.tail ?? o.content ?? text(r)) || "(empty)";
      },
      (e: ApiError) => {
        pre.textContent = e.status === 403 ? "Only the job's own user sees its output." : `Unavailable: ${e.message}`;
        pre.classList.add("muted");
      },
    );
  }
  return h("section", { "aria-labelledby": "out-h" }, h("h2", { id: "out-h" }, "Output"), body);
}
