/**
 * The `[daemon]` keys of the HTTP listener (docs/configuration.md, "HTTP listener"):
 *
 *   http = "127.0.0.1:9311"          # off unless set; port 0 picks a free port (logged)
 *   tls-cert = "/etc/jobtap/cert.pem"  # with tls-key: HTTPS (node:https)
 *   tls-key = "/etc/jobtap/key.pem"
 *   metrics-public = false           # true: /metrics without a token
 *   http-rate-limit = 100            # requests per second per token (burst: twice that)
 *   http-connections = 1000          # open TCP connections at most
 *   http-headers-timeout = "10s"     # a client must send its headers within this
 *
 * Read here so config.ts only hands over the `[daemon]` table and collects the errors.
 */
import { readFileSync } from "node:fs";
import { parseFSD } from "../../manager/base/fsd.js";

/** The listener's settings, defaults filled in. */
export interface HttpSettings {
  host: string;
  port: number;
  tls?: { cert: string; key: string; certPath: string };
  metricsPublic: boolean;
  /** Requests per second one token may make on average. */
  rateLimit: number;
  maxConnections: number;
  headersTimeoutMs: number;
}

/** The `[daemon]` keys read here. */
export const HTTP_KEYS = ["http", "tls-cert", "tls-key", "metrics-public", "http-rate-limit", "http-connections", "http-headers-timeout"];

export const HTTP_DEFAULTS = { rateLimit: 100, maxConnections: 1000, headersTimeoutMs: 10_000 };

type Problem = (where: string, why: string) => void;

/**
 * The listener's settings from the `[daemon]` table, or undefined when `http` is unset.
 * Every problem goes to `problem` with its TOML path; certificate files are read now, so a
 * missing or unreadable one stops `config check` and the daemon alike.
 */
export function readHttpSettings(daemon: Record<string, unknown>, problem: Problem): HttpSettings | undefined {
  const address = daemon.http;
  const tlsCert = pathKey(daemon, "tls-cert", problem);
  const tlsKey = pathKey(daemon, "tls-key", problem);
  if (address === undefined) {
    for (const key of HTTP_KEYS.slice(1)) if (daemon[key] !== undefined) problem(`[daemon].${key}`, 'needs [daemon].http (such as "127.0.0.1:9311")');
    return undefined;
  }
  const hostPort = parseAddress(address, problem);
  if ((tlsCert === undefined) !== (tlsKey === undefined)) problem(`[daemon].${tlsCert === undefined ? "tls-cert" : "tls-key"}`, "tls-cert and tls-key go together");
  const s: HttpSettings = { ...(hostPort ?? { host: "127.0.0.1", port: 0 }), metricsPublic: false, ...HTTP_DEFAULTS };
  const cert = tlsCert === undefined ? undefined : readPem(tlsCert, "tls-cert", problem);
  const key = tlsKey === undefined ? undefined : readPem(tlsKey, "tls-key", problem);
  if (cert !== undefined && key !== undefined) s.tls = { cert, key, certPath: tlsCert as string };
  const pub = daemon["metrics-public"];
  if (typeof pub === "boolean") s.metricsPublic = pub;
  else if (pub !== undefined) problem("[daemon].metrics-public", `must be true or false, got ${JSON.stringify(pub)}`);
  const rate = daemon["http-rate-limit"];
  if (typeof rate === "number" && rate > 0 && Number.isFinite(rate)) s.rateLimit = rate;
  else if (rate !== undefined) problem("[daemon].http-rate-limit", `must be a positive number of requests per second, got ${JSON.stringify(rate)}`);
  const conns = daemon["http-connections"];
  if (Number.isSafeInteger(conns) && (conns as number) >= 1) s.maxConnections = conns as number;
  else if (conns !== undefined) problem("[daemon].http-connections", `must be a positive integer, got ${JSON.stringify(conns)}`);
  const timeout = daemon["http-headers-timeout"];
  if (timeout !== undefined) {
    try {
      const ms = parseFSD(timeout as string, "[daemon].http-headers-timeout") * 1000;
      if (ms < 100) problem("[daemon].http-headers-timeout", "must be at least 0.1s");
      else s.headersTimeoutMs = ms;
    } catch (e) {
      problem("[daemon].http-headers-timeout", (e as Error).message.replace("[daemon].http-headers-timeout: ", ""));
    }
  }
  return s;
}

function pathKey(daemon: Record<string, unknown>, key: string, problem: Problem): string | undefined {
  const v = daemon[key];
  if (v === undefined) return undefined;
  if (typeof v === "string" && v !== "") return v;
  problem(`[daemon].${key}`, "must be a non-empty path string");
  return undefined;
}

/** `HOST:PORT` (an IPv6 host in brackets), port 0..65535. */
function parseAddress(v: unknown, problem: Problem): { host: string; port: number } | undefined {
  const m = typeof v === "string" ? /^(?:\[([0-9a-fA-F:.]+)\]|([^:[\]\s]+)):(\d{1,5})$/.exec(v) : null;
  const port = m ? Number(m[3]) : NaN;
  if (!m || port > 65535) {
    problem("[daemon].http", `must be "HOST:PORT" such as "127.0.0.1:9311" (port 0 picks a free one), got ${JSON.stringify(v)}`);
    return undefined;
  }
  return { host: (m[1] ?? m[2]) as string, port };
}

function readPem(path: string, key: string, problem: Problem): string | undefined {
  try {
    const text = readFileSync(path, "utf8");
    if (!text.includes("-----BEGIN ")) problem(`[daemon].${key}`, `${path} is not a PEM file`);
    return text;
  } catch (e) {
    problem(`[daemon].${key}`, `cannot read ${path}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
    return undefined;
  }
}
