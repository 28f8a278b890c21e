/**
 * `jobtap/plugin`: what plugin authors import — the plugin context and handler types, and
 * helpers for testing a plugin. Names are listed explicitly.
 */
export { PRIORITY_UNAVAILABLE } from "./manager/port.js";
export type { EventEntry, Jobspec, JobArgs, StackOut } from "./manager/port.js";
export type { JobId } from "./manager/ids.js";
export type { State, JobResult } from "./manager/states.js";
