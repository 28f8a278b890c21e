/**
 * `npm run bench -- web [--inactive N] [--held H] [--rate EVENTS_PER_S] [--seconds S]`: the
 * dashboard in headless Debian chromium (playwright-core) over a big store.
 *
 * A daemon (its own process, HTTP on a free 127.0.0.1 port) gets N jobs (default 90,000)
 * run to INACTIVE by the test executor and H more (default 10,000) held, so the store holds
 * 100,000 and the queue view's default page (active jobs) lists held ones. Measured:
 * - queue_fmp_ms: a reload of the logged-in queue view until its first job row is in the
 *   DOM (the page, its modules, /whoami and the first keyset page), median of 5;
 * - job_view_ms: from setting `#/job/ID` until the job's timeline table is drawn, median of
 *   5 different jobs;
 * - the live feed: jobs submitted for `--seconds` (default 30) at a pace that makes about
 *   `--rate` (default 1,000) state changes a second; the page counts the changes to jobs not
 *   on its page. events_seen_by_page against events_sent (counted by this process's own
 *   /api/v1/events client) says whether the page kept up; heap_start/end_kib (JS heap used
 *   after a forced GC, via CDP) whether it grew.
 * Prints one JSON object as the last stdout line.
 */
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium, type Page } from "playwright-core";
import { connectDaemon, type DaemonClient } from "../src/server/client.js";
import { arg, testJobspec } from "./lib/common.js";
import { startDaemon, stopDaemon } from "./lib/daemon.js";

const CHROMIUM = ["/usr/lib/chromium/chromium", "/usr/bin/chromium"];

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

async function fill(client: DaemonClient, inactive: number, held: number): Promise<string[]> {
  for (let done = 0; done < inactive; done += 10_000) {
    await client.call("submit", { jobspecs: [testJobspec()], count: Math.min(10_000, inactive - done) });
    process.stderr.write(`web: ${Math.min(done + 10_000, inactive)} jobs submitted\n`);
  }
  for (;;) {
    const { jobs } = await client.call("list", { states: ["DEPEND", "PRIORITY", "SCHED", "RUN", "CLEANUP"], limit: 1 });
    if (jobs.length === 0) break;
    await new Promise((r) => setTimeout(r, 200));
  }
  const ids: string[] = [];
  for (let done = 0; done < held; done += 10_000) ids.push(...(await client.call("submit", { jobspecs: [testJobspec()], count: Math.min(10_000, held - done), urgency: 0 })).ids);
  return ids;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;

async function timed(f: () => Promise<unknown>): Promise<number> {
  const t0 = performance.now();
  await f();
  return Math.round((performance.now() - t0) * 10) / 10;
}

/** JS heap used after a full GC, in KiB. */
async function heapKib(page: Page): Promise<number> {
  const cdp = await page.context().newCDPSession(page);
  await cdp.send("HeapProfiler.collectGarbage");
  const { usedSize } = await cdp.send("Runtime.getHeapUsage");
  await cdp.detach();
  return Math.round(usedSize / 1024);
}

/** Counts the state changes /api/v1/events sends, as a second client beside the page. */
async function countEvents(base: string, token: string, signal: AbortSignal, onCount: (n: number) => void): Promise<void> {
  const r = await fetch(`${base}/api/v1/events?follow=1`, { headers: { authorization: `Bearer ${token}` }, signal });
  const reader = (r.body as ReadableStream<Uint8Array>).getReader();
  const dec = new TextDecoder();
  let buf = "";
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buf += dec.decode(value, { stream: true });
      let cut: number;
      while ((cut = buf.indexOf("\n\n")) >= 0) {
        const data = buf.slice(0, cut).split("\n").filter((l) => l.startsWith("data:")).map((l) => l.slice(5)).join("");
        buf = buf.slice(cut + 2);
        if (data) onCount((JSON.parse(data) as { changes?: unknown[] }).changes?.length ?? 0);
      }
    }
  } catch {
    // aborted at the end of the run
  }
}

