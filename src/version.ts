/**
 * jobtap's own version, read from its package.json (the same for the daemon's `ping` and
 * `jobtap --version`).
 */
import { readFileSync } from "node:fs";

/** The installed package's version, or "unknown" if package.json cannot be found. */
export function packageVersion(): string {
  for (const rel of ["../../package.json", "../package.json"]) {
    try {
      const pkg = JSON.parse(readFileSync(new URL(rel, import.meta.url), "utf8")) as { name?: string; version?: string };
      if (pkg.name === "jobtap" && pkg.version) return pkg.version;
    } catch {
      // not at this level (dist/src/ vs src/)
    }
  }
  return "unknown";
}
