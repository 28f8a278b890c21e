/**
 * The in-memory job store: same contract as SQLite, nothing survives the process. Used by
 * tests and by instances that do not need restart.
 */
import type { JobId } from "../base/ids.js";
import type { JobStore, StoreBatch, StoredJobText } from "./types.js";

/** A JobStore in memory (tests, or no state directory). */
export class MemoryStore implements JobStore {
  readonly kind = "memory";
  private readonly jobs = new Map<JobId, { jobspec: string; eventlog: string; exec?: string }>();
  private readonly summaries = new Map<JobId, string>();
  private readonly lost: Array<{ id: JobId; reason: string }> = [];
  private readonly kv = new Map<string, Map<string, string>>();
  private readonly createdAt: number;

  constructor(epochMs = Date.now()) {
    this.createdAt = epochMs;
  }

  epoch(): number {
    return this.createdAt;
  }

  commit(batch: StoreBatch): void {
    for (const j of batch.newJobs) this.jobs.set(j.id, { jobspec: j.jobspec, eventlog: "" });
    for (const [id, lines] of batch.appends) {
      const job = this.jobs.get(id);
      if (job) job.eventlog += lines;
    }
    for (const [id, lines] of batch.execAppends ?? []) {
      const job = this.jobs.get(id);
      if (job) job.exec = (job.exec ?? "") + lines;
    }
    for (const s of batch.inactive ?? []) if (this.jobs.has(s.id)) this.summaries.set(s.id, s.summary);
    for (const id of batch.purged) {
      this.jobs.delete(id);
      this.summaries.delete(id);
    }
  }

  *loadAll(): Iterable<StoredJobText> {
    for (const id of this.ids()) yield { id, ...this.jobs.get(id)! };
  }

  *loadSummaries(): Iterable<{ id: JobId; summary: string }> {
    for (const id of this.ids()) {
      const summary = this.summaries.get(id);
      if (summary !== undefined) yield { id, summary };
    }
  }

  *loadUnsummarized(): Iterable<StoredJobText> {
    for (const id of this.ids()) if (!this.summaries.has(id)) yield { id, ...this.jobs.get(id)! };
  }

  summaryPage(after: JobId | undefined, limit: number): Array<{ id: JobId; summary: string }> {
    const ids = [...this.summaries.keys()].filter((id) => after === undefined || id > after).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    return ids.slice(0, limit).map((id) => ({ id, summary: this.summaries.get(id)! }));
  }

  summaryText(id: JobId): string | undefined {
    return this.summaries.get(id);
  }

  lastJobId(): JobId | undefined {
    let max: JobId | undefined;
    for (const id of this.jobs.keys()) if (max === undefined || id > max) max = id;
    return max;
  }

  private ids(): JobId[] {
    return [...this.jobs.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  }

  load(id: JobId): StoredJobText | undefined {
    const j = this.jobs.get(id);
    return j && { id, ...j };
  }

  setAside(id: JobId, reason: string): void {
    this.jobs.delete(id);
    this.summaries.delete(id);
    this.lost.push({ id, reason });
  }

  lostAndFound(): Array<{ id: JobId; reason: string }> {
    return [...this.lost];
  }

  pluginGet(plugin: string, key: string): string | undefined {
    return this.kv.get(plugin)?.get(key);
  }

  pluginSet(plugin: string, key: string, value: string): void {
    let m = this.kv.get(plugin);
    if (!m) this.kv.set(plugin, (m = new Map()));
    m.set(key, value);
  }

  pluginDelete(plugin: string, key: string): void {
    this.kv.get(plugin)?.delete(key);
  }

  pluginKeys(plugin: string): string[] {
    return [...(this.kv.get(plugin)?.keys() ?? [])];
  }

  close(): void {}
}
