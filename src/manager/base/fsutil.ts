/** File system helpers for the manager. */
import { existsSync, mkdirSync } from "node:fs";
import { dirname } from "node:path";

/**
 * mkdir -p without `recursive: true`, which can loop forever on some pseudo file systems
 * (e.g. a path under /proc); here every failure surfaces as an error.
 */
export function makeDirs(dir: string): void {
  if (existsSync(dir)) return;
  const parent = dirname(dir);
  if (parent !== dir) makeDirs(parent);
  mkdirSync(dir);
}
