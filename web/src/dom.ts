/**
 * Building DOM nodes. Every piece of text goes in through textContent or a text node, never
 * innerHTML, so markup in job names, arguments, ClassAd strings or hook output stays text.
 */

export type Child = Node | string | number | null | undefined | false;
export type Attrs = Record<string, string | number | boolean | undefined | EventListener>;

/** An element with attributes (`on*` keys become listeners) and children (strings as text nodes). */
export function h<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Attrs = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  setAttrs(el, attrs);
  append(el, children);
  return el;
}

const SVG_NS = "http://www.w3.org/2000/svg";

/** An SVG element (charts are built with DOM APIs, never from markup strings). */
export function s(tag: string, attrs: Record<string, string | number> = {}, ...children: Child[]): SVGElement {
  const el = document.createElementNS(SVG_NS, tag) as SVGElement;
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
  append(el, children);
  return el;
}

function setAttrs(el: Element, attrs: Attrs): void {
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === false) continue;
    if (typeof v === "function") el.addEventListener(k.slice(2), v);
    else if (v === true) el.setAttribute(k, "");
    else el.setAttribute(k, String(v));
  }
}

/** Appends children; strings and numbers become text nodes. */
export function append(el: Element, children: Child[]): void {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    el.append(typeof c === "object" ? c : document.createTextNode(String(c)));
  }
}

/** Replaces an element's content. */
export function fill(el: Element, ...children: Child[]): void {
  el.replaceChildren();
  append(el, children);
}

/** A table from header labels and rows of cells; `caption` labels it for screen readers. */
export function table(caption: string, head: string[], rows: Child[][]): HTMLTableElement {
  return h("table", {},
    h("caption", {}, caption),
    h("thead", {}, h("tr", {}, ...head.map((t) => h("th", { scope: "col" }, t)))),
    h("tbody", {}, ...rows.map((r) => h("tr", {}, ...r.map((c) => h("td", {}, c))))),
  );
}

/** A definition list of name/value pairs. */
export function pairs(entries: Array<[string, Child]>): HTMLDListElement {
  const dl = h("dl", { class: "pairs" });
  for (const [k, v] of entries) append(dl, [h("dt", {}, k), h("dd", {}, v)]);
  return dl;
}

/** Seconds since the epoch → local ISO-like time ("" when absent). */
export function when(t: unknown): string {
  if (typeof t !== "number" || !Number.isFinite(t) || t <= 0) return "";
  const d = new Date(t * 1000);
  const pad = (n: number) => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

/** A duration in seconds as "1h2m", "3m4s", "5.2s". */
export function duration(sec: number): string {
  if (!Number.isFinite(sec) || sec < 0) return "";
  if (sec < 60) return `${sec < 10 ? sec.toFixed(1) : Math.round(sec)}s`;
  const m = Math.floor(sec / 60);
  if (m < 60) return `${m}m${Math.round(sec % 60)}s`;
  return `${Math.floor(m / 60)}h${m % 60}m`;
}

/** Any JSON value as readable text (for generic cells). */
export function text(v: unknown): string {
  if (v === undefined || v === null) return "";
  if (typeof v === "string") return v;
  if (typeof v === "number" || typeof v === "boolean") return String(v);
  return JSON.stringify(v);
}
