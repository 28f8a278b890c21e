#!/usr/bin/env node
// The dashboard's static files: tsc has compiled web/src into dist/web/assets; this copies
// web/index.html to dist/web/ and web/style.css to dist/web/assets/ (the daemon serves `/`
// and a flat /assets/NAME table, docs/dashboard.md), and drops assets no longer built.
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const web = join(root, "web");
const out = join(root, "dist", "web");
const assets = join(out, "assets");
mkdirSync(assets, { recursive: true });
const sources = new Set(readdirSync(join(web, "src")).filter((f) => f.endsWith(".ts")).map((f) => f.replace(/\.ts$/, ".js")));
// modulepreload for every module: the browser fetches them all at once instead of
// discovering the import graph one level per round trip.
const preload = [...sources].sort().map((f) => `  <link rel="modulepreload" href="/assets/${f}">`).join("\n");
const html = readFileSync(join(web, "index.html"), "utf8").replace("  <!-- modulepreload -->", preload);
writeFileSync(join(out, "index.html"), html);
copyFileSync(join(web, "style.css"), join(assets, "style.css"));
for (const f of readdirSync(assets)) {
  if (f !== "style.css" && !sources.has(f) && existsSync(join(assets, f))) rmSync(join(assets, f), { recursive: true, force: true });
}
