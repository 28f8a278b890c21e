/**
 * A request's body, read and checked before any handler sees it: a size cap (tighter for a
 * caller that proved nobody, server.ts), and a nesting limit checked on the text before
 * JSON.parse, since every walk over a parsed request (jobspec checks, copies) recurses.
 */
import type { IncomingMessage } from "node:http";
import { ErrorCode } from "../errors.js";
import type { JobtapErrorData } from "../errors.js";

export type BodyFailure = { status: number; message: string };

/** The most body a request that proves nobody may send (ping and auth need a few bytes). */
export const PREAUTH_MAX_BYTES = 4096;

/**
 * Reads the body up to `maxBytes`. Past the cap it answers at once but keeps discarding what
 * the peer still sends (so a well-behaved client reads the 413 instead of a broken pipe), up
 * to a bound beyond which it stops reading; the connection is closed once the 413 is out.
 */
export function readBody(req: IncomingMessage, maxBytes: number): Promise<string | BodyFailure> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let over = false;
    const overflow = (total: number) => {
      over = true;
      chunks.length = 0;
      resolve({ status: 413, message: tooLarge(total, maxBytes) });
    };
    const declared = Number(req.headers["content-length"] ?? "0");
    if (declared > maxBytes) overflow(declared);
    req.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (over) {
        // Past the bound, stop reading: the connection is closed once the answer is out.
        if (size > DISCARD_FACTOR * maxBytes) req.pause();
        return;
      }
      if (size > maxBytes) overflow(size);
      else chunks.push(chunk);
    });
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", (e) => resolve({ status: 400, message: `reading request: ${e.message}` }));
    // A peer that leaves before the end of its body (resolving twice is harmless).
    req.on("close", () => {
      if (!req.complete) resolve({ status: 400, message: HUNG_UP });
    });
  });
}

export const HUNG_UP = "a peer hung up before finishing its request";

/** How much of an oversized body is discarded before the connection is cut. */
const DISCARD_FACTOR = 4;

function tooLarge(size: number, maxBytes: number): string {
  return `request of ${size} bytes exceeds the limit of ${maxBytes} bytes`;
}

/** The request body as a JSON object, or the protocol error saying why not. */
export function parseParams(method: string, body: string): { value: object } | { error: JobtapErrorData } {
  const depth = jsonDepth(body);
  if (depth > MAX_JSON_DEPTH) {
    return { error: protocolError(`${method}: request body nests more than ${MAX_JSON_DEPTH} levels deep (arrays and objects); refused`) };
  }
  let params: unknown;
  try {
    params = JSON.parse(body === "" ? "{}" : body);
  } catch (e) {
    return { error: protocolError(`${method}: request body is not JSON: ${(e as Error).message}`) };
  }
  if (typeof params !== "object" || params === null || Array.isArray(params)) {
    return { error: protocolError(`${method}: request body must be a JSON object`) };
  }
  return { value: params };
}

/** Deepest nesting of arrays and objects a request may carry (a jobspec needs about ten). */
export const MAX_JSON_DEPTH = 256;

/**
 * How deep `text` nests arrays and objects, counted without parsing (brackets inside
 * strings skipped): a 100,000-deep body would overflow the stack of every recursive walk
 * that follows JSON.parse.
 */
function jsonDepth(text: string): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > deepest) deepest = depth;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return deepest;
}

function protocolError(message: string): JobtapErrorData {
  return { code: ErrorCode.PROTOCOL, message };
}
