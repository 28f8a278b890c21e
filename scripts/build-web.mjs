#!/usr/bin/env node
// The dashboard's static files: tsc has compiled web/src into dist/web/assets; this copies
// web/index.html to dist/web/ and web/style.css to dist/web/assets/ (the daemon serves `/`
// and a flat /assets/NAME table, docs/dashboard.md), and drops assets no longer built.
import { copyFileSync, existsSync, mkdirSync, readdirSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const web = join(root, "web");
const out = join(root, "dist", "web");
const assets = join(out, "assets");
mkdirSync(assets, { recursive: true });
copyFileSync(join(web, "index.html"), join(out, "index.html"));
copyFileSync(join(web, "style.css"), join(assets, "style.css"));
const sources = new Set(readdirSync(join(web, "src")).filter((f) => f.endsWith(".ts")).map((f) => f.replace(/\.ts$/, ".js")));
for (const f of readdirSync(assets)) {
  if (f !== "style.css" && !sources.has(f) && existsSync(join(assets, f))) rmSync(join(assets, f), { recursive: true, force: true });
}
