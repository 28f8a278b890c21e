/**
 * The docs that list jobtap's shipped plugins (configuration.md, plugins.md, semantics.md)
 * name every one of them: each "shipped plugins (...)" list there holds exactly the names
 * of plugins-builtin/index.ts's SHIPPED table.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { SHIPPED } from "../../plugins-builtin/index.js";

const DOCS = ["configuration.md", "plugins.md", "semantics.md"];

/** The backquoted names of each "shipped plugins (...)" list in a doc. */
function shippedLists(doc: string): string[][] {
  const text = readFileSync(new URL(`../../docs/${doc}`, import.meta.url), "utf8");
  return [...text.matchAll(/shipped plugins\s*\(([^);]*)[);]/g)].map((m) => [...m[1]!.matchAll(/`([^`]+)`/g)].map((n) => n[1]!));
}

describe("docs: the shipped-plugin lists", () => {
  it.each(DOCS)("%s lists every shipped plugin wherever it lists them", (doc) => {
    const lists = shippedLists(doc);
    expect(lists.length).toBeGreaterThan(0);
    const names = SHIPPED.map((s) => s.name).sort();
    for (const list of lists) expect([...list].sort()).toEqual(names);
  });
});
