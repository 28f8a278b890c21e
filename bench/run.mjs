#!/usr/bin/env node
// `npm run bench -- NAME [ARGS...]`: runs the compiled bench/NAME.ts (dist/bench/NAME.js).
// Each bench prints progress to stderr and, as its last line of stdout, one JSON object.
import { readdirSync } from "node:fs";
import { fileURLToPath, pathToFileURL } from "node:url";
import { dirname, join } from "node:path";

const here = dirname(fileURLToPath(import.meta.url));
const compiled = join(here, "..", "dist", "bench");
const [name, ...args] = process.argv.slice(2);
const available = readdirSync(compiled).filter((f) => f.endsWith(".js")).map((f) => f.slice(0, -3));
if (!name || !available.includes(name)) {
  console.error(`usage: npm run bench -- NAME [ARGS...]\navailable: ${available.join(", ")}`);
  process.exit(2);
}
const mod = await import(pathToFileURL(join(compiled, `${name}.js`)).href);
if (typeof mod.main !== "function") {
  console.error(`bench ${name}: module has no exported main(args)`);
  process.exit(2);
}
await mod.main(args);