/** Runs the bench; prints its JSON line. */
export async function main(args: string[]): Promise<void> {
  const inactive = Number(arg(args, "inactive", "90000"));
  const held = Number(arg(args, "held", "10000"));
  const rate = Number(arg(args, "rate", "1000"));
  const seconds = Number(arg(args, "seconds", "30"));
  const executablePath = CHROMIUM.find((p) => existsSync(p));
  if (!executablePath) throw new Error(`bench web: no chromium at ${CHROMIUM.join(", ")}`);
  const statedir = mkdtempSync(join(tmpdir(), "jobtap-bench-web-"));
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const env = { ...process.env, JOBTAP_SOCKET: join(statedir, "jobtap.sock") };
  const daemon = await startDaemon(statedir, env, `[daemon]\nhttp = "127.0.0.1:${port}"\nhttp-rate-limit = 100000\n[resources]\ncores = 64\n`);
  const client = connectDaemon(join(statedir, "jobtap.sock"));
  const browser = await chromium.launch({ executablePath, headless: true, args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"] });
  try {
    const heldIds = await fill(client, inactive, held);
    const page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
    await page.goto((await client.call("web.code", {})).url);
    await page.waitForSelector("#jobs tbody tr[data-id]");
    const fmp: number[] = [];
    for (let k = 0; k < 5; k++) fmp.push(await timed(async () => { await page.reload(); await page.waitForSelector("#jobs tbody tr[data-id]"); }));
    const jobView: number[] = [];
    for (const id of heldIds.slice(-5)) {
      jobView.push(await timed(async () => { await page.evaluate(`location.hash = ${JSON.stringify(`#/job/${id}`)}`); await page.waitForSelector("#timeline table"); }));
    }
    process.stderr.write(`web: queue ${fmp.join(", ")} ms; job ${jobView.join(", ")} ms\n`);
    await page.evaluate(`location.hash = "#/queue"`);
    await page.waitForSelector("#jobs tbody tr[data-id]");
    const live = await liveFeed(page, client, base, rate, seconds);
    process.stdout.write(`${JSON.stringify({ jobs_in_store: inactive + held, queue_fmp_ms: median(fmp), queue_fmp_all_ms: fmp, job_view_ms: median(jobView), job_view_all_ms: jobView, ...live })}\n`);
  } finally {
    await browser.close();
    client.close();
    await stopDaemon(daemon);
    rmSync(statedir, { recursive: true, force: true });
  }
}

/** Submits jobs for `seconds` at about `rate` state changes a second; measures what the page saw. */
async function liveFeed(page: Page, client: DaemonClient, base: string, rate: number, seconds: number) {
  const token = String(await page.evaluate(`sessionStorage.getItem("jobtap.token")`));
  const ctl = new AbortController();
  let sent = 0;
  void countEvents(base, token, ctl.signal, (n) => (sent += n));
  const heapStart = await heapKib(page);
  // Six state changes per job (DEPEND, PRIORITY, SCHED, RUN, CLEANUP, INACTIVE), in 10 batches a second.
  const perTick = Math.max(1, Math.round(rate / 6 / 10));
  const t0 = performance.now();
  let submitted = 0;
  while (performance.now() - t0 < seconds * 1000) {
    await client.call("submit", { jobspecs: [testJobspec()], count: perTick });
    submitted += perTick;
    const next = t0 + (submitted / perTick) * 100;
    await new Promise((r) => setTimeout(r, Math.max(0, next - performance.now())));
  }
  const elapsed = (performance.now() - t0) / 1000;
  await new Promise((r) => setTimeout(r, 2000));
  const seenText = (await page.textContent("#live")) ?? "";
  const seen = Number(/^(\d+) changes/.exec(seenText)?.[1] ?? 0);
  const heapEnd = await heapKib(page);
  const lagMs = await timed(() => page.evaluate("1"));
  ctl.abort();
  return { live_seconds: Math.round(elapsed * 10) / 10, jobs_submitted: submitted, events_sent: sent, events_per_s: Math.round(sent / elapsed), events_seen_by_page: seen, heap_start_kib: heapStart, heap_end_kib: heapEnd, page_roundtrip_ms_after: lagMs };
}
