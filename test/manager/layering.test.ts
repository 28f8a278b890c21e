/**
 * The import structure docs/ARCHITECTURE.md describes, read from the source text: no import
 * loop among src/manager's files, the manager's rooms import only downwards, and src's
 * folders import only downwards, and the plugin host and everything under it import no plugin
 * (plugins-builtin/index.ts, the list of shipped plugins, is handed to the host by the daemon,
 * the config check, `jobtap` and the test host). Every relative `import`/`export ... from`
 * counts, type-only ones included; for plugins-builtin, a dynamic `import()` counts too.
 */
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, normalize, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "../..");

/** src's folders (and top files), lowest first: each may import only itself and those before it. */
const SRC_LAYERS = [
  ["errors.ts", "version.ts", "worker-file.ts"],
  ["classad"],
  ["condor"],
  ["manager"],
  ["hooks"],
  ["plugins"],
  ["server"],
  ["cli"],
  ["index.ts", "plugin.ts", "testhost.ts"],
];

/** The highest of SRC_LAYERS that may not import plugins-builtin, in any way. */
const NO_PLUGINS_FROM = SRC_LAYERS.findIndex((l) => l.includes("plugins"));

/** src/manager's rooms, lowest first; "." is the files at its top (the manager and its operations). */
const MANAGER_ROOMS = ["base", "port", "store", "core", "scheduler", "ads", "engine", "exec", "policy", "."];

const DYNAMIC_IMPORT = /\bimport\(\s*["'](\.[^"']+)["']\s*\)/g;
const STATIC_IMPORT = /^\s*(?:import|export)\b[^"';]*?\bfrom\s*["'](\.[^"']+)["']|^\s*import\s*["'](\.[^"']+)["']/gm;

function tsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? tsFiles(join(dir, e.name)) : e.name.endsWith(".ts") ? [join(dir, e.name)] : [],
  );
}

/** Repo-relative file -> the repo-relative .ts files it imports statically (or, with
 *  `dynamic`, by `import()` too). */
function importGraph(dir: string, dynamic = false): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of tsFiles(join(ROOT, dir))) {
    const from = relative(ROOT, file);
    const text = readFileSync(file, "utf8");
    const found = [...text.matchAll(STATIC_IMPORT), ...(dynamic ? text.matchAll(DYNAMIC_IMPORT) : [])];
    const targets = found.map((m) =>
      normalize(join(dirname(from), (m[1] ?? m[2])!)).replace(/\.js$/, ".ts"),
    );
    graph.set(from, targets);
  }
  return graph;
}

/** The import loops of a graph: its strongly connected parts of more than one file. */
function loops(graph: Map<string, string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const out: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, index.size);
    low.set(v, index.get(v)!);
    stack.push(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (stack.includes(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const part: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      part.push(w);
    } while (w !== v);
    if (part.length > 1) out.push(part.sort());
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return out;
}

/** Every import from a lower layer to a higher one, as "from -> to". */
function upwardImports(graph: Map<string, string[]>, base: string, layers: string[][]): string[] {
  const layerOf = (file: string): number | undefined => {
    const rel = relative(base, file);
    if (rel.startsWith("..")) return undefined;
    const first = rel.includes("/") ? rel.split("/")[0]! : rel;
    const i = layers.findIndex((l) => l.includes(first) || (l.includes(".") && !rel.includes("/")));
    return i < 0 ? undefined : i;
  };
  const bad: string[] = [];
  for (const [from, targets] of graph) {
    const lf = layerOf(from);
    for (const to of targets) {
      const lt = layerOf(to);
      if (lf !== undefined && lt !== undefined && lt > lf) bad.push(`${from} -> ${to}`);
    }
  }
  return bad;
}

describe("import structure", () => {
  const src = importGraph("src");

  it("src/manager has no import loop", () => {
    const manager = new Map([...src].filter(([f]) => f.startsWith("src/manager/")));
    expect(loops(manager)).toEqual([]);
  });

  it("src/manager's rooms import only downwards", () => {
    expect(upwardImports(src, "src/manager", MANAGER_ROOMS.map((r) => [r]))).toEqual([]);
  });

  it("src's folders import only downwards", () => {
    expect(upwardImports(src, "src", SRC_LAYERS)).toEqual([]);
  });

  it("src/plugins and the layers under it import nothing from plugins-builtin", () => {
    const low = new Set(SRC_LAYERS.slice(0, NO_PLUGINS_FROM + 1).flat());
    const lower = (f: string): boolean => low.has(relative("src", f).split("/")[0]!);
    const bad = [...importGraph("src", true)]
      .filter(([f]) => lower(f))
      .flatMap(([f, ts]) => ts.filter((t) => t.startsWith("plugins-builtin/")).map((t) => `${f} -> ${t}`));
    expect(bad).toEqual([]);
  });
});
