/**
 * Where a worker thread's compiled module is: beside the calling module when it runs from
 * the build (dist/src/...), and at the same place under dist/ when it runs from its
 * TypeScript source (the tests), since a worker thread loads JavaScript only.
 */
import { existsSync } from "node:fs";
import { dirname, join, sep } from "node:path";
import { fileURLToPath } from "node:url";

/** The compiled `file` in the caller's directory (`moduleUrl`: its import.meta.url); throws
 *  `missing(path)` if it has not been built. */
export function compiledSibling(moduleUrl: string, file: string, missing: (path: string) => Error): string {
  const here = fileURLToPath(moduleUrl);
  let dir = dirname(here);
  if (!here.endsWith(".js")) {
    const at = `${dir}${sep}`.lastIndexOf(`${sep}src${sep}`);
    dir = join(dir.slice(0, at), "dist", dir.slice(at + 1));
  }
  const path = join(dir, file);
  if (!existsSync(path)) throw missing(path);
  return path;
}
