/**
 * Plugins (owner only; the API refuses guests too): the loaded list with each plugin's query
 * answer, load and remove (confirmed), and the live plugin trace.
 */
import { call, follow, get, type Session, type Stream } from "./api.js";
import { fill, h, table, text } from "./dom.js";
import { act, errorPage, labelled } from "./ui.js";

interface PluginView {
  name: string;
  path: string;
  isolated?: string;
  reason?: string;
}

/** Renders the plugins view; returns its cleanup (the trace stream). */
export function renderPlugins(main: HTMLElement, _session: Session): () => void {
  const list = h("div", {}, "Loading…");
  const query = h("pre", { id: "plugin-query", class: "output", "aria-live": "polite" }, "Pick a plugin's Query to see its answer.");
  let trace: Stream | undefined;
  const load = async () => {
    try {
      const { plugins } = await get<{ plugins: PluginView[] }>("/plugins?all=1");
      fill(list, table("Loaded plugins", ["Name", "Path", "Isolated", "Actions"], plugins.map((p) => [p.name, p.path, p.isolated ? `${p.isolated}${p.reason ? `: ${p.reason}` : ""}` : "", h("span", { class: "buttons" },
        h("button", { type: "button", onclick: () => void showQuery(p.name) }, `Query ${p.name}`),
        h("button", { type: "button", class: "danger", onclick: () => void act(`Remove plugin ${p.name}?`, `Plugin ${p.name} removed`, () => call("DELETE", `/plugins/${encodeURIComponent(p.name)}`)).then((ok) => { if (ok) void load(); }) }, `Remove ${p.name}`))])));
    } catch (e) {
      errorPage(main, e, "The plugins view");
    }
  };
  const showQuery = async (name: string) => {
    query.textContent = "Loading…";
    try {
      query.textContent = JSON.stringify(await get(`/plugins/${encodeURIComponent(name)}`), null, 2);
    } catch (e) {
      query.textContent = `Query failed: ${(e as Error).message}`;
    }
  };
  const path = h("input", { name: "path", placeholder: "/path/to/plugin.js or builtin name", class: "wide", required: true });
  const loadForm = h("form", { class: "filters", "aria-label": "Load a plugin" }, labelled("Plugin path", path), h("button", { type: "submit" }, "Load"));
  loadForm.addEventListener("submit", (ev) => {
    ev.preventDefault();
    void act(`Load plugin ${path.value}?`, `Plugin ${path.value} loaded`, () => call("POST", "/plugins", { path: path.value })).then((ok) => { if (ok) void load(); });
  });
  const lines = h("ol", { id: "trace", class: "trace" });
  const toggle = h("button", { type: "button", "aria-pressed": "false" }, "Start trace");
  toggle.addEventListener("click", () => {
    if (trace) {
      trace.close();
      trace = undefined;
      toggle.textContent = "Start trace";
      toggle.setAttribute("aria-pressed", "false");
      return;
    }
    toggle.textContent = "Stop trace";
    toggle.setAttribute("aria-pressed", "true");
    trace = follow("/trace?follow=1", (d) => {
      lines.append(h("li", {}, typeof d === "string" ? d : text(d)));
      while (lines.childElementCount > 500) lines.firstElementChild?.remove();
    }, undefined, (e) => lines.append(h("li", { class: "error" }, `trace: ${e.message}`)));
  });
  fill(main,
    h("h1", {}, "Plugins"), list,
    h("h2", {}, "Query answer"), query,
    h("h2", {}, "Load a plugin"), loadForm,
    h("h2", {}, "Live trace"), h("p", {}, toggle), lines,
  );
  void load();
  return () => trace?.close();
}
