/**
 * The queue: one keyset page of jobs at a time (the API lists newest first with a cursor), so
 * 100,000 jobs cost the browser what 100 do; filters by state, user, queue and constraint;
 * sorting within the page; live state changes from /api/v1/events patched into the rows shown.
 */
import { follow, get, type Session, type Stream } from "./api.js";
import { fill, h, when } from "./dom.js";
import { labelled, status } from "./ui.js";
import { queuesPanel } from "./v-queues.js";

export interface JobRow {
  id: string;
  userid: number;
  name: string;
  queue?: string;
  state: string;
  urgency: number;
  priority: number;
  t_submit: number;
  result?: string;
}

const STATES = ["active", "pending", "running", "inactive", "completed", "failed", "canceled", "timeout", "DEPEND", "PRIORITY", "SCHED", "RUN", "CLEANUP"];
const SORTS: Record<string, (a: JobRow, b: JobRow) => number> = {
  "newest first": () => 0,
  "oldest first": (a, b) => a.t_submit - b.t_submit,
  name: (a, b) => a.name.localeCompare(b.name),
  state: (a, b) => a.state.localeCompare(b.state),
  "priority (high first)": (a, b) => b.priority - a.priority,
  user: (a, b) => a.userid - b.userid,
};

/** Filters survive leaving the view and coming back (not a reload). */
const filters = { state: "active", user: "", queue: "", constraint: "", limit: "100", sort: "newest first" };

/** Renders the queue view; returns its cleanup (the live stream). */
export function renderQueue(main: HTMLElement, session: Session): () => void {
  const rows = new Map<string, { job: JobRow; tr: HTMLTableRowElement }>();
  const cursors: string[] = [""];
  let page = 0;
  let next: string | undefined;
  let missed = 0;
  const body = h("tbody");
  const pager = h("div", { class: "pager" });
  const live = h("p", { class: "muted", id: "live", "aria-live": "polite" });
  const form = filterForm(() => {
    cursors.length = 1;
    page = 0;
    void load();
  });

  async function load(): Promise<void> {
    status("Loading jobs…");
    try {
      const q = new URLSearchParams({ state: filters.state, limit: filters.limit });
      if (filters.user) q.set("user", filters.user);
      if (filters.constraint) q.set("constraint", filters.constraint);
      if (cursors[page]) q.set("cursor", cursors[page] as string);
      const r = await get<{ jobs: JobRow[]; next_cursor?: string }>(`/jobs?${q}`);
      next = r.next_cursor;
      show(r.jobs);
      status(`${rows.size} jobs shown`);
    } catch (e) {
      status(`Could not list jobs: ${(e as Error).message}`);
      fill(body, h("tr", {}, h("td", { colspan: 8, class: "error" }, (e as Error).message)));
    }
  }

  function show(jobs: JobRow[]): void {
    rows.clear();
    missed = 0;
    live.textContent = "";
    const shown = jobs.filter((j) => !filters.queue || (j.queue ?? "") === filters.queue);
    const sorted = [...shown].sort(SORTS[filters.sort] ?? (() => 0));
    const trs = sorted.map((j) => {
      const tr = jobRow(j);
      rows.set(j.id, { job: j, tr });
      return tr;
    });
    fill(body, ...trs);
    if (trs.length === 0) fill(body, h("tr", {}, h("td", { colspan: 8 }, "No jobs match.")));
    renderPager();
  }

  function renderPager(): void {
    fill(pager,
      h("button", { type: "button", disabled: page === 0, onclick: () => { page--; void load(); } }, "◀ Newer"),
      h("span", {}, ` Page ${page + 1} `),
      h("button", { type: "button", disabled: next === undefined, onclick: () => { cursors[page + 1] = next as string; page++; void load(); } }, "Older ▶"),
    );
  }

  /** A batch of state changes: rows on the page change in place, others are counted. */
  function onChanges(msg: unknown): void {
    for (const c of changesOf(msg)) {
      const row = rows.get(c.id);
      if (!row) {
        missed++;
        continue;
      }
      row.job.state = c.state;
      const cell = row.tr.cells[5];
      if (cell) cell.textContent = c.state;
      row.tr.dataset.state = c.state;
    }
    if (missed > 0) fill(live, `${missed} changes to jobs not on this page. `, h("button", { type: "button", onclick: () => void load() }, "Refresh"));
  }

  fill(main,
    h("h1", {}, "Queue"),
    form,
    h("div", { class: "scroll" }, h("table", { id: "jobs" },
      h("caption", {}, "Jobs, one page at a time"),
      h("thead", {}, h("tr", {}, ...["ID", "User", "Name", "Queue", "Priority", "State", "Submitted", "Result"].map((t) => h("th", { scope: "col" }, t)))),
      body)),
    pager,
    live,
    queuesPanel(session),
  );
  void load();
  const stream: Stream = follow("/events?follow=1", onChanges);
  return () => stream.close();
}

function jobRow(j: JobRow): HTMLTableRowElement {
  const tr = h("tr", { "data-id": j.id, "data-state": j.state },
    h("td", {}, h("a", { href: `#/job/${encodeURIComponent(j.id)}` }, j.id)),
    h("td", {}, String(j.userid)),
    h("td", { class: "name" }, j.name),
    h("td", {}, j.queue ?? ""),
    h("td", {}, String(j.priority)),
    h("td", {}, j.state),
    h("td", {}, when(j.t_submit)),
    h("td", {}, j.result ?? ""),
  );
  return tr;
}

/** The events stream's message as a list of {id, state}: an array, or an object holding one. */
export function changesOf(msg: unknown): Array<{ id: string; state: string }> {
  const m = msg as { changes?: unknown; events?: unknown } | unknown[];
  const list = Array.isArray(m) ? m : Array.isArray(m?.changes) ? m.changes : Array.isArray(m?.events) ? m.events : [m];
  return (list as Array<{ id?: unknown; state?: unknown }>).filter((c) => typeof c?.id === "string" && typeof c?.state === "string") as Array<{ id: string; state: string }>;
}

function filterForm(apply: () => void): HTMLFormElement {
  const state = h("select", { name: "state" }, ...STATES.map((s) => h("option", { value: s, selected: s === filters.state }, s)));
  const sort = h("select", { name: "sort" }, ...Object.keys(SORTS).map((s) => h("option", { value: s, selected: s === filters.sort }, s)));
  const limit = h("select", { name: "limit" }, ...["50", "100", "500", "1000"].map((s) => h("option", { value: s, selected: s === filters.limit }, s)));
  const user = h("input", { name: "user", value: filters.user, placeholder: "name or uid", autocomplete: "off" });
  const queue = h("input", { name: "queue", value: filters.queue, placeholder: "any", autocomplete: "off" });
  const constraint = h("input", { name: "constraint", value: filters.constraint, placeholder: 'e.g. RequestCpus > 1', autocomplete: "off", class: "wide" });
  const form = h("form", { class: "filters", "aria-label": "Filter jobs" },
    labelled("State", state), labelled("User", user), labelled("Queue (this page)", queue), labelled("Constraint", constraint),
    labelled("Sort", sort), labelled("Per page", limit), h("button", { type: "submit" }, "Apply"));
  form.addEventListener("submit", (ev) => {
    ev.preventDefault();
    Object.assign(filters, { state: state.value, sort: sort.value, limit: limit.value, user: user.value.trim(), queue: queue.value.trim(), constraint: constraint.value.trim() });
    apply();
  });
  return form;
}

