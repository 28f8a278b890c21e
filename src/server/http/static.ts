/**
 * The dashboard's built files (dist/web, next to this module in the package), served on the
 * HTTP listener's non-API paths without a token: they hold no data. The table of what may be
 * served is built once at startup from a fixed layout, `/` → index.html and
 * `/assets/NAME` for each regular file directly in dist/web/assets; a request path is only
 * ever a key into that table, never joined onto a directory, so no request can name another
 * file (no traversal, no listing, no symlink followed out). Other paths get index.html (the
 * page's own client-side routes), except a missing `/assets/...`, which is a 404.
 * A rebuilt dashboard is served after the daemon restarts.
 */
import { createHash } from "node:crypto";
import { lstatSync, readdirSync, readFileSync } from "node:fs";
import type { IncomingMessage, ServerResponse } from "node:http";
import { hostname } from "node:os";
import { dirname, extname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

/** dist/src/server/http → dist/web: the build puts the dashboard beside the compiled daemon. */
export const DEFAULT_WEB_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../../../web");

/** Sent with every dashboard file: the page loads only its own scripts and styles. */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  "content-security-policy": "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; connect-src 'self'; frame-ancestors 'none'",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
};

const TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".mjs": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".json": "application/json",
  ".map": "application/json",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".ico": "image/x-icon",
  ".woff2": "font/woff2",
  ".txt": "text/plain; charset=utf-8",
  ".webmanifest": "application/manifest+json",
};

interface StaticFile {
  body: Buffer;
  type: string;
  etag: string;
  cache: string;
}

/** The served files, or why there are none. */
export interface StaticSite {
  /** Answers a GET or HEAD for a non-API path. */
  serve(req: IncomingMessage, res: ServerResponse, path: string): void;
  /** How many files the table holds (0: not built). */
  readonly files: number;
}

/** Reads the dashboard under `root` once; a missing or partial build serves a plain notice. */
export function staticSite(root: string = DEFAULT_WEB_ROOT): StaticSite {
  const table = buildTable(root);
  const index = table.get("/");
  return {
    files: table.size,
    serve(req, res, path) {
      const file = table.get(path) ?? (path.startsWith("/assets/") ? undefined : index);
      if (file === undefined) {
        const text = index === undefined ? "jobtap: the web dashboard was not built (`npm run build` writes dist/web); the REST API is at /api/v1.\n" : "not found\n";
        send(res, index === undefined ? 503 : 404, { "content-type": "text/plain; charset=utf-8", "cache-control": "no-store" }, Buffer.from(text), req.method === "HEAD");
        return;
      }
      if (req.headers["if-none-match"] === file.etag) {
        send(res, 304, { etag: file.etag, "cache-control": file.cache }, Buffer.alloc(0), true);
        return;
      }
      send(res, 200, { "content-type": file.type, etag: file.etag, "cache-control": file.cache }, file.body, req.method === "HEAD");
    },
  };
}

function buildTable(root: string): Map<string, StaticFile> {
  const table = new Map<string, StaticFile>();
  const index = readRegular(join(root, "index.html"));
  if (index === undefined) return table;
  // The page itself is never cached: a rebuilt dashboard's new asset names are seen at once.
  table.set("/", fileOf(index, ".html", "no-store"));
  let names: string[] = [];
  try {
    names = readdirSync(join(root, "assets"));
  } catch {
    // No assets directory: a page without scripts or styles.
  }
  for (const name of names) {
    const body = readRegular(join(root, "assets", name));
    if (body !== undefined) table.set(`/assets/${name}`, fileOf(body, extname(name), "no-cache"));
  }
  return table;
}

/** A regular file's bytes (never a symlink, directory or device), or undefined. */
function readRegular(path: string): Buffer | undefined {
  try {
    return lstatSync(path).isFile() ? readFileSync(path) : undefined;
  } catch {
    return undefined;
  }
}

function fileOf(body: Buffer, ext: string, cache: string): StaticFile {
  const etag = `"${createHash("sha256").update(body).digest("base64url").slice(0, 22)}"`;
  return { body, type: TYPES[ext.toLowerCase()] ?? "application/octet-stream", etag, cache };
}

function send(res: ServerResponse, status: number, headers: Record<string, string>, body: Buffer, head: boolean): void {
  res.writeHead(status, { ...SECURITY_HEADERS, ...headers, "content-length": String(body.length) });
  res.end(head ? undefined : body);
}

/** The listener's URL as a browser elsewhere reaches it: a wildcard address becomes this host's name. */
export function browsableUrl(url: string): string {
  return url.replace(/^(https?:\/\/)(0\.0\.0\.0|\[::\])(:\d+)$/, (_m, scheme: string, _host: string, port: string) => `${scheme}${hostname()}${port}`);
}
