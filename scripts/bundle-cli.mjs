#!/usr/bin/env node
// `npm run build`'s second step: dist/src/cli/main.bundle.cjs, the quick commands' start-up
// path as one CommonJS file (bin/jobtap's fast path; docs/cli.md "Start-up time").
//
// Why: a `jobtap submit` spends most of its own time before it sends anything. Starting
// Node's ESM loader and reading, resolving and compiling ~20 ES modules one by one cost
// about a third of a bare `node -e ""`; one CommonJS file loaded by require() costs little.
//
// What: dist/src/cli/main.js with `submit` and `jobs` (and what they import statically)
// inside; every other dynamic import() stays one (the other commands, --classad's parser,
// --wait, --progress) and loads the ES module of dist/ beside the bundle when asked for.
// main.bundle.json lists its inputs so bin/jobtap can tell when a later `tsc` alone has
// made it stale and then take the ES modules instead.
import { build } from "esbuild";
import { writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { dirname, join, relative } from "node:path";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const cli = join(root, "dist", "src", "cli");
/** The subcommands bundled in: the ones a user (or a script) waits on most. */
const BUNDLED = new Set(["./submit.js", "./jobs.js"]);

const lazy = {
  name: "lazy-imports-stay-esm",
  setup(b) {
    b.onResolve({ filter: /.*/ }, (a) => (a.kind === "dynamic-import" && !BUNDLED.has(a.path) ? { path: a.path, external: true } : undefined));
  },
};

const result = await build({
  entryPoints: [join(cli, "main.js")],
  outfile: join(cli, "main.bundle.cjs"),
  bundle: true,
  platform: "node",
  format: "cjs",
  target: "node20",
  packages: "external",
  absWorkingDir: root,
  metafile: true,
  logLevel: "silent",
  plugins: [lazy],
  write: false,
});
// A warning means the CommonJS copy would differ from the ES modules (import.meta is the
// usual one): better no build than a CLI that behaves differently on its fast path.
if (result.warnings.length > 0) {
  for (const w of result.warnings) console.error(`bundle-cli: ${w.location?.file ?? ""}:${w.location?.line ?? ""}: ${w.text}`);
  process.exit(1);
}
const inputs = Object.keys(result.metafile.inputs).map((f) => relative(cli, join(root, f)));
// The inputs first, the bundle last: a bundle is never newer than the list that checks it.
writeFileSync(join(cli, "main.bundle.json"), JSON.stringify({ inputs }) + "\n");
writeFileSync(join(cli, "main.bundle.cjs"), result.outputFiles[0].text);
