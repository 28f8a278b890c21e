/**
 * Per-plugin storage behind the context: job aux values with destructors (Flux's
 * job_aux_set/get/delete) and the plugin's persistent state.
 */
import type { JobId } from "../manager/base/ids.js";
import type { ContextHost, PluginState } from "./context.js";
import { msg } from "./dispatch.js";
import type { PluginRecord } from "./record.js";

/** Sets a value; replacing a different value runs the old destructor. */
export function auxSet(
  host: ContextHost,
  rec: PluginRecord,
  id: JobId,
  key: string,
  value: unknown,
  destructor: ((v: unknown) => void) | undefined,
): void {
  let perJob = rec.aux.get(id);
  if (perJob === undefined) rec.aux.set(id, (perJob = new Map()));
  const old = perJob.get(key);
  perJob.set(key, { value, destructor });
  if (old !== undefined && old.value !== value) runDestructor(host, rec, old.value, old.destructor);
}

/** Deletes a value, running its destructor; a missing key is not an error. */
export function auxDelete(host: ContextHost, rec: PluginRecord, id: JobId, key: string): void {
  const perJob = rec.aux.get(id);
  const old = perJob?.get(key);
  if (perJob === undefined || old === undefined) return;
  perJob.delete(key);
  if (perJob.size === 0) rec.aux.delete(id);
  runDestructor(host, rec, old.value, old.destructor);
}

function runDestructor(
  host: ContextHost,
  rec: PluginRecord,
  value: unknown,
  destructor: ((v: unknown) => void) | undefined,
): void {
  if (destructor === undefined) return;
  try {
    destructor(value);
  } catch (e) {
    host.report("warn", `${rec.name}: aux destructor: ${msg(e)}`, rec.name);
  }
}

/** The plugin's view of the store's per-plugin state (the host's memory when none). */
export function pluginState(host: ContextHost, rec: PluginRecord, live: (w: string) => void): PluginState {
  const store = () => host.stateStore();
  return {
    get: <T>(key: string) => store().get(rec.name, key) as T | undefined,
    set(key, value) {
      live("state.set");
      store().set(rec.name, key, value);
    },
    delete(key) {
      live("state.delete");
      store().delete(rec.name, key);
    },
    keys: () => store().keys(rec.name),
  };
}
