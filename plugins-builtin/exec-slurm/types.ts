/**
 * The executor contract as exec-slurm uses it. TEMPORARY mirror of the public contract that
 * `jobtap/plugin` is about to export (ExecReport, ExecJob, Executor, waitStatus); replaced by
 * imports from "jobtap/plugin" once that lands.
 */
import type { JobId, Jobspec } from "jobtap/plugin";

export interface ExecReport {
  start(id: JobId): void;
  finish(id: JobId, status: number): void;
  release(id: JobId): void;
  exception(id: JobId, type: string, note: string, severity?: number): void;
  save(id: JobId, data: Record<string, unknown>): void;
  log(level: "info" | "error", message: string): void;
}

export interface ExecJob {
  readonly id: JobId;
  readonly userid: number;
  readonly jobspec: Jobspec;
  readonly R: Record<string, unknown> | undefined;
  readonly duration: number;
  readonly startedAt?: number;
  readonly saved: Readonly<Record<string, unknown>>;
}

export interface Executor {
  start(job: ExecJob, report: ExecReport): void | Promise<void>;
  kill(id: JobId): void;
  reattach(job: ExecJob, report: ExecReport): void | Promise<void>;
  updateExpiration?(id: JobId, expiration: number): void;
  close?(): void;
}

export const waitStatus = {
  exited: (code: number): number => (code & 0xff) << 8,
  signaled: (signal: number): number => signal & 0x7f,
};
