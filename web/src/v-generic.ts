/**
 * Tables of records whose exact fields come from the daemon's plugins (slot ads, routes,
 * cron jobs): preferred columns first when present, then each record's full attributes in a
 * disclosure, all as text.
 */
import { h, table, text, type Child } from "./dom.js";

/** The records in a reply: an array, or the first array-valued field of an object. */
export function recordsOf(reply: unknown, ...keys: string[]): Array<Record<string, unknown>> {
  if (Array.isArray(reply)) return reply.map(asRecord);
  const o = reply as Record<string, unknown> | null;
  for (const k of keys) {
    const v = o?.[k];
    if (Array.isArray(v)) return v.map(asRecord);
    if (v && typeof v === "object") return Object.entries(v).map(([name, x]) => ({ name, ...asRecord(x) }));
  }
  return [];
}

function asRecord(x: unknown): Record<string, unknown> {
  return x && typeof x === "object" ? (x as Record<string, unknown>) : { value: x };
}

/** A field by any of its spellings (case-insensitive), looking inside `ad`/`json` too. */
export function field(r: Record<string, unknown>, ...names: string[]): unknown {
  const inner = [r, r.ad, r.json, (r.ad as { json?: unknown } | undefined)?.json].filter((x): x is Record<string, unknown> => !!x && typeof x === "object");
  for (const o of inner) {
    for (const n of names) {
      const key = Object.keys(o).find((k) => k.toLowerCase() === n.toLowerCase());
      if (key !== undefined && o[key] !== undefined) return o[key];
    }
  }
  return undefined;
}

/** A table with the given columns (each a label and the field names it may come from) and a details row. */
export function recordTable(caption: string, records: Array<Record<string, unknown>>, columns: Array<[string, ...string[]]>, id?: string): HTMLElement {
  const t = table(caption, [...columns.map((c) => c[0]), "All attributes"],
    records.map((r) => [...columns.map(([label, ...names]) => text(field(r, ...(names.length ? names : [label]))) as Child), details(r)]));
  if (id) t.id = id;
  return h("div", { class: "scroll" }, t);
}

function details(r: Record<string, unknown>): HTMLElement {
  return h("details", {}, h("summary", {}, "show"), h("pre", {}, flatText(r)));
}

/** A record as `Name = value` lines (a ClassAd's printed text when it carries one). */
export function flatText(r: Record<string, unknown>): string {
  const printed = field(r, "text");
  if (typeof printed === "string") return printed;
  return Object.entries(r).map(([k, v]) => `${k} = ${typeof v === "string" ? v : JSON.stringify(v, null, 1)}`).join("\n");
}
