/**
 * The rules of `.dependency-after` as pure functions (spec flux-jobtap §6.2): the scheme
 * table, the check of an antecedent that is already inactive at submit, and which waiting
 * dependents an antecedent's end releases.
 */
import type { JobArgs, JobResult } from "jobtap/plugin";

/** The dependency kinds, named by the description prefix Flux posts. */
export type AfterType = "after-start" | "after-finish" | "after-success" | "after-failure" | "after-except";

/** Scheme → kind. `after` is the deprecated spelling of `afterstart`. */
export const SCHEMES: Readonly<Record<string, AfterType>> = {
  after: "after-start",
  afterstart: "after-start",
  afterany: "after-finish",
  afterok: "after-success",
  afternotok: "after-failure",
  afterexcept: "after-except",
};

/** What is known of an antecedent that has ended. */
export interface Ending {
  /** It was allocated resources (an `alloc` event was posted). */
  allocated: boolean;
  started: boolean;
  result: JobResult | undefined;
  /** Its end event was an exception. */
  exception: boolean;
}

/** Reads an antecedent's ending from its args and the two event checks. */
export function endingOf(args: JobArgs, allocated: boolean, started: boolean, result: JobResult | undefined): Ending {
  return { allocated, started, result, exception: args.end_event?.name === "exception" };
}

/**
 * An antecedent already INACTIVE at submit: undefined if the dependency is satisfied (the
 * plugin adds then removes it), else the rejection message.
 */
export function inactiveAtSubmit(scheme: string, type: AfterType, value: string, end: Ending): string | undefined {
  if (type === "after-finish") return undefined;
  if (!end.allocated) return `${scheme}: job ${value} never started`;
  switch (type) {
    case "after-start":
      return end.started ? undefined : `${scheme}: job ${value} never started`;
    case "after-success":
      return end.result === "COMPLETED" ? undefined : `${scheme}: job ${value} failed or was canceled`;
    case "after-failure":
      return end.result !== "COMPLETED" ? undefined : `${scheme}: job ${value} succeeded`;
    case "after-except":
      return end.exception ? undefined : `${scheme}: job ${value}: no exception`;
  }
}

/**
 * When an antecedent becomes INACTIVE: does a waiting dependency of this kind get released?
 * `undefined` means it can never be satisfied; the string is the fatal exception's reason.
 */
export function releasedAtEnd(type: AfterType, end: Ending): true | "never started" | "can never be satisfied" {
  if (type === "after-finish") return true;
  // #6555: a job that was never allocated satisfies nothing but afterany.
  if (!end.allocated) return "never started";
  if (end.result === "COMPLETED") return type === "after-success" ? true : "can never be satisfied";
  if (type === "after-failure") return true;
  if (type === "after-except" && end.exception) return true;
  return "can never be satisfied";
}
