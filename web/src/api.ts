/**
 * The dashboard's only way to the daemon: same-origin fetch under /api/v1 with the session's
 * bearer token (kept in sessionStorage, so it dies with the tab and no cookie ever carries
 * it: state-changing calls cannot be forged cross-site). Server-Sent Events are read from a
 * fetch body, because EventSource cannot send an Authorization header.
 */

const KEY = "jobtap.token";

/** The API's error body as a value: `status` 0 is a network failure. */
export class ApiError extends Error {
  constructor(readonly status: number, readonly code: string, message: string) {
    super(message);
  }
}

/** Who the session belongs to, from /api/v1/login or /api/v1/whoami. */
export interface Session {
  user: string;
  userid?: number;
  owner: boolean;
  scope?: string;
  expires?: number | string;
}

/** Called on any 401, so the page can switch to the login view wherever the call came from. */
let onUnauthorized: (why: string) => void = () => {};

/** Sets what happens when the token is missing, expired or revoked. */
export function whenUnauthorized(f: (why: string) => void): void {
  onUnauthorized = f;
}

export function token(): string | null {
  return sessionStorage.getItem(KEY);
}

export function forget(): void {
  sessionStorage.removeItem(KEY);
}

/** Exchanges a one-time `#login=` code for a session token and keeps the token. */
export async function login(code: string): Promise<Session> {
  const r = await fetch("/api/v1/login", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ code }),
  });
  const body = await jsonOf(r);
  if (!r.ok) throw errorOf(r.status, body);
  const { token: t, ...session } = body as Session & { token: string };
  sessionStorage.setItem(KEY, t);
  return session;
}

/** A JSON call under /api/v1; throws ApiError (after calling the 401 handler on 401). */
export async function call<T = any>(verb: string, path: string, body?: unknown): Promise<T> {
  const t = token();
  if (!t) {
    onUnauthorized("no session");
    throw new ApiError(401, "NOT_AUTHENTICATED", "no session");
  }
  let r: Response;
  try {
    r = await fetch(`/api/v1${path}`, {
      method: verb,
      headers: { authorization: `Bearer ${t}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  } catch (e) {
    throw new ApiError(0, "NETWORK", `the daemon did not answer (${(e as Error).message})`);
  }
  const json = await jsonOf(r);
  if (r.status === 401) {
    forget();
    onUnauthorized(errorOf(401, json).message);
  }
  if (!r.ok) throw errorOf(r.status, json);
  return json as T;
}

export const get = <T = any>(path: string) => call<T>("GET", path);

async function jsonOf(r: Response): Promise<unknown> {
  try {
    return await r.json();
  } catch {
    return undefined;
  }
}

function errorOf(status: number, body: unknown): ApiError {
  const e = (body as { error?: { code?: string; message?: string } } | undefined)?.error;
  return new ApiError(status, e?.code ?? `HTTP_${status}`, e?.message ?? `HTTP ${status}`);
}

/** A live Server-Sent Events stream; `close` ends it. */
export interface Stream {
  close(): void;
  done: Promise<void>;
}

/**
 * Follows an SSE route: `onData` gets each `data:` payload parsed as JSON, `onEnd` the
 * `event: end` (or the stream closing). Errors reach `onError` once.
 */
export function follow(path: string, onData: (d: any) => void, onEnd: () => void = () => {}, onError: (e: ApiError) => void = () => {}): Stream {
  const ctl = new AbortController();
  const done = (async () => {
    const t = token();
    if (!t) return onUnauthorized("no session");
    const r = await fetch(`/api/v1${path}`, { headers: { authorization: `Bearer ${t}`, accept: "text/event-stream" }, signal: ctl.signal });
    if (!r.ok || !r.body) {
      const err = errorOf(r.status, await jsonOf(r));
      if (r.status === 401) onUnauthorized(err.message);
      return onError(err);
    }
    await readEvents(r.body, onData, onEnd);
  })().catch((e: Error) => {
    if (e.name !== "AbortError") onError(new ApiError(0, "NETWORK", e.message));
  });
  return { close: () => ctl.abort(), done };
}

async function readEvents(body: ReadableStream<Uint8Array>, onData: (d: any) => void, onEnd: () => void): Promise<void> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buf = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return onEnd();
    buf += decoder.decode(value, { stream: true });
    let cut: number;
    while ((cut = buf.indexOf("\n\n")) >= 0) {
      const block = buf.slice(0, cut);
      buf = buf.slice(cut + 2);
      if (dispatch(block, onData)) return onEnd();
    }
  }
}

/** Handles one SSE block; true at `event: end`. */
function dispatch(block: string, onData: (d: any) => void): boolean {
  let event = "message";
  const data: string[] = [];
  for (const line of block.split("\n")) {
    if (line.startsWith("event:")) event = line.slice(6).trim();
    else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
  }
  if (event === "end") return true;
  if (data.length === 0 || event === "error") return false;
  try {
    onData(JSON.parse(data.join("\n")));
  } catch {
    // A line that is not JSON is not ours to show.
  }
  return false;
}
